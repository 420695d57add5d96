/**
 * The trace of one request as the playground's plan-and-trace panel shows
 * it: how long planning took and whether the plan came from the plan cache,
 * and one entry per subgraph fetch (when it started, how long it took,
 * whether it left the router, its errors). Made by the internal plugin
 * `src/kernel/builtins/request-trace.ts`, registered only where
 * `query_plans.enabled` allows it, for a request that sends
 * `X-Switchyard-Include-Trace: true`.
 *
 * A fetch's subgraph errors go through `subgraph_error_propagation` like the
 * response's: the trace shows the messages the response shows, never more
 * (a subgraph's raw message may hold secrets the policy hides).
 */
import { RouterError, type GraphQLErrorJSON } from '../errors.js';
import { DEFAULT_SUBGRAPH_ERROR_POLICY, type SubgraphErrorPolicy } from '../execute/subgraph-errors.js';
import type { SubgraphRequest, SubgraphResponse } from '../fetch/subgraph-types.js';
import { StateKey } from '../pipeline/state.js';

/** Request header asking for `extensions.trace`. */
export const TRACE_HEADER = 'x-switchyard-include-trace';

/** The request's trace, when one is being made. */
export const REQUEST_TRACE = new StateKey<RequestTrace>('request-trace');

/** Error messages kept per fetch, at most. */
const MAX_ERRORS = 5;

/** Failures that come from asking the subgraph (an HTTP status, a transport error, a timeout, an unreadable answer), not from the router declining to. */
const ASKED_THE_SUBGRAPH: ReadonlySet<string> = new Set(['SUBGRAPH_REQUEST_FAILED', 'SUBGRAPH_TIMEOUT', 'SUBGRAPH_INVALID_RESPONSE']);

/** `extensions.trace` as clients see it; times in milliseconds from the request's start. */
export interface RequestTraceJSON {
  /** The whole operation, parse to response. */
  readonly durationMs: number;
  /** Null when the request ended before planning (parse or validation errors). */
  readonly plan: PlanTraceJSON | null;
  /** In the order the fetches started. */
  readonly fetches: readonly FetchTraceJSON[];
}

export interface PlanTraceJSON {
  readonly startMs: number;
  readonly durationMs: number;
  /** True when the plan came from the plan cache; null when a plugin supplied it. */
  readonly cacheHit: boolean | null;
}

export interface FetchTraceJSON {
  /** The plan's fetch node id (`Fetch` nodes in `extensions.queryPlan` carry the same id). */
  readonly fetchId: number;
  readonly subgraph: string;
  readonly kind: 'root' | 'entity';
  readonly startMs: number;
  readonly durationMs: number;
  /**
   * False when a plugin answered the fetch and nothing was sent (a response
   * cache hit, for example).
   */
  readonly sent: boolean;
  /** Entity fetches: representations asked for, and how many were sent (fewer on a partial cache hit). */
  readonly entities?: { readonly requested: number; readonly sent: number };
  /**
   * The messages clients see of the subgraph's GraphQL errors (first ones,
   * after `subgraph_error_propagation`), or why the fetch failed.
   */
  readonly errors?: readonly string[];
  /** The error code when the fetch failed without an answer (`SUBGRAPH_REQUEST_FAILED`, ...). */
  readonly failure?: string;
}

interface FetchEntry {
  fetchId: number;
  subgraph: string;
  kind: 'root' | 'entity';
  started: number;
  ended: number | undefined;
  sent: boolean;
  requested: number | undefined;
  sentEntities: number | undefined;
  errors: string[] | undefined;
  failure: string | undefined;
}

/** Collects one request's trace while it runs. */
export class RequestTrace {
  private readonly started = performance.now();
  private plan: { started: number; ended: number; cacheHit: boolean | undefined } | undefined;
  private readonly fetches: FetchEntry[] = [];

  /** `errorPolicy`: the response's `subgraph_error_propagation`, which the trace's errors follow too. */
  constructor(private readonly errorPolicy: SubgraphErrorPolicy = DEFAULT_SUBGRAPH_ERROR_POLICY) {}

  /** Marks planning: call `done` when the plan is there. */
  beginPlan(): { cacheHit(hit: boolean): void; done(): void } {
    const plan = { started: performance.now(), ended: 0, cacheHit: undefined as boolean | undefined };
    this.plan = plan;
    return {
      cacheHit: (hit) => {
        plan.cacheHit = hit;
      },
      done: () => {
        plan.ended = performance.now();
      },
    };
  }

  /** Follows one fetch: `sending` when it leaves the router, `answered` or `failed` when it ended. */
  beginFetch(request: SubgraphRequest): FetchRecorder {
    const entry: FetchEntry = {
      fetchId: request.fetchId,
      subgraph: request.subgraph,
      kind: request.kind,
      started: performance.now(),
      ended: undefined,
      sent: false,
      requested: request.representations?.length,
      sentEntities: undefined,
      errors: undefined,
      failure: undefined,
    };
    this.fetches.push(entry);
    const policy = this.errorPolicy;
    return {
      sending(sent) {
        entry.sent = true;
        entry.sentEntities = sent.representations?.length;
      },
      answered(response) {
        entry.ended = performance.now();
        if (response.errors && response.errors.length > 0) entry.errors = visibleMessages(policy, request.subgraph, response.errors.slice(0, MAX_ERRORS));
      },
      failed(error) {
        entry.ended = performance.now();
        entry.failure = error instanceof RouterError ? error.code : 'INTERNAL_SERVER_ERROR';
        // The after-hook that marks a sent fetch does not run on a failure: these codes mean the subgraph was asked.
        if (!entry.sent && ASKED_THE_SUBGRAPH.has(entry.failure)) {
          entry.sent = true;
          entry.sentEntities = entry.requested;
        }
        entry.errors = [error instanceof Error ? error.message : String(error)];
      },
    };
  }

  toJSON(): RequestTraceJSON {
    const now = performance.now();
    const at = (time: number) => round(time - this.started);
    return {
      durationMs: at(now),
      plan: this.plan ? { startMs: at(this.plan.started), durationMs: round((this.plan.ended || now) - this.plan.started), cacheHit: this.plan.cacheHit ?? null } : null,
      fetches: this.fetches.map((entry) => {
        const fetch: { -readonly [K in keyof FetchTraceJSON]: FetchTraceJSON[K] } = {
          fetchId: entry.fetchId,
          subgraph: entry.subgraph,
          kind: entry.kind,
          startMs: at(entry.started),
          durationMs: round((entry.ended ?? now) - entry.started),
          sent: entry.sent,
        };
        if (entry.requested !== undefined) fetch.entities = { requested: entry.requested, sent: entry.sent ? (entry.sentEntities ?? 0) : 0 };
        if (entry.errors) fetch.errors = entry.errors;
        if (entry.failure) fetch.failure = entry.failure;
        return fetch;
      }),
    };
  }
}

/** What the fetch path reports to the trace. */
export interface FetchRecorder {
  /** The request as it leaves the router (after plugins changed it). */
  sending(sent: SubgraphRequest): void;
  answered(response: SubgraphResponse): void;
  failed(error: unknown): void;
}

/**
 * The messages the response shows for these subgraph errors: each forwarded
 * error's, the wrapped ones' (`mode: wrapped`), or the one stand-in error
 * when propagation is off.
 */
function visibleMessages(policy: SubgraphErrorPolicy, subgraph: string, errors: readonly GraphQLErrorJSON[]): string[] {
  const visible: GraphQLErrorJSON[] = [];
  policy.report(visible, subgraph, errors, () => undefined);
  const messages: string[] = [];
  for (const error of visible) {
    const wrapped = error.extensions?.errors;
    if (Array.isArray(wrapped) && wrapped.length > 0) for (const inner of wrapped as GraphQLErrorJSON[]) messages.push(inner.message);
    else messages.push(error.message);
  }
  return messages.slice(0, MAX_ERRORS);
}

/** Microsecond precision is plenty for a waterfall. */
function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
