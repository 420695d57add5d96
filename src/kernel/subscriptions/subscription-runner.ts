/**
 * Operations that may stream: request, parse, validate and plan run once
 * (through their stages, as for any operation); a subscription then opens
 * its root field's subgraph stream, and each event runs the plan's
 * remaining fetches (fetch stage), the merge stage and the respond stage.
 * Queries and mutations sent on a WebSocket get one answer.
 */
import { RouterError } from '../errors.js';
import { executePlan } from '../execute/execute-plan.js';
import type { SubgraphRequest, SubgraphResponse } from '../fetch/subgraph-types.js';
import type { SubscriptionSettings } from '../graph/execution-config.js';
import { runStage, type StageScope } from '../pipeline/stage-runner.js';
import { RequestState } from '../pipeline/state.js';
import type { GraphQLResponseBody, MergeOutput, OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { buildQueryPlan } from '../plan/build-plan.js';
import { conditionVariables } from '../plan/normalize.js';
import type { QueryPlan } from '../plan/query-plan.js';
import { errorResponse } from '../router/error-response.js';
import { answerPrepared, prepareOperation, type OperationEnvironment, type PreparedOperation } from '../router/operation-runner.js';
import type { StageHooks } from '../router/plugin-host.js';
import { subscribeUpstreamSse } from './upstream-sse.js';
import { subscribeUpstream, type UpstreamSubscription, type UpstreamTarget } from './upstream-ws.js';

/** An operation started: one answer, or a stream of them. */
export type StartedOperation =
  | { readonly kind: 'single'; readonly response: OperationResponse }
  | { readonly kind: 'stream'; readonly events: EventStream };

/** The events of a subscription; `return()` ends it at once (the upstream is closed). */
export interface EventStream extends AsyncIterableIterator<GraphQLResponseBody> {
  return(): Promise<IteratorResult<GraphQLResponseBody>>;
}

/** What a started subscription needs beside the operation. */
export interface StartOptions {
  /** The client's `connection_init` payload, forwarded to the subgraph. Default: none. */
  readonly initPayload?: Readonly<Record<string, unknown>>;
}

/** Output of the request stage when a subscription's stream started (its events go through respond one by one). */
const STREAM_STARTED: OperationResponse = Object.freeze({ body: Object.freeze({}), status: 200, headers: Object.freeze({}) });

function identity<T>(value: T): T {
  return value;
}

/** Starts an operation: subscriptions stream, anything else is answered once (as `router.execute` does). */
export async function startOperation(env: OperationEnvironment, request: OperationRequest, signal: AbortSignal, options: StartOptions = {}): Promise<StartedOperation> {
  const scope: StageScope = { state: new RequestState(), signal };
  const hooks = env.hooks();
  let stream: EventStream | undefined;
  let response: OperationResponse;
  try {
    response = await runStage('request', hooks.request, request, scope, async (current) => {
      let answer: OperationResponse;
      try {
        const prepared = await prepareOperation(env, current, scope, hooks);
        if (!('document' in prepared)) {
          answer = prepared;
        } else if (prepared.operation.operation !== 'subscription') {
          answer = await answerPrepared(prepared);
        } else {
          if (!env.config.subscriptions.enabled) {
            throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', 'Subscriptions are disabled (subscriptions.enabled: false).', { status: 400 });
          }
          stream = await openStream(env, prepared, hooks, options);
          return STREAM_STARTED;
        }
      } catch (error) {
        answer = errorResponse(error, env.log);
      }
      return runStage('respond', hooks.respond, answer, scope, identity);
    });
  } catch (error) {
    response = errorResponse(error, env.log);
  }
  if (stream && response === STREAM_STARTED) return { kind: 'stream', events: stream };
  // A request hook answered instead: the stream (if it started) is not wanted.
  await stream?.return();
  return { kind: 'single', response };
}

async function planOf(prepared: PreparedOperation, hooks: StageHooks): Promise<QueryPlan> {
  const { document, operation, context } = prepared;
  const { graph, scope, request } = context;
  const operationName = operation.name?.value ?? request.operationName;
  // As for queries: the plan depends on the @skip/@include variables only.
  const conditions: Record<string, unknown> = {};
  for (const name of conditionVariables(document)) conditions[name] = prepared.coerced[name];
  const cacheKey = `${operationName ?? ''}\n${JSON.stringify(conditions)}\n${request.query}`;
  return runStage('plan', hooks.plan, { document, operationName, conditions, cacheKey }, scope, (input) => {
    const cached = graph.plans.get(input.cacheKey);
    if (cached) return cached;
    const built = buildQueryPlan(graph.index, input.document, input.operationName, input.conditions);
    graph.plans.set(input.cacheKey, built);
    return built;
  });
}

async function openStream(env: OperationEnvironment, prepared: PreparedOperation, hooks: StageHooks, options: StartOptions): Promise<EventStream> {
  const { context } = prepared;
  const { graph, request } = context;
  const plan = await planOf(prepared, hooks);
  const root = plan.fetches.find((fetch) => fetch.fetchKind === 'root');
  if (!root || plan.fetches.filter((fetch) => fetch.fetchKind === 'root').length !== 1) {
    throw new RouterError('QUERY_PLANNING_FAILED', 'A subscription must select exactly one field of one subgraph.', { status: 400 });
  }
  const subgraph = graph.subgraphs.get(root.subgraph);
  if (!subgraph || subgraph.record.kind !== 'graphql') {
    throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', `Subgraph "${root.subgraph}" does not serve subscriptions over GraphQL.`, { status: 400 });
  }
  const settings: SubscriptionSettings = subgraph.record.subscription ?? { url: subgraph.url, protocol: 'ws', websocketSubprotocol: 'auto' };
  const target: UpstreamTarget = {
    subgraph: root.subgraph,
    settings,
    headers: env.fetcher.headersFor(graph, root.subgraph, request.headers),
    initPayload: options.initPayload,
    query: root.operation,
    operationName: root.operationName,
    variables: pick(context.variables, root.variableUsages),
  };
  // The subgraph's protocol from its compose-file `subscription` section: WebSocket, or SSE over GET or POST.
  const upstream = settings.protocol === 'ws' ? subscribeUpstream(target) : subscribeUpstreamSse(target);
  return eventStream(env, prepared, plan, root.id, upstream, hooks);
}

function pick(source: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(source, name)) picked[name] = source[name];
  return picked;
}

function eventStream(
  env: OperationEnvironment,
  prepared: PreparedOperation,
  plan: QueryPlan,
  rootFetchId: number,
  upstream: UpstreamSubscription,
  hooks: StageHooks,
): EventStream {
  let done = false;
  const finished = (): IteratorResult<GraphQLResponseBody> => ({ done: true, value: undefined });
  const stream: EventStream = {
    async next() {
      if (done) return finished();
      let event: SubgraphResponse | undefined;
      try {
        event = await upstream.next();
      } catch (error) {
        done = true;
        throw error;
      }
      if (done || event === undefined) {
        done = true;
        return finished();
      }
      return { done: false, value: await answerEvent(env, prepared, plan, rootFetchId, event, hooks) };
    },
    async return() {
      done = true;
      upstream.close();
      return finished();
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return stream;
}

/** One event: the plan's other fetches, merge and respond, on a fork of the subscription's state. */
async function answerEvent(
  env: OperationEnvironment,
  prepared: PreparedOperation,
  plan: QueryPlan,
  rootFetchId: number,
  event: SubgraphResponse,
  hooks: StageHooks,
): Promise<GraphQLResponseBody> {
  const { context } = prepared;
  const { graph, request } = context;
  const scope: StageScope = { state: context.scope.state.fork(), signal: context.scope.signal };
  try {
    const outcome = await executePlan(plan, {
      variables: context.variables,
      multiFetch: env.config.engine.enable_multi_fetch,
      subgraphErrors: env.config.subgraph_error_propagation,
      satisfies: (typename, condition) => graph.index.satisfies(typename, condition),
      isObjectType: (typename) => graph.index.type(typename)?.kind === 'OBJECT',
      runFetch: async (call) => {
        // The root fetch is the subgraph's stream: its answer is this event.
        if (call.kind === 'root' && call.fetchId === rootFetchId) return event;
        const subgraphRequest: SubgraphRequest = { ...call, headers: env.fetcher.headersFor(graph, call.subgraph, request.headers), subscription: true };
        return runStage('fetch', hooks.fetch, subgraphRequest, scope, (input) => env.fetcher.send(graph, input, scope.signal));
      },
    });
    const merged: MergeOutput = await runStage('merge', hooks.merge, { plan, tree: outcome.tree, errors: outcome.errors }, scope, (input) => {
      const errors = [...input.errors];
      const data = graph.shaper.shape(input.tree, input.plan.operation.rootType, input.plan.operation.selections, [], errors);
      return { data, errors };
    });
    const body: GraphQLResponseBody = { data: merged.data };
    if (merged.errors.length > 0) body.errors = [...merged.errors];
    const answer = await runStage('respond', hooks.respond, { body, status: 200, headers: {} }, scope, identity);
    return answer.body;
  } catch (error) {
    return errorResponse(error, env.log).body;
  }
}
