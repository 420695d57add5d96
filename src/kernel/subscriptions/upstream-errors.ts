/**
 * What a client sees of the errors a subgraph sent when its subscription
 * failed: the errors of an SSE answer that is not a stream, of a WebSocket
 * `error` message, of a legacy `connection_error`. They pass through the
 * same `subgraph_error_propagation` rules as a query's subgraph errors
 * (execute/subgraph-errors.ts), since they come from the same untrusted
 * server: each is filtered as `pass-through` filters it (message, a clean
 * path, locations unless omitted, the allowed extension and top-level
 * fields, the default code, the service name), and none pass when
 * `enabled: false`, or in `wrapped` mode with `omit_extensions` (a wrapped
 * query error then shows none of the subgraph's text either). The router's `SUBSCRIPTION_UPSTREAM_FAILED` carries the
 * result in `extensions.errors`; its message quotes at most the first error
 * that passed.
 */
import { coreConfigShape, type SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import type { GraphQLErrorJSON } from '../errors.js';
import { subgraphErrorPolicy, type SubgraphErrorPolicy } from '../execute/subgraph-errors.js';

/** The propagation of a config without the section (callers without a config). */
const DEFAULT_PROPAGATION: SubgraphErrorPropagationConfig = coreConfigShape.subgraph_error_propagation.parse(undefined);

/**
 * Each config's rules in `pass-through` mode: the failure is already one
 * error per subgraph (the `wrapped` mode's role), so its `extensions.errors`
 * lists the filtered errors themselves.
 */
const passThrough = new WeakMap<SubgraphErrorPropagationConfig, SubgraphErrorPolicy>();

function filterOf(propagation: SubgraphErrorPropagationConfig): SubgraphErrorPolicy {
  let policy = passThrough.get(propagation);
  if (!policy) {
    policy = subgraphErrorPolicy(propagation.mode === 'pass-through' ? propagation : { ...propagation, mode: 'pass-through' });
    passThrough.set(propagation, policy);
  }
  return policy;
}

/**
 * The subgraph's errors as clients may see them, or undefined when none may
 * be shown. `errors` is what the subgraph sent: a list of errors or one
 * error object (subscriptions-transport-ws sends one); entries that are not
 * objects with a string `message` are dropped.
 */
export function forwardedUpstreamErrors(subgraph: string, errors: unknown, propagation: SubgraphErrorPropagationConfig = DEFAULT_PROPAGATION): GraphQLErrorJSON[] | undefined {
  if (!propagation.enabled || (propagation.mode === 'wrapped' && propagation.omit_extensions)) return undefined;
  const list = (Array.isArray(errors) ? errors : [errors]).filter(isErrorObject);
  if (list.length === 0) return undefined;
  const out: GraphQLErrorJSON[] = [];
  // A subscription's root fetch answers at the client's root, so the subgraph's path is the client's (cleaned by the policy).
  filterOf(propagation).report(out, subgraph, list, (error) => error.path);
  return out;
}

function isErrorObject(value: unknown): value is GraphQLErrorJSON {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { message?: unknown }).message === 'string';
}
