import cluster from 'node:cluster';
import type { Agent } from 'undici';
import { coreConfigSchema, type CoreConfig, type CoreConfigInput } from '../config/core-schema.js';
import { parseConfigValue, type LoadedConfig } from '../config/load-config.js';
import { RouterError } from '../errors.js';
import { createSubgraphAgent } from '../fetch/http-transport.js';
import { SubgraphFetcher } from '../fetch/subgraph-fetcher.js';
import type { GraphInfo, LoadedGraph } from '../graph/loaded-graph.js';
import { createLogger, type Logger } from '../logger.js';
import { createPrometheusMetrics, noopMetrics, type Metrics } from '../metrics/metrics.js';
import { startMetricsServer } from '../metrics/metrics-server.js';
import { createClusterBus } from '../cluster/cluster-bus.js';
import { builtinPlugins } from '../builtins/index.js';
import type { ExecuteRequest, RouterHandle, SwitchyardPlugin } from '../pipeline/plugin.js';
import type { OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { DocumentCache, directEngine, envelopEngine, type ExecutionEngine } from './execution-engine.js';
import { GraphManager, type GraphInput } from './graph-manager.js';
import { HttpServer, type ListenInfo } from './http-server.js';
import { runOperation, type OperationEnvironment } from './operation-runner.js';
import { startOperation } from '../subscriptions/subscription-runner.js';
import { LiveSubscriptions } from '../subscriptions/live-subscriptions.js';
import { attachWebSocketEndpoint, type WebSocketEndpoint } from '../subscriptions/websocket-server.js';
import { createStreamingHttpEndpoint } from '../subscriptions/streaming-http.js';
import { CorsPolicy } from './cors.js';
import { PluginHost } from './plugin-host.js';
import { operationRequestOf } from './operation-request.js';

/** Options of `createRouter`. */
export interface CreateRouterOptions {
  /**
   * Core configuration, in the file's shape (durations as `"30s"`), or a
   * config already loaded with `loadConfigFile`. Default: every default.
   */
  readonly config?: (Omit<CoreConfigInput, 'version'> & { version?: '1' }) | LoadedConfig;
  /** Plugin instances, in the order their hooks run. */
  readonly plugins?: readonly SwitchyardPlugin[];
  /**
   * The graph: a path or URL of an execution config or supergraph SDL, or a
   * graph source object. Default: `execution_config.file.path`.
   */
  readonly graph?: GraphInput;
  /** Default: a JSON logger at `log_level` on standard output. */
  readonly logger?: Logger;
}

/** A running router. */
export interface Router extends RouterHandle, AsyncDisposable {
  readonly config: CoreConfig;
  readonly log: Logger;
  /** Plugin names in registration order. */
  readonly plugins: readonly string[];
  /** Serves HTTP on `listen_addr` (or the address given). */
  listen(address?: string): Promise<ListenInfo>;
  /** Answers one fetch-style request in-process (tests; no socket). */
  handle(request: Request): Promise<Response>;
  /** Loads a new graph; on failure keeps serving the current one and throws. */
  loadGraph(input: GraphInput): Promise<GraphInfo>;
  /** URL of the Prometheus listener (`metrics.enabled`), once listening. */
  readonly metricsUrl: string | undefined;
  /** Stops accepting, finishes in-flight requests, stops plugins in reverse order. */
  close(): Promise<void>;
}

/**
 * The one entry: a router from a configuration and a list of plugins.
 * Plugins are checked (unique names, dependencies registered first) and set
 * up in order; the graph is loaded before this resolves.
 */
export async function createRouter(options: CreateRouterOptions = {}): Promise<Router> {
  const config = resolveConfig(options.config);
  const log = options.logger ?? createLogger({ level: process.env.LOG_LEVEL ?? config.log_level });
  const router = new SwitchyardRouter(config, options.plugins ?? [], log);
  await router.start(options.graph ?? config.execution_config.file.path);
  return router;
}

function resolveConfig(input: CreateRouterOptions['config']): CoreConfig {
  if (input && 'core' in input && 'sections' in input) return input.core;
  return parseConfigValue(coreConfigSchema, { version: '1', ...(input ?? {}) });
}

class SwitchyardRouter implements Router {
  readonly config: CoreConfig;
  readonly log: Logger;
  private readonly host: PluginHost;
  private readonly graphs: GraphManager;
  private readonly documents: DocumentCache;
  private readonly stopping = new AbortController();
  private readonly agent: Agent;
  private metrics: Metrics = noopMetrics;
  private readonly bus = createClusterBus();
  private fetcher!: SubgraphFetcher;
  private engines = new WeakMap<LoadedGraph, ExecutionEngine>();
  private environment!: OperationEnvironment;
  private server: HttpServer | undefined;
  private metricsServer: { url: string; close(): Promise<void> } | undefined;
  private closed: Promise<void> | undefined;
  /** Running subscriptions: shared subgraph subscriptions, and what a reloaded graph is checked against. */
  private readonly live: LiveSubscriptions;

  constructor(config: CoreConfig, plugins: readonly SwitchyardPlugin[], log: Logger) {
    this.config = config;
    this.log = log;
    this.host = new PluginHost(
      plugins,
      builtinPlugins({ config, graph: () => this.graphs.current, ready: () => this.graphs.current !== undefined && !(this.server?.draining ?? false) }),
    );
    this.graphs = new GraphManager(config.engine.execution_plan_cache_size, log);
    this.documents = new DocumentCache(config);
    this.agent = createSubgraphAgent();
    this.live = new LiveSubscriptions(log);
    this.graphs.onChange((graph) => this.live.graphChanged(graph));
  }

  get plugins(): readonly string[] {
    return this.host.names;
  }

  get graph(): GraphInfo | undefined {
    return this.graphs.current;
  }

  async start(graphInput: GraphInput | undefined): Promise<void> {
    // Recorded for the Prometheus endpoint, or for a plugin that exports them (telemetry's OTLP metrics).
    if (this.config.metrics.enabled || this.host.needsMetrics) this.metrics = await createPrometheusMetrics();
    await this.host.setup((plugin) => ({
      name: plugin.name,
      log: this.log.child({ plugin: plugin.name }),
      config: this.config,
      router: this,
      metrics: this.metrics,
      cluster: this.bus,
    }));
    this.fetcher = new SubgraphFetcher(this.config, this.agent, this.host.transports);
    const envelopPlugins = this.host.envelopPlugins;
    this.environment = {
      config: this.config,
      hooks: () => this.host.stageHooks,
      graph: () => this.graphs.current,
      engine: (graph) => {
        let engine = this.engines.get(graph);
        if (!engine) {
          engine = envelopPlugins.length > 0 ? envelopEngine(this.documents, graph, envelopPlugins) : directEngine(this.documents);
          this.engines.set(graph, engine);
        }
        return engine;
      },
      fetcher: this.fetcher,
      log: this.log,
    };
    if (graphInput !== undefined) {
      try {
        await this.graphs.load(graphInput);
      } catch (error) {
        await this.host.stop().catch(() => undefined);
        throw error;
      }
      if (typeof graphInput === 'string' && this.config.execution_config.file.watch) this.graphs.watch(graphInput);
    }
  }

  execute(request: ExecuteRequest): Promise<OperationResponse> {
    return runOperation(this.environment, toOperationRequest(request), request.signal ?? this.stopping.signal);
  }

  /** Runs an operation that already has the kernel's request shape (HTTP). */
  executeOperation(request: OperationRequest, signal: AbortSignal): Promise<OperationResponse> {
    return runOperation(this.environment, request, signal);
  }

  onGraphChange(listener: (graph: GraphInfo) => void): () => void {
    return this.graphs.onChange(listener);
  }

  async loadGraph(input: GraphInput): Promise<GraphInfo> {
    return this.graphs.load(input);
  }

  private httpServer(): HttpServer {
    if (this.server) return this.server;
    const subscriptions = this.config.subscriptions;
    // `subscriptions.max_total` counts WebSocket and HTTP streams together: each endpoint adds the other's.
    let webSocket: WebSocketEndpoint | undefined;
    const streaming = subscriptions.enabled
      ? createStreamingHttpEndpoint({
          log: this.log,
          start: (request, signal, buffer) => startOperation(this.environment, request, signal, { live: this.live, buffer }),
          maxTotal: subscriptions.max_total,
          maxQueuedBytes: subscriptions.max_queued_bytes,
          othersActive: () => webSocket?.active ?? 0,
          maxBodyBytes: this.config.limits.max_request_body,
          decompress: this.config.traffic_shaping.router.decompression_enabled,
        })
      : undefined;
    this.server = new HttpServer({
      config: this.config,
      log: this.log,
      execute: (request, signal) => this.executeOperation(request, signal),
      routes: this.host.httpRoutes,
      metrics: this.metrics,
      webSocket: subscriptions.enabled
        ? (server) =>
            (webSocket = attachWebSocketEndpoint(server, {
              log: this.log,
              start: (request, signal, initPayload, buffer) => startOperation(this.environment, request, signal, { initPayload, live: this.live, buffer }),
              maxPerConnection: subscriptions.max_per_connection,
              maxQueuedBytes: subscriptions.max_queued_bytes,
              maxTotal: subscriptions.max_total,
              othersActive: () => streaming?.active ?? 0,
              maxPayloadBytes: this.config.limits.max_request_body,
              originAllowed: webSocketOriginCheck(this.config),
            }))
        : undefined,
      streaming,
    });
    return this.server;
  }

  async listen(address = this.config.listen_addr): Promise<ListenInfo> {
    if (this.closed) throw new RouterError('INTERNAL_SERVER_ERROR', 'the router is closed');
    const info = await this.httpServer().listen(address);
    // Under `--workers` the primary serves the aggregated metrics; workers only collect.
    if (this.config.metrics.enabled && !this.metricsServer && !cluster.isWorker) {
      this.metricsServer = await startMetricsServer(this.metrics, this.config.metrics.listen_addr, this.config.metrics.path, this.log);
    }
    return info;
  }

  /** URL of the Prometheus listener, once `listen()` started it. */
  get metricsUrl(): string | undefined {
    return this.metricsServer?.url;
  }

  handle(request: Request): Promise<Response> {
    return this.httpServer().handle(request);
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.graphs.close();
      await this.server?.close(this.config.grace_period, Math.max(this.config.shutdown_delay, MIN_DRAIN_MS));
      await this.metricsServer?.close();
      this.stopping.abort();
      await this.host.stop();
      await this.agent.close();
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * With CORS on, a WebSocket upgrade from a browser origin CORS does not allow
 * is refused (browsers apply no CORS to WebSockets); requests without
 * `Origin` (not from a browser page) are not affected.
 */
function webSocketOriginCheck(config: CoreConfig): ((origin: string | undefined) => boolean) | undefined {
  if (!config.cors.enabled) return undefined;
  const policy = new CorsPolicy(config.cors);
  return (origin) => origin === undefined || policy.answer('GET', origin, undefined).headers['access-control-allow-origin'] !== undefined;
}

/** Even with `shutdown_delay: 0s`, requests already on the wire when a stop begins are read. */
const MIN_DRAIN_MS = 250;

function toOperationRequest(request: ExecuteRequest): OperationRequest {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  return operationRequestOf(
    {
      query: request.query,
      operationName: request.operationName,
      variables: request.variables,
      extensions: request.extensions,
      documentId: request.documentId,
    },
    { headers, method: request.method ?? 'POST', origin: request.origin ?? 'execute', clientName: request.clientName },
  );
}
