/**
 * Attributes of subgraph calls, built once per subgraph, fetch kind,
 * operation type and entity count rather than per call: a traced request
 * makes one client span per subgraph call, and building (or copying) these
 * objects each time was a visible share of the cost of tracing. The cached
 * objects are frozen and shared by every span of that shape: a span copies
 * its set before it adds an attribute (span-recorder.ts).
 */

import type { Attributes } from '@opentelemetry/api';
import type { GraphInfo, SubgraphConfig } from '../../src/index.js';

/** What a fetch span's fixed attributes depend on. */
export interface FetchShape {
  readonly subgraph: string;
  readonly kind: string;
  readonly operationType: string;
}

/** Entity counts up to this get a cached attribute set each; larger ones a fresh object per call. */
const MAX_CACHED_ENTITIES = 256;

/** What the fetch spans of one subgraph, kind and operation type share. */
export class FetchSpanShape {
  /** By entity count, filled as counts are seen. */
  private readonly byEntities: Attributes[] = [];

  constructor(
    /** `fetch <subgraph>` */
    readonly name: string,
    /** Frozen; without `switchyard.fetch.entities`. */
    private readonly base: Attributes,
  ) {}

  /**
   * The span's attributes, with `switchyard.fetch.entities` when `entities`
   * (representations sent) is given. Shared and frozen: copy before changing.
   */
  attributes(entities: number | undefined): Attributes {
    if (entities === undefined) return this.base;
    if (entities > MAX_CACHED_ENTITIES) return withEntities(this.base, entities);
    let attributes = this.byEntities[entities];
    if (!attributes) {
      attributes = Object.freeze(withEntities(this.base, entities));
      this.byEntities[entities] = attributes;
    }
    return attributes;
  }
}

/** Per-subgraph attribute sets, rebuilt when the graph (and so the subgraph config object) changes. */
interface SubgraphAttributes {
  /** Where calls go: `server.*`, `url.full`, `rpc.system`, `http.request.method`. */
  readonly target: Attributes;
  /** Fetch span attributes by `kind`, then operation type. */
  readonly spans: Map<string, Map<string, FetchSpanShape>>;
  /** `http.client.request.duration` attributes of a call that answered (no `url.full`: one series per subgraph). */
  readonly metric: Attributes;
}

export class SubgraphAttributeCache {
  private readonly bySubgraph = new WeakMap<SubgraphConfig, SubgraphAttributes>();

  constructor(private readonly graph: () => GraphInfo | undefined) {}

  /** What a fetch span of this shape is named and carries. */
  fetchSpan(fetch: FetchShape): FetchSpanShape {
    const entry = this.entry(fetch.subgraph);
    // A subgraph the graph does not know (a plugin's fetch): nothing cached.
    if (!entry) return new FetchSpanShape(`fetch ${fetch.subgraph}`, fetchAttributes({}, fetch));
    let byType = entry.spans.get(fetch.kind);
    if (!byType) {
      byType = new Map();
      entry.spans.set(fetch.kind, byType);
    }
    let shape = byType.get(fetch.operationType);
    if (!shape) {
      shape = new FetchSpanShape(`fetch ${fetch.subgraph}`, Object.freeze(fetchAttributes(entry.target, fetch)));
      byType.set(fetch.operationType, shape);
    }
    return shape;
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

function fetchAttributes(target: Attributes, fetch: FetchShape): Attributes {
  return { ...target, 'switchyard.subgraph.name': fetch.subgraph, 'switchyard.fetch.kind': fetch.kind, 'graphql.operation.type': fetch.operationType };
}

function withEntities(attributes: Attributes, entities: number | undefined): Attributes {
  return entities === undefined ? attributes : { ...attributes, 'switchyard.fetch.entities': entities };
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
