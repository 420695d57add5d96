import type { CircuitBreakerPolicy, RetryPolicy } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import type { SubgraphRequest, SubgraphResponse, Transport } from './subgraph-types.js';

/** HTTP statuses that say "try again": the subgraph or a proxy in front of it is briefly unavailable. */
const RETRYABLE_STATUS = new Set([502, 503, 504]);

/** Whether a failed call may be retried: it never reached the subgraph's resolvers, or a proxy said so. */
function retryable(error: unknown): boolean {
  if (!(error instanceof RouterError) || error.code !== 'SUBGRAPH_REQUEST_FAILED') return false;
  const status = (error.extensions?.http as { status?: number } | undefined)?.status;
  return status === undefined || RETRYABLE_STATUS.has(status);
}

/**
 * Retries failed queries with exponential backoff and jitter. Mutations are
 * never retried (they may have run); timeouts are not either (the subgraph
 * already had its full time).
 */
export function withRetry(transport: Transport, policy: RetryPolicy): Transport {
  if (!policy.enabled || policy.max_attempts <= 1) return transport;
  return async function sendWithRetry(request: SubgraphRequest, signal: AbortSignal): Promise<SubgraphResponse> {
    if (request.operationType !== 'query') return transport(request, signal);
    const started = Date.now();
    let delay = policy.interval;
    for (let attempt = 1; ; attempt++) {
      try {
        return await transport(request, signal);
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
 * failures it opens and calls fail at once with `SUBGRAPH_CIRCUIT_OPEN`;
 * after `cooldown` one trial call may pass: success closes it, failure
 * opens it again.
 */
export function withCircuitBreaker(transport: Transport, policy: CircuitBreakerPolicy, subgraph: string): Transport {
  if (!policy.enabled) return transport;
  let failures = 0;
  let openUntil = 0;
  let trialInFlight = false;
  return async function sendThroughBreaker(request: SubgraphRequest, signal: AbortSignal): Promise<SubgraphResponse> {
    const now = Date.now();
    const open = failures >= policy.failure_threshold;
    if (open && (now < openUntil || trialInFlight)) {
      throw new RouterError('SUBGRAPH_CIRCUIT_OPEN', `Subgraph "${subgraph}" is failing; requests to it are paused for a moment.`);
    }
    const trial = open;
    if (trial) trialInFlight = true;
    try {
      const response = await transport(request, signal);
      failures = 0;
      return response;
    } catch (error) {
      if (error instanceof RouterError && (error.code === 'SUBGRAPH_REQUEST_FAILED' || error.code === 'SUBGRAPH_TIMEOUT')) {
        failures++;
        if (failures >= policy.failure_threshold) openUntil = Date.now() + policy.cooldown;
      }
      throw error;
    } finally {
      if (trial) trialInFlight = false;
    }
  };
}
