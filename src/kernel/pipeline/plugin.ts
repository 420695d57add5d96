import type { Plugin as EnvelopPlugin } from '@envelop/core';
import type { z } from 'zod';
import type { ConfigSection } from '../config/config-section.js';
import { parseConfigValue } from '../config/load-config.js';
import type { CoreConfig } from '../config/core-schema.js';
import type { Transport } from '../fetch/subgraph-types.js';
import type { SubgraphConfig } from '../graph/loaded-graph.js';
import type { GraphInfo } from '../graph/loaded-graph.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ClusterBus } from '../cluster/cluster-bus.js';
import { registerErrors, type ErrorCatalogue } from '../error-catalogue.js';
import { RouterError } from '../errors.js';
import type { PluginListenOptions, SideListener } from '../listen/side-listener.js';
import type { Hooks, MaybePromise } from './hooks.js';
import type { PluginHttp } from './http-routes.js';
import type { OperationResponse } from './stages.js';

/** What `router.execute` takes: an operation from a side listener (Connect, tests). */
export interface ExecuteRequest {
  readonly query?: string;
  readonly operationName?: string;
  readonly variables?: Readonly<Record<string, unknown>>;
  readonly extensions?: Readonly<Record<string, unknown>>;
  /** Id of a persisted document instead of `query` (see `OperationRequest.documentId`). Default: none. */
  readonly documentId?: string;
  /** Request headers, any case. Default: none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default: `POST`. */
  readonly method?: 'GET' | 'POST';
  /** Default: the `graphql-client-name` header. */
  readonly clientName?: string;
  /** Listener name. Default: `execute`. */
  readonly origin?: string;
  readonly signal?: AbortSignal;
}

/** The router as plugins see it. */
export interface RouterHandle {
  /** Runs an operation from the request stage onwards, with every plugin's hooks. */
  execute(request: ExecuteRequest): Promise<OperationResponse>;
  /** The graph being served, once one is loaded. */
  readonly graph: GraphInfo | undefined;
  /** Called with each newly loaded graph; returns an unsubscribe function. */
  onGraphChange(listener: (graph: GraphInfo) => void): () => void;
}

/** What a plugin's `setup` receives. */
export interface PluginContext {
  /** The plugin's name. */
  readonly name: string;
  /** Logger carrying `{ plugin: name }`. */
  readonly log: Logger;
  /** The router's core configuration (read-only). */
  readonly config: CoreConfig;
  readonly router: RouterHandle;
  /** The router's metrics (Prometheus endpoint, OTLP export); no-ops when `metrics.enabled` is false and no plugin `needsMetrics`. */
  readonly metrics: Metrics;
  /** Messages to the same plugin in the other worker processes (`--workers`); a no-op with one process. */
  readonly cluster: ClusterBus;
  /**
   * Opens a side listener (a port of the plugin's own) the way the built-in
   * ones are: address parsed (`host:port`, `[::1]:port`, `:port` = loopback),
   * the listener guard applied, a bad address or failed bind rejected as a
   * `ListenError` naming the plugin and `configKey`, a warning when bound
   * beyond loopback. Closed gracefully after the plugin's `stop` (or when
   * setup fails); `close()` earlier is fine. Under `--workers` every worker
   * opens it and node:cluster shares the one port among them.
   */
  listen(options: PluginListenOptions): Promise<SideListener>;
}

/** Makes a transport for one subgraph of a kind (`grpc`, ...). */
export type TransportFactory = (subgraph: SubgraphConfig) => Transport;

/** What `setup` returns: the plugin's hooks and resources. */
export interface PluginInstance {
  /** Stage hooks. */
  readonly hooks?: Hooks;
  /** Envelop plugins (`onParse`, `onValidate`, `onContextBuilding`, `onExecute`). */
  readonly envelop?: readonly EnvelopPlugin[];
  /** Transports by subgraph kind. */
  readonly transports?: Readonly<Record<string, TransportFactory>>;
  /** Routes on the main listener beside `/graphql`, and a step before `/graphql` reads a request (http-routes.ts). */
  readonly http?: PluginHttp;
  /** Closes what setup opened; called in reverse registration order. */
  stop?(): MaybePromise<void>;
}

/** A plugin instance as `createRouter` takes it. */
export interface SwitchyardPlugin {
  /** Unique, kebab-case; names its logs and errors. */
  readonly name: string;
  /** Plugins that must be registered before this one. */
  readonly dependsOn?: readonly string[];
  /** Plugins whose exports this one uses when they are registered (their request state, say); startup does not require them. */
  readonly optionalDependsOn?: readonly string[];
  /** The plugin reads the router's metrics (`metrics.collect()`, to export them): they are recorded even when the Prometheus endpoint is off. */
  readonly needsMetrics?: boolean;
  setup(context: PluginContext): MaybePromise<PluginInstance | void>;
}

/** A plugin description for `definePlugin`. */
export interface PluginDefinition<Schema extends z.ZodType> {
  readonly name: string;
  /**
   * The config section the options come from (`defineConfigSection`; the
   * built-ins declare theirs in `config.ts`): its key prefixes option errors
   * (`profiler.server_address: ...`). Default: none (options only, as
   * third-party plugins read them from `plugins[].options`).
   */
  readonly config?: ConfigSection;
  /** Section key without a declaration; `config.key` wins. Default: none. */
  readonly configKey?: string;
  /** Schema of the options (the section's schema, or one that adds code-only options); validated when the factory is called. */
  readonly options: Schema;
  readonly dependsOn?: readonly string[];
  readonly optionalDependsOn?: readonly string[];
  /** Whether, with these options, the plugin reads the router's metrics (see `SwitchyardPlugin.needsMetrics`). */
  needsMetrics?(options: z.output<Schema>): boolean;
  /**
   * The plugin's own error codes, declared when `definePlugin` runs: a
   * `RouterError` of one of them takes its `status` (and `message`) from here
   * when the throw names none, and docs can list them. Name them for the
   * compiler too, by augmenting `ErrorCodes` (docs/plugins.md). Default: none.
   */
  readonly errors?: ErrorCatalogue;
  setup(context: PluginContext, options: z.output<Schema>): MaybePromise<PluginInstance | void>;
}

/** `use<Name>(options)`: validates the options and returns the plugin. */
export interface PluginFactory<Schema extends z.ZodType> {
  (options?: z.input<Schema>): SwitchyardPlugin;
  readonly pluginName: string;
  readonly configKey: string | undefined;
  readonly optionsSchema: Schema;
  /** Like calling the factory; errors name the key path `at` (for example `plugins[0].options`). */
  configure(options: unknown, at: ReadonlyArray<string | number>): SwitchyardPlugin;
  /** Builds the plugin from options that were already validated (the config loader's output). */
  fromParsed(options: z.output<Schema>): SwitchyardPlugin;
}

/**
 * Defines a plugin with a validated options schema. Bad options throw a
 * `CONFIG_INVALID` error naming the plugin and the key path.
 */
export function definePlugin<Schema extends z.ZodType>(definition: PluginDefinition<Schema>): PluginFactory<Schema> {
  const refused = definition.errors && registerErrors(definition.name, definition.errors);
  if (refused) throw new RouterError(refused.code, `[${definition.name}] ${refused.message}`);
  const fromParsed = (parsed: z.output<Schema>): SwitchyardPlugin => ({
    name: definition.name,
    dependsOn: definition.dependsOn,
    optionalDependsOn: definition.optionalDependsOn,
    needsMetrics: definition.needsMetrics?.(parsed),
    setup: (context) => definition.setup(context, parsed),
  });
  const configure = (options: unknown, at: ReadonlyArray<string | number>): SwitchyardPlugin =>
    fromParsed(parseConfigValue(definition.options, options ?? {}, { plugin: definition.name, at: [...at] }));
  const configKey = definition.config?.key ?? definition.configKey;
  const factory = (options?: z.input<Schema>): SwitchyardPlugin => configure(options, configKey ? [configKey] : []);
  return Object.assign(factory, {
    pluginName: definition.name,
    configKey,
    optionsSchema: definition.options,
    configure,
    fromParsed,
  });
}
