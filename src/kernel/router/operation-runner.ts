import { GraphQLError, isNonNullType, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { CoreConfig } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import { executePlan, type ExecuteOptions } from '../execute/execute-plan.js';
import { SharedAnswers } from '../execute/shared-answers.js';
import type { SubgraphFetcher } from '../fetch/subgraph-fetcher.js';
import { NO_HEADERS, type SubgraphRequest } from '../fetch/subgraph-types.js';
import { mayHoldUploads } from '../fetch/variables-json.js';
import type { LoadedGraph } from '../graph/loaded-graph.js';
import type { Logger } from '../logger.js';
import { runStage, type StageScope } from '../pipeline/stage-runner.js';
import { RequestState } from '../pipeline/state.js';
import type { GraphQLResponseBody, MergeOutput, OperationRequest, OperationResponse } from '../pipeline/stages.js';
import { operationConditionVariables, selectOperation, type NSelection } from '../plan/normalize.js';
import type { QueryPlan } from '../plan/query-plan.js';
import type { ExecutionEngine } from './execution-engine.js';
import { errorResponse, requestErrors } from './error-response.js';
import { exactVariables } from './exact-integers.js';
import { isPlainObject } from './graphql-params.js';
import { runIntrospection } from './introspection.js';
import { planStage } from './plan-stage.js';
import type { StageHooks } from './plugin-host.js';
import { coerceVariables, withDefaultValues } from './variable-coercion.js';
import { checkDocumentShape, checkIntrospection, isStackOverflow, nestedTooDeeply } from './request-limits.js';

/** What every operation of a router shares. */
export interface OperationEnvironment {
  readonly config: CoreConfig;
  readonly hooks: () => StageHooks;
  readonly graph: () => LoadedGraph | undefined;
  readonly engine: (graph: LoadedGraph) => ExecutionEngine;
  readonly fetcher: SubgraphFetcher;
  readonly log: Logger;
}

/** The per-operation facts the execution engine needs (passed through envelop's context). */
export interface OperationContext {
  readonly env: OperationEnvironment;
  readonly graph: LoadedGraph;
  readonly request: OperationRequest;
  readonly scope: StageScope;
  /** Raw variables as the client sent them (forwarded to subgraphs). */
  readonly variables: Readonly<Record<string, unknown>>;
}

/** Runs one operation through every stage: request wraps the rest, respond ends it. */
export async function runOperation(env: OperationEnvironment, request: OperationRequest, signal: AbortSignal): Promise<OperationResponse> {
  const scope: StageScope = { state: new RequestState(), signal };
  const hooks = env.hooks();
  try {
    return await runStage('request', hooks.request, request, scope, async (current) => {
      const answer = await runPipeline(env, current, scope, hooks, request.variables);
      return runStage('respond', hooks.respond, answer, scope, identity);
    });
  } catch (error) {
    return errorResponse(error, env.log);
  }
}

function identity<T>(value: T): T {
  return value;
}

async function runPipeline(
  env: OperationEnvironment,
  request: OperationRequest,
  scope: StageScope,
  hooks: StageHooks,
  sentVariables: OperationRequest['variables'],
): Promise<OperationResponse> {
  try {
    const prepared = await prepareOperation(env, request, scope, hooks, sentVariables);
    if (!('document' in prepared)) return prepared;
    if (prepared.operation.operation === 'subscription') {
      // A file would be dropped on the way to the subgraph: said so, rather than pointing to a transport that cannot take it either.
      if (request.variables !== undefined && mayHoldUploads(request.variables)) throw uploadsInSubscription();
      // Subscriptions stream: served over WebSocket (subscriptions/), never through this single-answer path.
      const reason = env.config.subscriptions.enabled
        ? 'Subscriptions are served on /graphql over WebSocket (graphql-transport-ws, graphql-ws), Server-Sent Events (Accept: text/event-stream) or multipart (Accept: multipart/mixed;subscriptionSpec="1.0").'
        : 'Subscriptions are disabled (subscriptions.enabled: false).';
      throw new RouterError('SUBSCRIPTION_NOT_SUPPORTED', reason, { status: 400 });
    }
    return await answerPrepared(prepared);
  } catch (error) {
    return errorResponse(error, env.log);
  }
}

/**
 * Why a subscription carrying uploaded files (a multipart request's) is
 * refused: no subgraph subscription protocol (graphql-transport-ws,
 * graphql-ws, Server-Sent Events) can carry a file, and a file is never
 * dropped silently. 400 `SUBSCRIPTION_NOT_SUPPORTED`, before any subgraph
 * is contacted, on every path: here, subscriptions/subscription-runner.ts,
 * and the streamed answers' refusal of multipart bodies
 * (subscriptions/http-stream-request.ts).
 */
export const UPLOADS_IN_SUBSCRIPTION_MESSAGE =
  'File uploads are not supported for subscriptions: no subgraph subscription protocol (WebSocket, Server-Sent Events) can carry a file. Send files with a query or mutation.';

/** 400 `SUBSCRIPTION_NOT_SUPPORTED` for a subscription whose variables carry uploaded files. */
export function uploadsInSubscription(): RouterError {
  return new RouterError('SUBSCRIPTION_NOT_SUPPORTED', UPLOADS_IN_SUBSCRIPTION_MESSAGE, { status: 400 });
}

/** A parsed, valid operation with coerced variables: what execution (or a subscription) starts from. */
export interface PreparedOperation {
  readonly session: ReturnType<ExecutionEngine['begin']>;
  readonly document: DocumentNode;
  readonly operation: OperationDefinitionNode;
  readonly coerced: Readonly<Record<string, unknown>>;
  readonly context: OperationContext;
}

/** Executes a prepared query or mutation (envelop's `execute` wraps it). */
export async function answerPrepared(prepared: PreparedOperation): Promise<OperationResponse> {
  const { session, document, operation, coerced, context } = prepared;
  let body: GraphQLResponseBody;
  try {
    body = await session.execute(document, operation.name?.value ?? context.request.operationName, coerced, context);
  } catch (error) {
    if (isStackOverflow(error)) throw nestedTooDeeply('plan');
    throw error;
  }
  return { body, status: 200, headers: {} };
}

/**
 * The stages before execution (parse, document limits, validate,
 * introspection and method checks, variable coercion): a prepared operation,
 * or the answer that ends the request. Throws what `errorResponse` turns into answers.
 * `sentVariables`: the variables as the request arrived, before request hooks (exact-integers.ts reads the client's digits there).
 */
export async function prepareOperation(
  env: OperationEnvironment,
  request: OperationRequest,
  scope: StageScope,
  hooks: StageHooks,
  sentVariables?: OperationRequest['variables'],
): Promise<PreparedOperation | OperationResponse> {
  {
    const graph = env.graph();
    if (!graph) throw new RouterError('GRAPH_NOT_READY', 'The router has no graph loaded yet.', { status: 503 });
    const query = request.query;
    if (query === undefined || query === '') {
      // A hash no plugin turned into text: APQ clients stop hashing on this answer, where "Must provide query string." would fail every operation.
      if (isPlainObject(request.extensions?.persistedQuery)) throw new RouterError('PERSISTED_QUERY_NOT_SUPPORTED', 'PersistedQueryNotSupported', { status: 400 });
      throw new RouterError('BAD_REQUEST', 'Must provide query string.', { status: 400 });
    }
    const engine = env.engine(graph);
    const session = engine.begin(request, scope);
    let document: DocumentNode;
    try {
      document = await runStage('parse', hooks.parse, { query }, scope, (input) => session.parse(input.query));
    } catch (error) {
      if (error instanceof GraphQLError) return requestErrors([error], 'GRAPHQL_PARSE_FAILED');
      if (isStackOverflow(error)) throw nestedTooDeeply('parse');
      throw error;
    }
    // Linear in the document's size, and before validation: it bounds what validation and planning walk.
    // The configured limits (`limits.max_*`) ran already, as the request-limits internal plugin's parse after-hook.
    checkDocumentShape(document);
    let validationErrors: readonly GraphQLError[];
    try {
      validationErrors = await runStage('validate', hooks.validate, { document, schema: graph.apiSchema }, scope, (input) => session.validate(input.schema, input.document));
    } catch (error) {
      if (isStackOverflow(error)) throw nestedTooDeeply('validate');
      throw error;
    }
    if (validationErrors.length > 0) return requestErrors(validationErrors, 'GRAPHQL_VALIDATION_FAILED');
    // Introspection off holds whatever validation rules plugins set.
    checkIntrospection(document, env.config.introspection.enabled);
    const operation = selectOperation(document, request.operationName);
    // graphql-js's validate() lets an operation type the schema lacks through (its execute() refuses it): refused here, before planning.
    if (!graph.apiSchema.getRootType(operation.operation)) {
      return requestErrors([new GraphQLError(`Schema is not configured to execute ${operation.operation} operation.`, { nodes: operation })], 'GRAPHQL_VALIDATION_FAILED');
    }
    // Subscriptions may stream from a GET (EventSource can only GET); mutations never run from one.
    if (request.method === 'GET' && operation.operation === 'mutation') {
      throw new RouterError('METHOD_NOT_ALLOWED', `Can only perform a query operation from a GET request; send ${operation.operation}s with POST.`, {
        status: 405,
        headers: { allow: 'POST' },
      });
    }
    const coerced = coerceVariables(graph.apiSchema, operation.variableDefinitions ?? [], request.variables);
    if (coerced.errors) return requestErrors(coerced.errors, 'BAD_USER_INPUT');
    const nullCondition = operationConditionVariables(document, operation).find((name) => coerced.coerced[name] === null);
    if (nullCondition !== undefined) return requestErrors([nullConditionError(nullCondition)], 'BAD_USER_INPUT');
    // Integers past 2^53 the client's JSON held: ids get their exact digits back, other values that lost digits are refused.
    const exact = exactVariables(graph.apiSchema, operation.variableDefinitions ?? [], request.variables, sentVariables);
    if (exact.error) return requestErrors([exact.error], 'BAD_USER_INPUT');
    // Defaults written in: subgraph calls (and what keys on them: caches, in-flight sharing) carry every value they depend on.
    const context: OperationContext = { env, graph, request, scope, variables: withDefaultValues(operation.variableDefinitions, exact.variables) };
    return { session, document, operation, coerced: coerced.coerced, context };
  }
}

/**
 * The federated execution of a parsed, valid operation: plan -> fetch ->
 * merge, each through its stage. It is the `execute` that envelop plugins wrap.
 */
export async function executeFederated(
  document: DocumentNode,
  operationName: string | undefined,
  coercedVariables: Readonly<Record<string, unknown>>,
  context: OperationContext,
): Promise<GraphQLResponseBody> {
  const { env, graph, scope, request } = context;
  const hooks = env.hooks();
  const plan = await planStage(graph, hooks, scope, { document, operationName, coercedVariables, query: request.query });
  const outcome = await executePlan(plan, {
    variables: context.variables,
    mutationDataLost: plan.operation.operationType === 'mutation' ? mutationDataLost(graph, plan) : undefined,
    multiFetch: env.config.engine.enable_multi_fetch,
    subgraphErrors: env.config.subgraph_error_propagation,
    satisfies: (typename, condition) => graph.index.satisfies(typename, condition),
    isObjectType: (typename) => graph.index.type(typename)?.kind === 'OBJECT',
    runFetch: async (call) => {
      // Headers come from the `headers` rules' fetch hook (builtins/header-rules.ts), when there are rules.
      const subgraphRequest: SubgraphRequest = { ...call, headers: NO_HEADERS };
      try {
        return await runStage('fetch', hooks.fetch, subgraphRequest, scope, (input, signal) => env.fetcher.send(graph, input, signal));
      } catch (error) {
        if (error instanceof RouterError && error.code === 'PLUGIN_ERROR') env.log.error({ err: error.cause ?? error, plugin: error.plugin }, error.message);
        throw error;
      }
    },
  });
  const merged: MergeOutput = await runStage('merge', hooks.merge, { plan, tree: outcome.tree, errors: outcome.errors }, scope, (input) => {
    const errors = [...input.errors];
    // Identical answers shape into identical data: requests that shared every fetch share the result too.
    const trace = input.tree === outcome.tree && errors.length === 0 && !input.plan.introspection ? outcome.trace : undefined;
    const shared = trace && sharedData.get(input.plan, trace);
    if (shared) return { data: shared, errors };
    // A plugin may hand a plan with introspection to merge; it is answered only while introspection is on.
    const extraRoots = input.plan.introspection && env.config.introspection.enabled ? [runIntrospection(graph, input.plan.introspection, coercedVariables, errors)] : [];
    const data = graph.shaper.shape(input.tree, input.plan.operation.rootType, input.plan.operation.selections, extraRoots, errors);
    if (trace && data && errors.length === 0) sharedData.set(input.plan, trace, data);
    return { data, errors };
  });
  const body: GraphQLResponseBody = { data: merged.data };
  if (merged.errors.length > 0) body.errors = [...merged.errors];
  return body;
}

/** Shaped data per plan and answers (see execute/shared-answers.ts); shared, so never mutated. */
const sharedData = new SharedAnswers<QueryPlan, Record<string, unknown>>();

/** Per mutation plan: the client's selections of each non-null root field, by response key. */
const nonNullRootSelections = new WeakMap<QueryPlan, ReadonlyMap<string, readonly NSelection[]>>();

/**
 * A mutation's check after each step (execute-plan.ts): its data is lost when
 * shaping a non-null root field the step ran gives null, the way the
 * response will be shaped. Undefined when no root field is non-null.
 */
function mutationDataLost(graph: LoadedGraph, plan: QueryPlan): ExecuteOptions['mutationDataLost'] {
  let byKey = nonNullRootSelections.get(plan);
  if (!byKey) {
    const fields = graph.apiSchema.getMutationType()?.getFields() ?? {};
    const selections = new Map<string, NSelection[]>();
    for (const selection of plan.operation.selections) {
      if (selection.kind !== 'Field' || !fields[selection.name] || !isNonNullType(fields[selection.name]!.type)) continue;
      const same = selections.get(selection.responseKey);
      if (same) same.push(selection);
      else selections.set(selection.responseKey, [selection]);
    }
    byKey = selections;
    nonNullRootSelections.set(plan, byKey);
  }
  if (byKey.size === 0) return undefined;
  const { rootType } = plan.operation;
  return (tree, rootKeys) =>
    rootKeys.some((key) => {
      const selections = byKey.get(key);
      // The errors shaping reports are the response's to make, at the end.
      return selections !== undefined && graph.shaper.shape(tree, rootType, selections, [], []) === null;
    });
}

/**
 * A nullable variable with a default, sent as an explicit `null`, feeding
 * `@skip(if:)`/`@include(if:)` (`Boolean!`): validation allows it, but the
 * argument must not be null (graphql-js raises this error too). Without it
 * the field would be skipped or kept on the router's guess.
 */
function nullConditionError(name: string): GraphQLError {
  return new GraphQLError(`Variable "$${name}" is null, but it is the "if" of @skip or @include, which must be true or false.`);
}
