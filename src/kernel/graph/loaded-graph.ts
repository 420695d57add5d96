import type { GraphQLError, GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { RouterError } from '../errors.js';
import { ResponseShaper } from '../merge/shape-response.js';
import type { NSelection } from '../plan/normalize.js';
import type { QueryPlan } from '../plan/query-plan.js';
import { estimateDocumentBytes } from '../router/document-scan.js';
import type { GraphSource, SubgraphRecord } from './execution-config.js';
import { FederationIndex } from './federation-index.js';
import { OverrideLabels, type LabelsOn } from './override-label.js';
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
  /** Plans by operation text + name + `@skip`/`@include` values (LRU, bounded by count and estimated size, see planBytes). */
  readonly plans: LRUCache<string, QueryPlan>;
  /** Validation errors by operation text (LRU, bounded by count and estimated size: errors hold their document's AST). */
  readonly validations: LRUCache<string, readonly GraphQLError[]>;
  /** The graph's override labels that can be on or off: `percent(x)` (0 < x < 100), drawn for each operation (plan-stage.ts), and custom ones. */
  readonly overrideLabels: OverrideLabels;
  /** Indexes for the sets of labels on other than none, by LabelsOn.key. */
  private readonly labelIndexes = new LRUCache<string, FederationIndex>({ max: MAX_LABEL_INDEXES });

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
    this.shaper = new ResponseShaper(this.apiSchema, this.supergraph.schema);
    this.overrideLabels = new OverrideLabels(overrideLabelsOf(this.supergraph));
    this.plans = new LRUCache({
      max: Math.max(1, planCacheSize),
      maxSize: PLAN_CACHE_BYTES,
      maxEntrySize: PLAN_CACHE_ENTRY_BYTES,
      sizeCalculation: planBytes,
    });
    this.validations = new LRUCache({
      max: Math.max(1, planCacheSize),
      maxSize: VALIDATION_CACHE_BYTES,
      sizeCalculation: (errors, key) => Math.max(1, key.length * 2 + (errors.length > 0 ? estimateDocumentBytes(errors[0]!.source?.body ?? '') + errors.length * 512 : 0)),
    });
  }

  /** The index to plan with when `labels` are on: `index` when none is. */
  planningIndex(labels: LabelsOn): FederationIndex {
    if (labels.key === '') return this.index;
    let index = this.labelIndexes.get(labels.key);
    if (!index) {
      index = new FederationIndex(this.supergraph, labels.on);
      this.labelIndexes.set(labels.key, index);
    }
    return index;
  }
}

/** Indexes kept for sets of override labels on (2^n sets for n labels; a graph rarely has more than one or two). */
const MAX_LABEL_INDEXES = 16;

/** Every `@join__field(overrideLabel:)` of the supergraph. */
function* overrideLabelsOf(supergraph: Supergraph): Iterable<string> {
  for (const type of supergraph.types.values()) {
    for (const field of type.fields.values()) {
      for (const source of field.sources.values()) if (source.overrideLabel !== undefined) yield source.overrideLabel;
    }
  }
}

/** Plans kept per graph: estimated heap across the cache (see planBytes). */
export const PLAN_CACHE_BYTES = 128 * 1024 * 1024;
/** A plan estimated above this (an operation of some 30,000 tokens) is built for each request, not kept. */
export const PLAN_CACHE_ENTRY_BYTES = 16 * 1024 * 1024;
/** Validation results kept per graph (estimated heap). */
const VALIDATION_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Estimated heap a cached plan holds: the client document's AST (the
 * normalized operation keeps its nodes, and through their locations every
 * token of the document), the key, the fetches' texts and the normalized
 * selections. An upper estimate: a plan shares the AST with the document cache.
 */
export function planBytes(plan: QueryPlan, key: string): number {
  const source = plan.operation.definition.loc?.source.body;
  let bytes = key.length * 2 + (source === undefined ? 0 : estimateDocumentBytes(source));
  for (const fetch of plan.fetches) bytes += 512 + fetch.operation.length * 2;
  const stack: NSelection[][] = [plan.operation.selections];
  for (let selections = stack.pop(); selections; selections = stack.pop()) {
    bytes += selections.length * 160;
    for (const selection of selections) if (selection.selections) stack.push(selection.selections);
  }
  return Math.max(1, bytes);
}
