/**
 * The contenders, as factories a scenario lists: Switchyard in any
 * configuration, Hive Gateway (with or without its Rust query planner
 * runtime), Apollo Gateway, the floor and the ceiling.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../harness/build.js';
import type { Contender, Launch, LaunchContext, Sharing } from '../harness/scenario.js';

/** The Node flags of a script's `#!/usr/bin/env -S node <flags>` line; none for a plain `node` shebang. */
function shebangNodeFlags(script: string): string[] {
  const first = readFileSync(script, 'utf8').split('\n', 1)[0] ?? '';
  const match = /^#!\/usr\/bin\/env -S node\s+(.*)$/.exec(first);
  return match ? match[1]!.trim().split(/\s+/) : [];
}

function packageJson(packageName: string): string {
  return join(REPO_ROOT, 'node_modules', ...packageName.split('/'), 'package.json');
}

function missing(packageName: string): string | undefined {
  return existsSync(packageJson(packageName)) ? undefined : `${packageName} is not installed (npm install)`;
}

function packageVersion(packageName: string): string {
  try {
    return (JSON.parse(readFileSync(packageJson(packageName), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/** Options of a Switchyard contender. */
export interface SwitchyardOptions {
  /** Default `switchyard`. */
  readonly id?: string;
  /** Default `Switchyard`. */
  readonly label?: string;
  /** Default `on`; `off` sets `ENGINE_ENABLE_SINGLE_FLIGHT=false`. */
  readonly sharing?: Sharing;
  /** Extra environment (config overrides such as `LOG_LEVEL`). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * A `router.config.yaml` (as an object; `version` is added) written to the
   * contender's folder and passed with `-c`; `--supergraph` still names the
   * graph. Default: none (embedded defaults).
   */
  readonly config?: Readonly<Record<string, unknown>>;
  /** Extra CLI arguments, e.g. `['--workers', '2']`. */
  readonly args?: readonly string[];
  /** Id of the contender the ratio column compares with. */
  readonly baseline?: string;
  /** `none` leaves it unpinned (several workers); default `core`. */
  readonly pin?: 'core' | 'none';
  /**
   * The graph file passed with `--supergraph` (a supergraph SDL or an
   * execution config), prepared in `launch`; default the scenario's
   * supergraph file.
   */
  readonly graphFile?: (context: LaunchContext) => string | Promise<string>;
  /** A problem in its log once it answers (e.g. a feature that did not switch on), or undefined. */
  readonly checkLog?: (log: string) => string | undefined;
}

/** Switchyard's CLI: `switchyard router --supergraph <file> --listen-addr 127.0.0.1:<port>`. */
export function switchyard(options: SwitchyardOptions = {}): Contender {
  const sharing = options.sharing ?? 'on';
  return {
    id: options.id ?? 'switchyard',
    label: options.label ?? 'Switchyard',
    role: 'router',
    sharing,
    baseline: options.baseline,
    pin: options.pin,
    checkLog: options.checkLog,
    async launch(context: LaunchContext): Promise<Launch> {
      const graph = options.graphFile ? await options.graphFile(context) : context.supergraphFile;
      // Node flags as the `switchyard` bin's shebang gives them: how users start it.
      const args = [
        ...shebangNodeFlags(context.programs.switchyardCli),
        context.programs.switchyardCli,
        'router',
        '--supergraph',
        graph,
        '--listen-addr',
        `127.0.0.1:${context.port}`,
      ];
      if (options.config) {
        const file = join(context.dir, 'router.config.yaml');
        // JSON is YAML; the router reads it as its config file.
        writeFileSync(file, JSON.stringify({ version: '1', ...options.config }, null, 2));
        args.push('-c', file);
      }
      args.push(...(options.args ?? []));
      const env: Record<string, string> = { ...options.env };
      if (sharing === 'off') env.ENGINE_ENABLE_SINGLE_FLIGHT = 'false';
      return { command: process.execPath, args, env };
    },
  };
}

/**
 * Hive Gateway's CLI (`hive-gateway supergraph`), one process (`--fork 1`),
 * on loopback. Its HTTP transport shares identical in-flight subgraph
 * queries by default. `rust` adds `--hive-router-runtime` (the Rust query
 * planner from @graphql-hive/router-runtime).
 */
export function hiveGateway(options: { rust: boolean; baseline?: string }): Contender {
  const version = packageVersion('@graphql-hive/gateway');
  return {
    id: options.rust ? 'hive-gateway-rust' : 'hive-gateway',
    label: options.rust ? `Hive Gateway ${version} (Rust planner)` : `Hive Gateway ${version}`,
    role: 'router',
    sharing: 'on',
    baseline: options.baseline,
    unavailable: () => missing('@graphql-hive/gateway') ?? (options.rust ? missing('@graphql-hive/router-runtime') : undefined),
    launch(context: LaunchContext): Launch {
      const bin = join(REPO_ROOT, 'node_modules', '@graphql-hive', 'gateway', 'dist', 'bin.js');
      const args = [bin, 'supergraph', context.supergraphFile, '--host', '127.0.0.1', '--port', String(context.port), '--fork', '1'];
      if (options.rust) args.push('--hive-router-runtime');
      return { command: process.execPath, args };
    },
    // It falls back to its default runtime with only a warning when the package does not load.
    checkLog: (log) =>
      options.rust && (!log.includes('Using Hive Router Runtime') || log.includes('Could not load the @graphql-hive/router-runtime'))
        ? 'the Hive Router runtime is not in use (see its log)'
        : undefined,
  };
}

/** Apollo Gateway with @apollo/server's standalone server (bench/servers/apollo-gateway.ts); it does not share fetches. */
export function apolloGateway(options: { baseline?: string } = {}): Contender {
  return {
    id: 'apollo-gateway',
    label: `Apollo Gateway ${packageVersion('@apollo/gateway')}`,
    role: 'router',
    sharing: 'off',
    baseline: options.baseline,
    unavailable: () => missing('@apollo/gateway') ?? missing('@apollo/server'),
    launch: (context) => ({
      command: process.execPath,
      args: [context.programs.servers['apollo-gateway'], '--port', String(context.port), '--supergraph', context.supergraphFile],
    }),
  };
}

/** The hand-written router of bench/servers/floor.ts: the minimal plan, nothing else. */
export function floor(options: { sharing: Sharing; baseline?: string }): Contender {
  return {
    id: options.sharing === 'on' ? 'floor-sharing' : 'floor',
    label: 'Floor: hand-written, minimal fetches',
    role: 'floor',
    sharing: options.sharing,
    baseline: options.baseline,
    launch(context: LaunchContext): Launch {
      const args = [context.programs.servers.floor, '--port', String(context.port)];
      for (const [name, url] of Object.entries(context.subgraphUrls)) args.push(`--${name}`, url);
      if (options.sharing === 'on') args.push('--sharing');
      return { command: process.execPath, args };
    },
  };
}

/** The static server of bench/servers/ceiling.ts: the expected bytes, no fetches. */
export function ceiling(options: { baseline?: string } = {}): Contender {
  return {
    id: 'ceiling',
    label: 'Ceiling: static response',
    role: 'ceiling',
    sharing: 'n/a',
    baseline: options.baseline,
    launch: (context) => ({
      command: process.execPath,
      args: [context.programs.servers.ceiling, '--port', String(context.port), '--response', context.expectedFile],
    }),
  };
}

const TRANSPORT_FLOORS = {
  http: 'one HTTP call (undici) + JSON parse',
  grpc: 'one gRPC call (@grpc/grpc-js) + protobufjs decode',
  h2: 'one gRPC call on bare node:http2 + protobufjs decode',
} as const;

/**
 * The transport floor of bench/servers/transport-floor.ts: one call to the
 * projects subgraph per request, over HTTP (`http`, the `projects` URL) or
 * gRPC (`grpc` with @grpc/grpc-js, `h2` on bare node:http2; the
 * `projects-grpc` target), and nothing else.
 */
export function transportFloor(options: { transport: keyof typeof TRANSPORT_FLOORS; baseline?: string }): Contender {
  const subgraph = options.transport === 'http' ? 'projects' : 'projects-grpc';
  return {
    id: `transport-floor-${options.transport}`,
    label: `Floor: ${TRANSPORT_FLOORS[options.transport]}`,
    role: 'floor',
    sharing: 'off',
    baseline: options.baseline,
    launch(context: LaunchContext): Launch {
      const url = context.subgraphUrls[subgraph];
      if (!url) throw new Error(`the subgraph server did not report "${subgraph}"`);
      return { command: process.execPath, args: [context.programs.servers['transport-floor'], '--port', String(context.port), `--${options.transport}`, url] };
    },
  };
}
