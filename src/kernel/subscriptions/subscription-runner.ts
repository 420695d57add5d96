/**
 * Operations that may stream: request, parse, validate and plan run once
 * (through their stages, as for any operation); a subscription then opens
 * its root field's subgraph stream, and each event runs the plan's
 * remaining fetches (fetch stage), the merge stage and the respond stage.
 * Queries and mutations sent on a WebSocket get one answer.
 */
import { validate, type DocumentNode, type GraphQLError } from 'graphql';
import { RouterError } from '../errors.js';
import { executePlan } from '../execute/execute-plan.js';
import { setOwn } from '../own-property.js';
import { NO_HEADERS, type SubgraphRequest, type SubgraphResponse } from '../fetch/subgraph-types.js';
import { mayHoldUploads } from '../fetch/variables-json.js';
import { subgraphHeaders } from '../builtins/header-rules.js';
import type { SubscriptionSettings } from '../graph/execution-config.js';
import { runStage, type StageScope } from '../pipeline/stage-runner.js';
import { RequestState } from '../pipeline/state.js';
import type { GraphQLResponseBody, MergeOutput, OperationRequest, OperationResponse } from '../pipeline/stages.js';
import type { FetchNode, QueryPlan } from '../plan/query-plan.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import { errorResponse } from '../router/error-response.js';
import { answerPrepared, prepareOperation, uploadsInSubscription, type OperationEnvironment, type PreparedOperation } from '../router/operation-runner.js';
import { planStage } from '../router/plan-stage.js';
import type { StageHooks } from '../router/plugin-host.js';
import type { ClientBuffer } from './client-buffer.js';
import { maxEventBytesOf, subscribeUpstreamSse } from './upstream-sse.js';
import { asGraphQLError, LiveSubscriptions, subscriptionInvalidated } from './live-subscriptions.js';
import { withConnectionHeaders } from './connection-headers.js';
import { watchStreamDeadline } from './stream-deadline.js';
import type { SharedSubscription } from './upstream-hub.js';
import { subscribeUpstream, type UpstreamTarget } from './upstream-ws.js';

/** An operation started: one answer, or a stream of them. */
export type StartedOperation = { readonly kind: 'single'; readonly response: OperationResponse } | { readonly kind: 'stream'; readonly events: EventStream };

/** The events of a subscription; `return()` ends it at once (the upstream is closed). */
export interface EventStream extends AsyncIterableIterator<GraphQLResponseBody> {
  return(): Promise<IteratorResult<GraphQLResponseBody>>;
}

/** What a started subscription needs beside the operation. */
export interface StartOptions {
  /** The client's `connection_init` payload, forwarded to the subgraph. Default: none. */
  readonly initPayload?: Readonly<Record<string, unknown>>;
  /** The router's running subscriptions (deduplication, hot reload). Default: one set per environment. */
  readonly live?: LiveSubscriptions;
  /** The client's bound on queued events (`subscriptions.max_queued_bytes`). Default: none. */
  readonly buffer?: ClientBuffer;
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
        const prepared = await prepareOperation(env, current, scope, hooks, request.variables);
        if (!('document' in prepared)) {
          answer = prepared;
        } else if (prepared.operation.operation !== 'subscription') {
          answer = await answerPrepared(prepared);
        } else {
          if (!env.config.subscriptions.enabled) {
            throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', 'Subscriptions are disabled (subscriptions.enabled: false).', { status: 400 });
          }
          // No subgraph protocol carries files: refused before the subgraph is asked (JSON would write each file as null).
          if (current.variables !== undefined && mayHoldUploads(current.variables)) throw uploadsInSubscription();
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

/**
 * The progressive `@override` labels each subscription drew when it started:
 * planned again on a reloaded graph with the same draw, or a new draw could
 * move its field to another subgraph and end it.
 */
const drawnLabels = new WeakMap<PreparedOperation, readonly string[]>();

/** The plan stage for a subscription on `graph` (at the start, and again on each reloaded graph). */
function planOn(graph: LoadedGraph, prepared: PreparedOperation, hooks: StageHooks): Promise<QueryPlan> {
  const { document, operation, context, coerced } = prepared;
  const operationName = operation.name?.value ?? context.request.operationName;
  let overrideLabels = drawnLabels.get(prepared);
  if (!overrideLabels) drawnLabels.set(prepared, (overrideLabels = graph.overrideLabels.draw()));
  return planStage(graph, hooks, context.scope, { document, operationName, coercedVariables: coerced, query: context.request.query, overrideLabels });
}

/** What a subscription runs on: the graph, its plan, and the plan's root fetch (the subgraph stream). */
interface StreamBasis {
  readonly graph: LoadedGraph;
  readonly plan: QueryPlan;
  readonly root: FetchNode;
  readonly settings: SubscriptionSettings;
}

/** The basis of a subscription on a graph; throws when the graph cannot serve it. */
function basisOn(graph: LoadedGraph, plan: QueryPlan): StreamBasis {
  const roots = plan.fetches.filter((fetch) => fetch.fetchKind === 'root');
  const root = roots[0];
  if (!root || roots.length !== 1) {
    throw new RouterError('QUERY_PLANNING_FAILED', 'A subscription must select exactly one field of one subgraph.', { status: 400 });
  }
  const subgraph = graph.subgraphs.get(root.subgraph);
  if (subgraph?.record.kind !== 'graphql') {
    throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', `Subgraph "${root.subgraph}" does not serve subscriptions over GraphQL.`, { status: 400 });
  }
  const settings: SubscriptionSettings = subgraph.record.subscription ?? { url: subgraph.url, protocol: 'ws', websocketSubprotocol: 'auto' };
  return { graph, plan, root, settings };
}

/** The default set of running subscriptions, for callers that bring none (one per environment). */
const defaultLive = new WeakMap<OperationEnvironment, LiveSubscriptions>();

function liveOf(env: OperationEnvironment, options: StartOptions): LiveSubscriptions {
  if (options.live) return options.live;
  let live = defaultLive.get(env);
  if (!live) defaultLive.set(env, (live = new LiveSubscriptions()));
  return live;
}

async function openStream(env: OperationEnvironment, prepared: PreparedOperation, hooks: StageHooks, options: StartOptions): Promise<EventStream> {
  const { context } = prepared;
  const { graph } = context;
  const basis = basisOn(graph, await planOn(graph, prepared, hooks));
  const { root, settings } = basis;
  const target: UpstreamTarget = {
    subgraph: root.subgraph,
    settings,
    headers: withConnectionHeaders(context.scope.state, subgraphHeaders(context.scope.state, root.subgraph)),
    initPayload: options.initPayload,
    query: root.operation,
    operationName: root.operationName,
    variables: pick(context.variables, root.variableUsages),
  };
  // Clients asking the subgraph for the very same thing share one subscription (upstream-hub.ts).
  // The subgraph's protocol is from its compose-file `subscription` section: WebSocket, or SSE over GET or POST.
  const live = liveOf(env, options);
  const maxEvent = maxEventBytesOf(env.config.traffic_shaping, root.subgraph);
  const upstream = live.hub.subscribe(
    target,
    (opened) =>
      opened.settings.protocol === 'ws'
        ? subscribeUpstream(opened, maxEvent, env.config.subgraph_error_propagation)
        : subscribeUpstreamSse(opened, maxEvent, env.config.subgraph_error_propagation),
    options.buffer,
  );
  return eventStream(env, prepared, basis, upstream, hooks, live);
}

function pick(source: Readonly<Record<string, unknown>>, names: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const name of names) if (Object.hasOwn(source, name)) setOwn(picked, name, source[name]);
  return picked;
}

/** Validation results by graph and document: clients of one operation usually share its parsed document, so a reload validates it once. */
const validations = new WeakMap<LoadedGraph, WeakMap<DocumentNode, readonly GraphQLError[]>>();

function validationOn(graph: LoadedGraph, document: DocumentNode): readonly GraphQLError[] {
  let byDocument = validations.get(graph);
  if (!byDocument) validations.set(graph, (byDocument = new WeakMap()));
  let errors = byDocument.get(document);
  if (!errors) byDocument.set(document, (errors = validate(graph.apiSchema, document)));
  return errors;
}

/**
 * Whether a subscription can go on under a reloaded graph: its operation
 * still validates, plans to the same subgraph operation (through the plan
 * stage, so plan hooks such as authorization decide on the new graph), and
 * that subgraph's subscription endpoint is the same. Returns the new basis,
 * or why not (a text, or a plan hook's error).
 */
async function revalidate(prepared: PreparedOperation, current: StreamBasis, graph: LoadedGraph, hooks: StageHooks): Promise<StreamBasis | string | RouterError> {
  const errors = validationOn(graph, prepared.document);
  if (errors.length > 0) return `the operation is no longer valid (${errors[0]!.message})`;
  let next: StreamBasis;
  try {
    next = basisOn(graph, await planOn(graph, prepared, hooks));
  } catch (error) {
    // A plan hook's refusal (authorization under the new graph's rules) is the client's answer as it is.
    if (error instanceof RouterError && error.code !== 'QUERY_PLANNING_FAILED' && error.code !== 'SUBSCRIPTION_NOT_SUPPORTED') return error;
    return `it cannot be planned (${error instanceof Error ? error.message : String(error)})`;
  }
  const before = current.root;
  const after = next.root;
  if (after.subgraph !== before.subgraph) return `its field moved from subgraph "${before.subgraph}" to "${after.subgraph}"`;
  if (after.operation !== before.operation || after.operationName !== before.operationName) return `its operation on subgraph "${after.subgraph}" changed`;
  const [was, now] = [current.settings, next.settings];
  if (was.url !== now.url || was.protocol !== now.protocol || was.websocketSubprotocol !== now.websocketSubprotocol) {
    return `subgraph "${after.subgraph}" now serves subscriptions at ${now.url} (${now.protocol})`;
  }
  return next;
}

function eventStream(
  env: OperationEnvironment,
  prepared: PreparedOperation,
  initial: StreamBasis,
  upstream: SharedSubscription,
  hooks: StageHooks,
  live: LiveSubscriptions,
): EventStream {
  let done = false;
  let basis = initial;
  const finished = (): IteratorResult<GraphQLResponseBody> => ({ done: true, value: undefined });
  // Re-planning is asynchronous (plan hooks may wait): one at a time, in reload order, only for the newest graph.
  // Events meanwhile run on the previous basis, under the previous graph's rules.
  let newest: LoadedGraph = initial.graph;
  let replanned: Promise<void> = Promise.resolve();
  const unregister = live.add({
    graphChanged(graph) {
      if (done || graph === newest) return;
      newest = graph;
      replanned = replanned.then(async () => {
        if (done || graph !== newest) return;
        let verdict: StreamBasis | string | RouterError;
        try {
          verdict = await revalidate(prepared, basis, graph, hooks);
        } catch (error) {
          // Never a rejection left unhandled (it would end the process): the stream ends, saying why.
          env.log.error({ err: error }, 'A running subscription could not be planned again after a graph reload');
          verdict = `it could not be checked (${error instanceof Error ? error.message : String(error)})`;
        }
        if (done) return;
        if (typeof verdict === 'string') upstream.fail(subscriptionInvalidated(verdict));
        else if (verdict instanceof RouterError) {
          // A plugin's failure is the operator's to see, as on a first plan; a refusal (authorization) is only the client's.
          if (verdict.code === 'PLUGIN_ERROR') env.log.error({ err: verdict.cause ?? verdict, plugin: verdict.plugin }, verdict.message);
          upstream.fail(asGraphQLError(verdict));
        } else basis = verdict;
      });
    },
  });
  // A plugin's deadline for this request (a token that expires): this client's view ends then, with its error.
  const unwatch = watchStreamDeadline(prepared.context.scope.state, (error) => upstream.fail(error));
  const end = (): void => {
    done = true;
    unregister();
    unwatch();
  };
  const stream: EventStream = {
    async next() {
      if (done) return finished();
      let event: SubgraphResponse | undefined;
      try {
        event = await upstream.next();
      } catch (error) {
        end();
        throw error;
      }
      if (done || event === undefined) {
        end();
        return finished();
      }
      return { done: false, value: await answerEvent(env, prepared, basis, event, hooks) };
    },
    async return() {
      end();
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
async function answerEvent(env: OperationEnvironment, prepared: PreparedOperation, basis: StreamBasis, event: SubgraphResponse, hooks: StageHooks): Promise<GraphQLResponseBody> {
  const { context } = prepared;
  const { graph, plan } = basis;
  const rootFetchId = basis.root.id;
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
        const subgraphRequest: SubgraphRequest = { ...call, headers: NO_HEADERS, subscription: true };
        return runStage('fetch', hooks.fetch, subgraphRequest, scope, (input, signal) => env.fetcher.send(graph, input, signal));
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
