/**
 * `authorization`: the supergraph's `@authenticated`, `@requiresScopes` and
 * `@policy`, enforced before fetching. In the plan stage the operation loses
 * the fields the caller may not see (per graph, operation and grant,
 * memoised within a byte bound, operation-memo.ts; the plan of the filtered
 * text is cached as any plan); after the merge those fields come back
 * `null` with an `UNAUTHORIZED_FIELD_OR_TYPE`
 * error at their path (or, with `reject_operation_if_unauthorized`, the
 * operation fails with 403). The caller's identity comes from the
 * `authentication` plugin's request state; `require_authentication` refuses
 * requests without one (401), except introspection-only documents when
 * `authentication.ignore_introspection` says so. docs/authentication.md
 */
import type { DocumentNode } from 'graphql';
import {
  definePlugin,
  RouterError,
  privateAnswer,
  StateKey,
  toErrorResponse,
  z,
  type GraphInfo,
  type MaybePromise,
  type OperationRequest,
  type PluginFactory,
  type RequestState,
  type StageEvent,
} from '../../src/index.js';
import { AUTHENTICATION, INTROSPECTION_WITHOUT_TOKEN, type AuthenticatedIdentity } from '../authentication/index.js';
import { applyRemovals, UNAUTHORIZED_CODE } from './apply-removals.js';
import { authorizationConfigSchema, authorizationSection } from './config.js';
import { authorizationErrors } from './errors.js';
import { filterOperation, operationFacts, type OperationFacts, type RemovalNode } from './filter-operation.js';
import { GraphRules, type Grant } from './graph-rules.js';
import { isIntrospectionOnly } from './introspection-only.js';
import { OperationMemo } from './operation-memo.js';

export { authorizationConfigSchema, type AuthorizationConfig, type AuthorizationConfigInput } from './config.js';
export { UNAUTHORIZED_CODE } from './apply-removals.js';

/** What a policy hook is asked about. */
export interface PolicyContext {
  /** The caller's identity; undefined without a (valid) token. */
  readonly identity: AuthenticatedIdentity | undefined;
  /** The operation request (headers, client name, origin). */
  readonly request: OperationRequest;
}

/**
 * Decides one `@policy` name for one request: true grants it. Called once
 * per request for each policy name the operation's rules use. A throw or
 * rejection denies the policy (and is logged).
 */
export type PolicyHook = (policy: string, context: PolicyContext) => MaybePromise<boolean>;

const optionsSchema = authorizationConfigSchema.extend({
  /** Evaluates `@policy` names (code only, not from the config file). Default: none, so every policy is denied. */
  policy: z.custom<PolicyHook>((value) => typeof value === 'function', { error: 'must be a function (policy, context) => boolean' }).optional(),
});

interface GraphAuthorization {
  readonly rules: GraphRules;
  /** Facts and filtered forms per document, bounded by entries and bytes. */
  readonly memo: OperationMemo;
}

/** The request, kept for the policy hook. */
const REQUEST = new StateKey<OperationRequest>('authorization-request');
/**
 * A request without a token that `require_authentication` lets on only if its
 * document turns out to be introspection only (`authentication.ignore_introspection`):
 * judged once parsed, before validation; again in the plan stage should the parse stage have been answered by another plugin.
 */
const TOKEN_REQUIRED_UNLESS_INTROSPECTION = new StateKey<true>('authorization-token-required-unless-introspection');
/** What the plan stage removed, for the merge. */
const REMOVALS = new StateKey<{ removals: RemovalNode; graph: GraphRules }>('authorization-removals');

/** The plugin's error codes (docs/errors.md); exported so its `ErrorCodes` augmentation reaches the published types. */
export { authorizationErrors } from './errors.js';

/** `useAuthorization(options)`: options as the `authorization` section, plus a `policy` hook in code. */
export const useAuthorization: PluginFactory<typeof optionsSchema> = definePlugin({
  name: 'authorization',
  config: authorizationSection,
  options: optionsSchema,
  // Reads the identity the authentication plugin leaves in request state.
  optionalDependsOn: ['authentication'],
  errors: authorizationErrors,
  setup(ctx, options) {
    const graphs = new WeakMap<GraphInfo, GraphAuthorization>();
    const forGraph = (graph: GraphInfo): GraphAuthorization => {
      let known = graphs.get(graph);
      if (!known) {
        known = { rules: new GraphRules(graph), memo: new OperationMemo() };
        graphs.set(graph, known);
      }
      return known;
    };
    const policy = options.policy;
    const refused = ctx.metrics.counter('authorization_refused_fields_total', 'Fields removed from operations because the caller may not see them', ['reason']);
    ctx.log.info(
      { require_authentication: options.require_authentication, reject_operation_if_unauthorized: options.reject_operation_if_unauthorized, policy_hook: policy !== undefined },
      'Authorization enabled',
    );

    const grantOf = async (facts: OperationFacts, identity: AuthenticatedIdentity | undefined, request: OperationRequest | undefined, log: typeof ctx.log): Promise<Grant> => {
      const scopes = identity ? new Set(facts.scopes.filter((scope) => identity.scopes.has(scope))) : new Set<string>();
      const policies = new Set<string>();
      if (policy && request && facts.policies.length > 0) {
        const decisions = await Promise.all(
          facts.policies.map(async (name) => {
            try {
              return (await policy(name, { identity, request })) === true;
            } catch (error) {
              log.warn({ policy: name, err: error }, 'policy hook failed; the policy is denied');
              return false;
            }
          }),
        );
        facts.policies.forEach((name, i) => decisions[i] && policies.add(name));
      }
      return { authenticated: identity !== undefined, scopes, policies };
    };

    /** The plan stage on a graph with directives: the operation without the fields the caller may not see. */
    const filterPlan = async (event: StageEvent<'plan'>, authorization: GraphAuthorization): Promise<void> => {
      const input = event.input;
      const { rules, memo } = authorization;
      const facts = memo.factsOf(input.document, input.operationName, () => operationFacts(rules, input.document, input.operationName));
      if (!facts.restricted) return;
      // Another caller may get another answer to the same request: no shared cache may keep this one.
      event.state.set(privateAnswer, true);
      const identity = event.state.get(AUTHENTICATION);
      const grant = await grantOf(facts, identity, event.state.get(REQUEST), event.log);
      // What the filtered form depends on besides the document: small, whatever the document's size.
      const formKey = `${grant.authenticated ? 1 : 0} ${[...grant.scopes].join(' ')} | ${[...grant.policies].join(' ')}\n${JSON.stringify(input.operationName ?? null)}\n${JSON.stringify(input.conditions)}`;
      const filtered = memo.formOf(input.document, formKey, () => filterOperation(rules, input.document, input.operationName, input.conditions, grant) ?? 'all');
      if (filtered === 'all') return;
      for (const _ of filtered.coordinates) refused.inc({ reason: grant.authenticated ? 'forbidden' : 'unauthenticated' });
      // A subscription selects one root field: without it there is no stream to send nulls on, so it is refused.
      const refusedRoot = filtered.operationType === 'subscription' ? filtered.removals.removed[0] : undefined;
      if (refusedRoot) throw new RouterError(UNAUTHORIZED_CODE, `Unauthorized to access ${refusedRoot.coordinate}: ${refusedRoot.reason}.`, { status: 403 });
      if (options.reject_operation_if_unauthorized) {
        throw new RouterError(UNAUTHORIZED_CODE, `Unauthorized: the operation selects fields the caller may not see (${filtered.coordinates.join(', ')}).`, {
          status: 403,
        });
      }
      event.setInput({ ...input, document: filtered.document, cacheKey: filtered.cacheKey });
      event.state.set(REMOVALS, { removals: filtered.removals, graph: rules });
    };

    return {
      hooks: {
        ...(options.require_authentication || policy
          ? {
              onRequest(event) {
                if (policy) event.state.set(REQUEST, event.input);
                if (options.require_authentication && !event.state.has(AUTHENTICATION)) {
                  if (event.state.get(INTROSPECTION_WITHOUT_TOKEN) === true) event.state.set(TOKEN_REQUIRED_UNLESS_INTROSPECTION, true);
                  else event.respondWith(toErrorResponse(authenticationRequired()));
                }
              },
            }
          : {}),
        ...(options.require_authentication
          ? {
              onParse(event) {
                if (!event.state.has(TOKEN_REQUIRED_UNLESS_INTROSPECTION)) return;
                return (after) => requireTokenUnlessIntrospection(after.state, after.output);
              },
            }
          : {}),
        onPlan(event) {
          if (options.require_authentication && event.state.has(TOKEN_REQUIRED_UNLESS_INTROSPECTION)) requireTokenUnlessIntrospection(event.state, event.input.document);
          // The graph the operation was validated on (a reload during the request, or a running subscription re-planned on a new graph).
          const authorization = forGraph(event.input.graph);
          // Most graphs have no directive to enforce: nothing to wait for (the plugin is on in every router).
          if (!authorization.rules.any) return;
          return filterPlan(event, authorization);
        },
        onMerge(event) {
          const removed = event.state.get(REMOVALS);
          if (!removed) return;
          return (after) => {
            const errors = [...after.output.errors];
            const data = applyRemovals(after.output.data, removed.removals, removed.graph.apiSchema, errors);
            after.setOutput({ data, errors });
          };
        },
      },
    };
  },
});

/** 401 `UNAUTHENTICATED` for a request without a token where one is required. */
function authenticationRequired(): RouterError {
  return new RouterError('UNAUTHENTICATED', 'Authentication is required: send a valid token.', { status: 401, headers: { 'www-authenticate': 'Bearer' } });
}

/** Lets a tokenless request on when its document is introspection only; otherwise it ends with 401. */
function requireTokenUnlessIntrospection(state: RequestState, document: DocumentNode): void {
  if (!isIntrospectionOnly(document)) throw authenticationRequired();
  state.delete(TOKEN_REQUIRED_UNLESS_INTROSPECTION);
}
