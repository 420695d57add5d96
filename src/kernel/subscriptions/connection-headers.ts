/**
 * Headers a plugin adds to the connection a subscription opens to its
 * subgraph (the WebSocket upgrade, the SSE request). That connection is
 * opened without the fetch stage, so fetch hooks never see it: the
 * authentication plugin's forwarded claims reach it through here. They go
 * over the header rules' output for that subgraph, and subscriptions share
 * a subgraph connection only when all these headers match.
 */
import { type RequestState, StateKey } from '../pipeline/state.js';

const connectionHeaders = new StateKey<Readonly<Record<string, string | undefined>>>('subscription-connection-headers');

/**
 * Adds headers (lower-case names) to the subgraph connection of the
 * subscription this request starts; a name given `undefined` is taken off
 * that connection, whatever the header rules put there.
 */
export function addSubscriptionConnectionHeaders(state: RequestState, headers: Readonly<Record<string, string | undefined>>): void {
  const current = state.get(connectionHeaders);
  state.set(connectionHeaders, current ? { ...current, ...headers } : { ...headers });
}

/** `base` (the header rules' output) with what plugins added (or took off) for this request's subscription connection. */
export function withConnectionHeaders(state: RequestState, base: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const added = state.get(connectionHeaders);
  if (!added) return base;
  const headers: Record<string, string> = { ...base };
  for (const name in added) {
    const value = added[name];
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return headers;
}
