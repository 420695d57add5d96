/**
 * Attributes of subgraph calls, built once per subgraph (and fetch kind)
 * rather than per call: a traced request makes one client span per subgraph
 * call, and building these objects each time was a visible share of the
 * cost of tracing. The cached objects are shared: never change one (the SDK
 * copies what a span is started with).
 */

import type { Attributes } from '@opentelemetry/api';
import type { GraphInfo, SubgraphConfig } from '../../src/index.js';

/** What a fetch span's fixed attributes depend on. */
export interface FetchShape {
  readonly subgraph: string;
  readonly kind: string;
  readonly operationType: string;
}

/** Per-subgraph attribute sets, rebuilt when the graph (and so the subgraph config object) changes. */
interface SubgraphAttributes {
  /** Where calls go: `server.*`, `url.full`, `rpc.system`, `http.request.method`. */
  readonly target: Attributes;
  /** Fetch span attributes by `kind` and operation type. */
  readonly spans: Map<string, Attributes>;
  /** `http.client.request.duration` attributes of a call that answered (no `url.full`: one series per subgraph). */
  readonly metric: Attributes;
}

export class SubgraphAttributeCache {
  private readonly bySubgraph = new WeakMap<SubgraphConfig, SubgraphAttributes>();

  constructor(private readonly graph: () => GraphInfo | undefined) {}

  /** A fetch span's attributes, but for `switchyard.fetch.entities` (which varies per call). */
  span(fetch: FetchShape): Attributes {
    const entry = this.entry(fetch.subgraph);
    if (!entry) return { 'switchyard.subgraph.name': fetch.subgraph, 'switchyard.fetch.kind': fetch.kind, 'graphql.operation.type': fetch.operationType };
    const key = `${fetch.kind}\u0000${fetch.operationType}`;
    let attributes = entry.spans.get(key);
    if (!attributes) {
      attributes = { ...entry.target, 'switchyard.subgraph.name': fetch.subgraph, 'switchyard.fetch.kind': fetch.kind, 'graphql.operation.type': fetch.operationType };
      entry.spans.set(key, attributes);
    }
    return attributes;
  }

  /** Attributes of a subgraph call's duration; with `error.type` when it failed. */
  metric(subgraph: string, errorType: string | undefined): Attributes {
    const base = this.entry(subgraph)?.metric ?? { 'switchyard.subgraph.name': subgraph };
    return errorType === undefined ? base : { ...base, 'error.type': errorType };
  }

  private entry(name: string): SubgraphAttributes | undefined {
    const subgraph = this.graph()?.subgraphs.get(name);
    if (!subgraph) return undefined;
    let entry = this.bySubgraph.get(subgraph);
    if (!entry) {
      const target = targetAttributes(subgraph);
      const metric: Attributes = { 'switchyard.subgraph.name': name };
      for (const [key, value] of Object.entries(target)) if (key !== 'url.full') metric[key] = value;
      entry = { target, spans: new Map(), metric };
      this.bySubgraph.set(subgraph, entry);
    }
    return entry;
  }
}

/** Where a subgraph's calls go, as span and metric attributes. */
function targetAttributes(subgraph: SubgraphConfig): Attributes {
  const attributes: Attributes = {};
  if (subgraph.kind === 'grpc') {
    attributes['rpc.system'] = 'grpc';
    const address = grpcTargetAddress(subgraph.url);
    if (address) {
      attributes['server.address'] = address.address;
      if (address.port !== undefined) attributes['server.port'] = address.port;
    }
    return attributes;
  }
  if (!URL.canParse(subgraph.url)) return attributes;
  const url = new URL(subgraph.url);
  attributes['server.address'] = url.hostname.replace(/^\[|\]$/g, '');
  attributes['server.port'] = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  if (subgraph.kind === 'graphql') {
    attributes['http.request.method'] = 'POST';
    // Credentials in a routing URL stay out of telemetry.
    url.username = '';
    url.password = '';
    attributes['url.full'] = url.toString();
  } else {
    attributes['rpc.system'] = subgraph.kind;
  }
  return attributes;
}

/**
 * Host and port of a gRPC target (`host:port`, `dns:///host:port`,
 * `dns://authority/host:port`, `ipv4:host:port`); undefined for Unix sockets.
 */
function grpcTargetAddress(target: string): { address: string; port: number | undefined } | undefined {
  const name = target.replace(/^(dns:(\/\/[^/]*\/)?|ipv4:|ipv6:)/, '');
  if (name.startsWith('unix:') || name === '') return undefined;
  const { address, port } = splitHost(name.split(',')[0]!);
  // gRPC's default port when the target names none.
  return { address, port: port ?? 443 };
}

export function splitHost(host: string): { address: string; port: number | undefined } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
  if (!match) return { address: host, port: undefined };
  return { address: match[1]!.replace(/^\[|\]$/g, ''), port: match[2] === undefined ? undefined : Number(match[2]) };
}
