import type { Agent } from 'undici';
import type { CoreConfig } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import type { LoadedGraph, SubgraphConfig } from '../graph/loaded-graph.js';
import type { TransportFactory } from '../pipeline/plugin.js';
import { createHttpTransport } from './http-transport.js';
import type { SubgraphRequest, SubgraphResponse, Transport } from './subgraph-types.js';
import { mayHoldUploads } from './variables-json.js';

/**
 * Sends subgraph requests: picks each subgraph's transport (HTTP, or one a
 * plugin registered for its kind). What else happens to a call is decided
 * in the fetch stage, by internal plugins: its headers (`headers` rules),
 * in-flight sharing, retries and the circuit breaker (src/kernel/builtins/).
 */
export class SubgraphFetcher {
  /** Each subgraph's transport, built once per loaded graph. */
  private readonly links = new WeakMap<LoadedGraph, Map<string, Transport>>();

  constructor(
    private readonly config: CoreConfig,
    private readonly agent: Agent,
    private readonly transports: ReadonlyMap<string, TransportFactory>,
  ) {}

  send(graph: LoadedGraph, request: SubgraphRequest, signal: AbortSignal): Promise<SubgraphResponse> {
    return this.transport(graph, request.subgraph)(request, signal);
  }

  private transport(graph: LoadedGraph, subgraph: string): Transport {
    let links = this.links.get(graph);
    if (!links) {
      links = new Map();
      this.links.set(graph, links);
    }
    let link = links.get(subgraph);
    if (!link) {
      const config = graph.subgraphs.get(subgraph);
      if (!config) throw new RouterError('SUBGRAPH_REQUEST_FAILED', `Unknown subgraph "${subgraph}".`);
      link = this.baseTransport(config);
      links.set(subgraph, link);
    }
    return link;
  }

  private baseTransport(subgraph: SubgraphConfig): Transport {
    const factory = this.transports.get(subgraph.kind);
    if (factory) return withoutUploads(factory(subgraph), subgraph);
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
 * A plugin's transport (gRPC, ...), refusing calls that carry uploaded files
 * before they reach it: only the HTTP transport sends files (as a GraphQL
 * multipart request). Reads only the variables' top-level values.
 */
function withoutUploads(transport: Transport, subgraph: SubgraphConfig): Transport {
  return (request, signal) => {
    if (!mayHoldUploads(request.variables)) return transport(request, signal);
    return Promise.reject(
      new RouterError(
        'SUBGRAPH_REQUEST_FAILED',
        `Subgraph "${subgraph.name}" (kind "${subgraph.kind}") cannot receive uploaded files: files can only go to GraphQL-over-HTTP subgraphs.`,
      ),
    );
  };
}
