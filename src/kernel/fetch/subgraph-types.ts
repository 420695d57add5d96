import type { GraphQLErrorJSON } from '../errors.js';

/** The headers of a subgraph request no `headers` rule applies to (shared, never changed). */
export const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

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
  /** Variables sent; for entity fetches the representations are among them (see `representationsVariable`). */
  readonly variables: Readonly<Record<string, unknown>>;
  /** Entity fetches: the representations sent (the same array as the representations variable's value). */
  readonly representations: readonly JsonObject[] | undefined;
  /**
   * Entity fetches sent alone: the variable holding the representations,
   * set only when it is not `representations` (the client's operation sends
   * a `$representations` of its own with this fetch; then `representations_`).
   */
  readonly representationsVariable?: string;
  /** The fetch's selection set, printed: names the selection (cache keys use it). */
  readonly selectionSet: string;
  /**
   * Headers to send (lower-case names). The kernel builds a request with none
   * (`NO_HEADERS`); the `headers` rules' fetch hook (builtins/header-rules.ts)
   * sets them before any user plugin's fetch hook runs.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** Id of the plan's fetch node (the first one, when several were merged). */
  readonly fetchId: number;
  /**
   * True when several entity fetches to this subgraph in one parallel wave
   * were merged into this one request (`engine.enable_multi_fetch`).
   * Merged requests are not cached.
   */
  readonly merged?: boolean;
  /**
   * A batched entity call (the plan's `parts`): one aliased `_entities`
   * field per part, each answered under its alias (`data._0`, `data._1`,
   * ...). `representations` is then every part's, in order. Absent for
   * other calls. Change the parts sent with `withEntityParts`.
   */
  readonly parts?: readonly EntityCallPart[];
  /** Set on the fetches an event of a subscription runs: response caches must neither answer nor store them. Default: unset. */
  readonly subscription?: boolean;
}

/**
 * One part of a batched entity call: what the call of its own would have
 * been (its selection, representations and variables), sent as an aliased
 * `_entities` field of a shared request.
 */
export interface EntityCallPart {
  /** Response key of the part's answer: `_0`, `_1`, ... (a part keeps it when others are left out). */
  readonly alias: string;
  /** Variable of the shared request holding the part's representations: `r0`, `r1`, ... */
  readonly variable: string;
  /** The part's selection under `_entities`, printed (names the selection, as `SubgraphRequest.selectionSet`). */
  readonly selectionSet: string;
  /** The part's representations. */
  readonly representations: readonly JsonObject[];
  /** The variables the part would send alone: the client variables it reads, and its representations. */
  readonly variables: Readonly<Record<string, unknown>>;
  /** The variable of `variables` holding the part's representations, when not `representations` (as `SubgraphRequest.representationsVariable`). */
  readonly representationsVariable?: string;
  /** Declarations of the client variables the part reads (`$first: Int`). */
  readonly variableDefinitions: readonly string[];
  /** Id of the part's plan fetch node. */
  readonly fetchId: number;
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
