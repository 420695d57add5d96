import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import type { GraphQLErrorJSON } from '../errors.js';
import type { ResponseTree } from '../execute/response-tree.js';
import type { GraphInfo } from '../graph/loaded-graph.js';
import type { SubgraphRequest, SubgraphResponse } from '../fetch/subgraph-types.js';
import type { QueryPlan } from '../plan/query-plan.js';

/** An operation as it reaches the router, from HTTP or from a side listener. */
export interface OperationRequest {
  /** Operation text; absent when a plugin supplies it (persisted operations). */
  readonly query: string | undefined;
  readonly operationName: string | undefined;
  readonly variables: Readonly<Record<string, unknown>> | undefined;
  /** Request `extensions` (for example `persistedQuery`). */
  readonly extensions: Readonly<Record<string, unknown>> | undefined;
  /** Id of a persisted document sent instead of `query` (`documentId`, or Relay's `doc_id`); a plugin resolves it. Default: none. */
  readonly documentId?: string | undefined;
  /** Client request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** HTTP method it arrived with; `GET` may not run mutations. */
  readonly method: 'GET' | 'POST';
  /** Client name from the `graphql-client-name` header, if sent. */
  readonly clientName: string | undefined;
  /** Listener it came through: `http`, `connect`, or another plugin's name. */
  readonly origin: string;
}

/** The JSON body of a GraphQL response. */
export interface GraphQLResponseBody {
  data?: Record<string, unknown> | null;
  errors?: GraphQLErrorJSON[];
  extensions?: Record<string, unknown>;
}

/** What the router answers for one operation. */
export interface OperationResponse {
  readonly body: GraphQLResponseBody;
  /** HTTP status (GraphQL over HTTP, `application/graphql-response+json` semantics). */
  readonly status: number;
  /**
   * True when the request failed before execution (syntax, validation,
   * variables): clients that accept only `application/json` then get 200,
   * as GraphQL over HTTP asks.
   */
  readonly requestError?: boolean;
  /** Response headers to send (for example `cache-control`), lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
}

/** Input of the parse stage. */
export interface ParseInput {
  readonly query: string;
}

/** Input of the validate stage. */
export interface ValidateInput {
  readonly document: DocumentNode;
  /** The client-facing schema of the current graph. */
  readonly schema: GraphQLSchema;
}

/** Input of the plan stage. */
export interface PlanInput {
  readonly document: DocumentNode;
  readonly operationName: string | undefined;
  /** Values of the variables `@skip`/`@include` read (they shape the plan). */
  readonly conditions: Readonly<Record<string, unknown>>;
  /** Plan cache key: operation text, operation name and condition values (the kernel adds `overrideLabels` to it). */
  readonly cacheKey: string;
  /**
   * Progressive `@override` labels on for this operation: the graph's
   * `percent(x)` labels drawn for it (each on for x% of operations), sorted;
   * usually none. A plan hook may add custom labels of the graph (a beta for
   * some clients) or take labels out. The operation is planned with these
   * and `percent(100)` labels on, and its plan cached per set of labels;
   * labels the graph does not have are ignored.
   */
  readonly overrideLabels: readonly string[];
  /**
   * The graph the operation was validated on and is planned on: the one
   * current when the request arrived (a reload during the request does not
   * change it), or the new one when a running subscription is planned again
   * after a reload. Plan hooks that depend on the schema read this one, not
   * `router.graph`.
   */
  readonly graph: GraphInfo;
}

/** Input of the merge stage: everything fetched. */
export interface MergeInput {
  readonly plan: QueryPlan;
  readonly tree: ResponseTree;
  /** Errors so far (subgraph errors with response paths). */
  readonly errors: readonly GraphQLErrorJSON[];
}

/** Output of the merge stage. */
export interface MergeOutput {
  readonly data: Record<string, unknown> | null;
  readonly errors: readonly GraphQLErrorJSON[];
}

/** Input and output of every stage. */
export interface StageTypes {
  /** The whole operation: from the request to its response. */
  request: { input: OperationRequest; output: OperationResponse };
  parse: { input: ParseInput; output: DocumentNode };
  /** Output: validation errors (empty when valid). */
  validate: { input: ValidateInput; output: readonly GraphQLError[] };
  plan: { input: PlanInput; output: QueryPlan };
  /** Once per subgraph call. */
  fetch: { input: SubgraphRequest; output: SubgraphResponse };
  merge: { input: MergeInput; output: MergeOutput };
  /** The final response, before it is serialized. */
  respond: { input: OperationResponse; output: OperationResponse };
}

export type StageName = keyof StageTypes;
export type StageInput<S extends StageName> = StageTypes[S]['input'];
export type StageOutput<S extends StageName> = StageTypes[S]['output'];

/** The stages in the order one operation passes through them. */
export const STAGE_NAMES: readonly StageName[] = ['request', 'parse', 'validate', 'plan', 'fetch', 'merge', 'respond'];
