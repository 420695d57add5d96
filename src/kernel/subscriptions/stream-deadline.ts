/**
 * When a subscription must end, set by a plugin for its request: the
 * `authentication` plugin ends a subscription when the token it started
 * with expires, since a stream outlives the check made when it started.
 * The subscription runner ends the client's stream at the deadline with
 * the error given (its last message, then `complete`); the subgraph
 * subscription stays open for other clients sharing it.
 */
import type { GraphQLError } from 'graphql';
import type { RouterError } from '../errors.js';
import { asGraphQLError } from './live-subscriptions.js';
import { type RequestState, StateKey } from '../pipeline/state.js';

/** A time (milliseconds since the epoch) and the error a stream still running then ends with. */
export interface StreamDeadline {
  readonly at: number;
  readonly error: RouterError;
}

const STREAM_DEADLINE = new StateKey<StreamDeadline>('stream-deadline');

/**
 * Ends a subscription started by this request at `at` (milliseconds since
 * the epoch) with `error`; the earliest of several deadlines wins. For a
 * query or mutation it has no effect. Call it before the operation starts
 * (the `request` stage, or any stage up to `plan`).
 */
export function endStreamBy(state: RequestState, at: number, error: RouterError): void {
  const current = state.get(STREAM_DEADLINE);
  if (current === undefined || at < current.at) state.set(STREAM_DEADLINE, { at, error });
}

/** setTimeout's longest delay (about 24.8 days); a later deadline is reached in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `expire` with the request's deadline error once its time comes;
 * returns what cancels it (a no-op without a deadline).
 */
export function watchStreamDeadline(state: RequestState, expire: (error: GraphQLError) => void): () => void {
  const deadline = state.get(STREAM_DEADLINE);
  if (deadline === undefined) return () => {};
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    const wait = deadline.at - Date.now();
    if (wait <= 0) {
      timer = undefined;
      expire(asGraphQLError(deadline.error));
      return;
    }
    timer = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
    // A subscription's deadline never keeps the process alive on its own.
    timer.unref();
  };
  arm();
  return () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
}
