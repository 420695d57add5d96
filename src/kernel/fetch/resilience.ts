import type { CircuitBreakerPolicy, RetryPolicy } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import type { StageWrapper } from '../pipeline/hooks.js';
import { failureKind, httpStatus } from './subgraph-failure.js';

/** What wraps a subgraph call (the fetch stage) for `aroundStage`. */
export type FetchWrapper = StageWrapper<'fetch'>;

/** HTTP statuses that say "try again": the subgraph or a proxy in front of it is briefly unavailable. */
const RETRYABLE_STATUS = new Set([502, 503, 504]);

/** Whether a failed call may be retried: it never reached the subgraph's resolvers, or a proxy said so. */
function retryable(error: unknown): boolean {
  if (failureKind(error) !== 'unavailable') return false;
  const status = httpStatus(error as RouterError);
  return status === undefined || RETRYABLE_STATUS.has(status);
}

/** Whether `policy` retries at all. */
export function retries(policy: RetryPolicy): boolean {
  return policy.enabled && policy.max_attempts > 1;
}

/**
 * Retries failed queries with exponential backoff and jitter. Mutations are
 * never retried (they may have run); timeouts are not either (the subgraph
 * already had its full time).
 */
export function retryWrapper(policy: RetryPolicy): FetchWrapper {
  return async function sendWithRetry(request, perform, signal) {
    if (request.operationType !== 'query') return perform(request);
    const started = Date.now();
    let delay = policy.interval;
    for (let attempt = 1; ; attempt++) {
      try {
        return await perform(request);
      } catch (error) {
        const wait = delay / 2 + Math.random() * delay;
        const late = Date.now() + wait - started > policy.max_duration;
        if (attempt >= policy.max_attempts || late || signal.aborted || !retryable(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
        delay *= 2;
      }
    }
  };
}

/**
 * A per-subgraph circuit breaker: after `failure_threshold` consecutive
 * failures of the subgraph itself (timeouts, unreachable, 5xx:
 * subgraph-failure.ts) it opens and calls fail at once with
 * `SUBGRAPH_CIRCUIT_OPEN`; after `cooldown` one trial call may pass: success
 * closes it, failure opens it again. Other errors leave the count as it is.
 */
export function circuitBreakerWrapper(policy: CircuitBreakerPolicy, subgraph: string): FetchWrapper {
  let failures = 0;
  let openUntil = 0;
  let trialInFlight = false;
  return async function sendThroughBreaker(request, perform, signal) {
    const now = Date.now();
    const open = failures >= policy.failure_threshold;
    if (open && (now < openUntil || trialInFlight)) {
      throw new RouterError('SUBGRAPH_CIRCUIT_OPEN', `Subgraph "${subgraph}" is failing; requests to it are paused for a moment.`);
    }
    const trial = open;
    if (trial) trialInFlight = true;
    try {
      const response = await perform(request);
      failures = 0;
      return response;
    } catch (error) {
      // Not a request the router could not make, a 4xx or a caller that gave up: one client must not open the circuit for all.
      if (failureKind(error, signal) !== 'not-the-subgraph') {
        failures++;
        if (failures >= policy.failure_threshold) openUntil = Date.now() + policy.cooldown;
      }
      throw error;
    } finally {
      if (trial) trialInFlight = false;
    }
  };
}
