import type { GraphQLError, GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { RouterError } from '../errors.js';
import { ResponseShaper } from '../merge/shape-response.js';
import type { QueryPlan } from '../plan/query-plan.js';
import type { GraphSource, SubgraphRecord } from './execution-config.js';
import { FederationIndex } from './federation-index.js';
import { readSupergraph } from './read-supergraph.js';
import type { Supergraph } from './supergraph-model.js';

/** One subgraph the router sends fetches to. */
export interface SubgraphConfig {
  readonly name: string;
  /** Transport kind: `graphql` (HTTP) or one a plugin provides (`grpc`). */
  readonly kind: string;
  /** Where to send fetches. */
  readonly url: string;
  /** The execution config's record, with kind-specific data. */
  readonly record: SubgraphRecord;
}

/** The graph being served, as plugins see it. */
export interface GraphInfo {
  readonly supergraph: Supergraph;
  /** Client-facing schema. */
  readonly apiSchema: GraphQLSchema;
  readonly subgraphs: ReadonlyMap<string, SubgraphConfig>;
  /** File or URL it was loaded from. */
  readonly origin: string;
  readonly loadedAt: Date;
}

/** A loaded graph with the caches that live and die with it. */
export class LoadedGraph implements GraphInfo {
  readonly supergraph: Supergraph;
  readonly index: FederationIndex;
  readonly apiSchema: GraphQLSchema;
  readonly subgraphs: ReadonlyMap<string, SubgraphConfig>;
  readonly origin: string;
  readonly loadedAt = new Date();
  readonly shaper: ResponseShaper;
  /** Plans by operation text + name + `@skip`/`@include` values (LRU, bounded by count and size). */
  readonly plans: LRUCache<string, QueryPlan>;
  /** Validation errors by operation text. */
  readonly validations: LRUCache<string, readonly GraphQLError[]>;

  constructor(source: GraphSource, planCacheSize: number) {
    this.supergraph = readSupergraph(source.supergraphSdl);
    this.index = new FederationIndex(this.supergraph);
    this.apiSchema = this.supergraph.apiSchema;
    this.origin = source.origin;
    const subgraphs = new Map<string, SubgraphConfig>();
    for (const record of source.subgraphs) {
      subgraphs.set(record.name, { name: record.name, kind: record.kind, url: record.url, record });
    }
    for (const defined of this.supergraph.subgraphs) {
      if (!subgraphs.has(defined.name)) {
        throw new RouterError('SUPERGRAPH_INVALID', `${source.origin}: no routing data for subgraph "${defined.name}"`);
      }
    }
    this.subgraphs = subgraphs;
    this.shaper = new ResponseShaper(this.apiSchema);
    this.plans = new LRUCache({
      max: Math.max(1, planCacheSize),
      // Plans grow with the operation; its text length is a fair proxy for their size.
      maxSize: 64 * 1024 * 1024,
      sizeCalculation: (_plan, key) => Math.max(1, key.length * 8),
    });
    this.validations = new LRUCache({ max: Math.max(1, planCacheSize) });
  }
}
