import type { Agent } from 'undici';
import type { CoreConfig } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import type { LoadedGraph, SubgraphConfig } from '../graph/loaded-graph.js';
import type { TransportFactory } from '../pipeline/plugin.js';
import { compileHeaderRules, type HeaderPropagation } from './header-rules.js';
import { createHttpTransport } from './http-transport.js';
import { withCircuitBreaker, withRetry } from './resilience.js';
import { SingleFlight } from './single-flight.js';
import type { SubgraphRequest, SubgraphResponse, Transport } from './subgraph-types.js';
import { variablesJson } from './variables-json.js';

/** Per-subgraph sending machinery, built once per loaded graph. */
interface SubgraphLink {
  readonly transport: Transport;
  readonly headers: HeaderPropagation;
  /** Whether identical in-flight queries share one call. */
  readonly shareInFlight: boolean;
}

/**
 * Sends subgraph requests: picks each subgraph's transport (HTTP, or one a
 * plugin registered for its kind), applies header rules, and shares
 * identical in-flight queries when single flight is on.
 */
export class SubgraphFetcher {
  private readonly links = new WeakMap<LoadedGraph, Map<string, SubgraphLink>>();
  private readonly flights = new SingleFlight<SubgraphResponse>();

  constructor(
    private readonly config: CoreConfig,
    private readonly agent: Agent,
    private readonly transports: ReadonlyMap<string, TransportFactory>,
    /** Aborted when the router stops; shared calls follow it, not one client's signal. */
    private readonly routerSignal: AbortSignal,
  ) {}

  /** Headers to send to a subgraph for a client request. */
  headersFor(graph: LoadedGraph, subgraph: string, clientHeaders: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
    return this.link(graph, subgraph).headers(clientHeaders);
  }

  send(graph: LoadedGraph, request: SubgraphRequest, signal: AbortSignal): Promise<SubgraphResponse> {
    const link = this.link(graph, request.subgraph);
    if (!link.shareInFlight || request.operationType !== 'query') return link.transport(request, signal);
    const key = `${request.subgraph}\u0000${request.query}\u0000${variablesJson(request.variables)}\u0000${JSON.stringify(withoutTraceContext(request.headers))}`;
    return this.flights.run(key, () => link.transport(request, this.routerSignal));
  }

  private link(graph: LoadedGraph, subgraph: string): SubgraphLink {
    let links = this.links.get(graph);
    if (!links) {
      links = new Map();
      this.links.set(graph, links);
    }
    let link = links.get(subgraph);
    if (!link) {
      const config = graph.subgraphs.get(subgraph);
      if (!config) throw new RouterError('SUBGRAPH_REQUEST_FAILED', `Unknown subgraph "${subgraph}".`);
      link = {
        transport: this.createTransport(config),
        headers: compileHeaderRules(this.config.headers, subgraph),
        shareInFlight: this.config.engine.enable_single_flight,
      };
      links.set(subgraph, link);
    }
    return link;
  }

  private createTransport(subgraph: SubgraphConfig): Transport {
    const shaping = this.config.traffic_shaping;
    const own = shaping.subgraphs[subgraph.name];
    const base = this.baseTransport(subgraph);
    // Retries sit outside the breaker: a retry of an open circuit fails fast too.
    return withRetry(withCircuitBreaker(base, own?.circuit_breaker ?? shaping.all.circuit_breaker, subgraph.name), own?.retry ?? shaping.all.retry);
  }

  private baseTransport(subgraph: SubgraphConfig): Transport {
    const factory = this.transports.get(subgraph.kind);
    if (factory) return factory(subgraph);
    if (subgraph.kind !== 'graphql') {
      return () =>
        Promise.reject(new RouterError('SUBGRAPH_REQUEST_FAILED', `No transport for subgraph "${subgraph.name}" of kind "${subgraph.kind}"; enable the plugin that serves it.`));
    }
    const shaping = this.config.traffic_shaping;
    const own = shaping.subgraphs[subgraph.name];
    return createHttpTransport({
      url: subgraph.url,
      timeoutMs: own?.request_timeout ?? shaping.all.request_timeout,
      maxResponseBytes: own?.max_response_body ?? shaping.all.max_response_body,
      agent: this.agent,
    });
  }
}

/**
 * Headers as the in-flight key sees them: W3C trace context left out, since
 * each traced request carries its own and would otherwise never share a call
 * (the shared call carries the first request's trace context).
 */
function withoutTraceContext(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (headers.traceparent === undefined && headers.tracestate === undefined) return headers;
  const { traceparent: _traceparent, tracestate: _tracestate, ...rest } = headers;
  return rest;
}
