import type { GraphQLErrorJSON } from '../errors.js';

/** A JSON object as exchanged with subgraphs. */
export type JsonObject = { readonly [key: string]: unknown };

/** One call to one subgraph, as the fetch stage and transports see it. */
export interface SubgraphRequest {
  /** Subgraph name from the supergraph. */
  readonly subgraph: string;
  /** `root`: fields of the root type; `entity`: an `_entities` lookup. */
  readonly kind: 'root' | 'entity';
  readonly operationType: 'query' | 'mutation' | 'subscription';
  /** The operation text sent. */
  readonly query: string;
  readonly operationName: string | undefined;
  /** Variables sent; for entity fetches `representations` is among them. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** Entity fetches: the representations sent (the same array as `variables.representations`). */
  readonly representations: readonly JsonObject[] | undefined;
  /** The fetch's selection set, printed: names the selection (cache keys use it). */
  readonly selectionSet: string;
  /** Headers to send, after the propagation rules (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  /** Id of the plan's fetch node (the first one, when several were merged). */
  readonly fetchId: number;
  /**
   * True when several entity fetches to this subgraph in one parallel wave
   * were merged into this one request (`engine.enable_multi_fetch`).
   * Merged requests are not cached.
   */
  readonly merged?: boolean;
  /** Set on the fetches an event of a subscription runs: response caches must neither answer nor store them. Default: unset. */
  readonly subscription?: boolean;
}

/** What a subgraph answered. */
export interface SubgraphResponse {
  readonly data?: JsonObject | null;
  readonly errors?: readonly GraphQLErrorJSON[];
  /** Read by plugins (cache tags); never forwarded to clients. */
  readonly extensions?: JsonObject;
  /** Response headers of interest, lower-case names (for example `cache-control`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Sends a subgraph request and returns its answer; throws a RouterError when there is none. */
export type Transport = (request: SubgraphRequest, signal: AbortSignal) => Promise<SubgraphResponse>;
