import type { Plugin as EnvelopPlugin } from '@envelop/core';
import { RouterError } from '../errors.js';
import { startSideListener, type SideListener } from '../listen/side-listener.js';
import type { Logger } from '../logger.js';
import { HOOK_NAMES, type StageHook } from '../pipeline/hooks.js';
import type { PluginContext, PluginInstance, SwitchyardPlugin, TransportFactory } from '../pipeline/plugin.js';
import type { RegisteredHook } from '../pipeline/stage-runner.js';
import { STAGE_NAMES, type StageName } from '../pipeline/stages.js';
import { HttpRoutes } from './http-routes.js';

const PLUGIN_NAME = /^[a-z0-9][a-z0-9-]*(\/[a-z0-9][a-z0-9-]*)?$|^@[a-z0-9-]+\/[a-z0-9][a-z0-9-]*$/;

/** Hooks of every stage, in registration order; a stage nobody hooks has an empty list. */
export type StageHooks = { readonly [S in StageName]: readonly RegisteredHook<S>[] };

/** The context the router gives; the host adds `listen`, whose listeners it owns. */
export type RouterPluginContext = Omit<PluginContext, 'listen'>;

/** Side listeners one plugin opened through `ctx.listen`, closed after its stop. */
class PluginListeners {
  private readonly open = new Set<SideListener>();
  private closed = false;

  constructor(private readonly context: RouterPluginContext) {}

  readonly listen: PluginContext['listen'] = async (options) => {
    if (this.closed) throw new RouterError('PLUGIN_ERROR', `[${this.context.name}] cannot open the ${options.name} listener: the plugin is stopped`);
    const listener = await startSideListener({ ...options, plugin: this.context.name, log: this.context.log });
    if (this.closed) {
      // Bound while setup failed or the plugin stopped: nobody would close it.
      await listener.close(0);
      throw new RouterError('PLUGIN_ERROR', `[${this.context.name}] the ${options.name} listener was closed: the plugin stopped while it was opening`);
    }
    this.open.add(listener);
    return listener;
  };

  /** Closes every listener still open (closing one twice is harmless); a failure is logged, never thrown. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.open].map((listener) => listener.close().catch((error: unknown) => this.context.log.warn({ err: error, listener: listener.name }, 'Closing a listener failed'))),
    );
    this.open.clear();
  }
}

/**
 * Holds the router's plugins: checks names and dependencies at
 * registration, runs `setup` in order and `stop` in reverse, and keeps the
 * hooks of each stage in one list so the stage runner reads them directly.
 * Internal plugins (the kernel's built-in features, src/kernel/builtins/)
 * come first in every list and are left out of `names`.
 */
export class PluginHost {
  private readonly plugins: readonly SwitchyardPlugin[];
  private readonly internal: readonly SwitchyardPlugin[];
  private readonly instances: Array<{ name: string; instance: PluginInstance; log: Logger; listeners: PluginListeners }> = [];
  private hooks: { [S in StageName]: RegisteredHook<S>[] } = emptyHooks();
  private routes = new HttpRoutes([]);

  constructor(plugins: readonly SwitchyardPlugin[], internal: readonly SwitchyardPlugin[] = []) {
    checkRegistration(plugins);
    this.plugins = plugins;
    this.internal = internal;
  }

  /** The user's plugins, in registration order (internal ones left out). */
  get names(): string[] {
    return this.plugins.map((p) => p.name);
  }

  /** A plugin reads the router's metrics: record them even without the Prometheus endpoint. */
  get needsMetrics(): boolean {
    return this.plugins.some((p) => p.needsMetrics === true);
  }

  get stageHooks(): StageHooks {
    return this.hooks;
  }

  /** The plugins' routes and `/graphql` steps on the main listener (internal plugins' first). */
  get httpRoutes(): HttpRoutes {
    return this.routes;
  }

  /** Envelop plugins, in plugin registration order. */
  get envelopPlugins(): EnvelopPlugin[] {
    return this.instances.flatMap(({ instance }) => [...(instance.envelop ?? [])]);
  }

  /** Transport factories by subgraph kind; a later plugin cannot silently replace an earlier one. */
  get transports(): ReadonlyMap<string, TransportFactory> {
    const map = new Map<string, TransportFactory>();
    for (const { name, instance } of this.instances) {
      for (const [kind, factory] of Object.entries(instance.transports ?? {})) {
        if (map.has(kind)) throw new RouterError('PLUGIN_DUPLICATE', `[${name}] a transport for subgraph kind "${kind}" is already registered`);
        map.set(kind, factory);
      }
    }
    return map;
  }

  /** Runs every plugin's setup in registration order; on failure stops those already set up. */
  async setup(contextFor: (plugin: SwitchyardPlugin) => RouterPluginContext): Promise<void> {
    for (const plugin of [...this.internal, ...this.plugins]) {
      const base = contextFor(plugin);
      const listeners = new PluginListeners(base);
      const context: PluginContext = { ...base, listen: listeners.listen };
      let instance: PluginInstance | void;
      try {
        instance = await plugin.setup(context);
      } catch (error) {
        await listeners.close();
        await this.stop().catch(() => undefined);
        if (error instanceof RouterError) throw error;
        throw new RouterError('PLUGIN_ERROR', `[${plugin.name}] setup failed: ${(error as Error)?.message ?? String(error)}`, {
          plugin: plugin.name,
          cause: error,
        });
      }
      this.instances.push({ name: plugin.name, instance: instance ?? {}, log: context.log, listeners });
    }
    try {
      this.routes = new HttpRoutes(this.instances);
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
    this.hooks = collectHooks(this.instances);
  }

  /** Stops plugins in reverse order; every stop runs even when one fails. */
  async stop(): Promise<void> {
    const failures: unknown[] = [];
    while (this.instances.length > 0) {
      const { name, instance, log, listeners } = this.instances.pop()!;
      try {
        await instance.stop?.();
      } catch (error) {
        log.error({ err: error }, `[${name}] stop failed`);
        failures.push(error);
      }
      // After stop: a plugin may still answer on its listener while it stops.
      await listeners.close();
    }
    this.hooks = emptyHooks();
    if (failures.length > 0) throw failures[0];
  }
}

function emptyHooks(): { [S in StageName]: RegisteredHook<S>[] } {
  return { request: [], parse: [], validate: [], plan: [], fetch: [], merge: [], respond: [] };
}

function collectHooks(instances: ReadonlyArray<{ name: string; instance: PluginInstance; log: Logger }>): {
  [S in StageName]: RegisteredHook<S>[];
} {
  const hooks = emptyHooks();
  for (const { name, instance, log } of instances) {
    for (const stage of STAGE_NAMES) {
      const hook = instance.hooks?.[HOOK_NAMES[stage]] as StageHook<typeof stage> | undefined;
      if (hook) (hooks[stage] as RegisteredHook<typeof stage>[]).push({ plugin: name, hook, log });
    }
  }
  return hooks;
}

function checkRegistration(plugins: readonly SwitchyardPlugin[]): void {
  const seen = new Set<string>();
  for (const plugin of plugins) {
    if (!plugin || typeof plugin.name !== 'string' || typeof plugin.setup !== 'function') {
      throw new RouterError('PLUGIN_ERROR', 'a plugin must be an object with a name and a setup function (did you pass the factory instead of calling it?)');
    }
    if (!PLUGIN_NAME.test(plugin.name)) {
      throw new RouterError('PLUGIN_ERROR', `plugin name "${plugin.name}" must be kebab-case (letters, digits, dashes)`);
    }
    if (seen.has(plugin.name)) {
      throw new RouterError('PLUGIN_DUPLICATE', `two plugins are named "${plugin.name}"; plugin names must be unique`);
    }
    for (const dependency of plugin.dependsOn ?? []) {
      if (!seen.has(dependency)) {
        const later = plugins.some((p) => p.name === dependency);
        throw new RouterError(
          'PLUGIN_DEPENDENCY_MISSING',
          later
            ? `plugin "${plugin.name}" depends on "${dependency}", which must be registered before it`
            : `plugin "${plugin.name}" depends on "${dependency}", which is not registered`,
        );
      }
    }
    seen.add(plugin.name);
  }
}
