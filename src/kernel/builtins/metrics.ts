/**
 * The kernel's metrics (`switchyard_operations_total`,
 * `switchyard_operation_duration_seconds`, `switchyard_subgraph_fetches_total`,
 * `switchyard_subgraph_fetch_duration_seconds`; see
 * metrics/router-instruments.ts) as an internal plugin. Registered first of
 * all plugins, so its hooks open and close around everyone else's. Its setup
 * returns no hooks when metrics are not recorded (`metrics.enabled` false and
 * no plugin `needsMetrics`): nothing runs per request then.
 *
 * What is timed:
 * - an operation: from the first `request` hook to the final answer, every
 *   plugin's work included (as a client sees it); counted once answered: a
 *   subscription whose stream started is not (its answer is the stream);
 * - a subgraph call: around the call itself (its fetch hook wraps the stage
 *   with `aroundStage`, outermost), so it covers the wait for a shared
 *   in-flight call and every retry, not other plugins' fetch hooks. Only
 *   calls the router made count: one a plugin answered (`respondWith`, a
 *   cache hit), or that a hook failed before it was made, is neither timed
 *   nor counted. The fetches an event of a subscription runs are not counted
 *   (they belong to the stream, not to an answered operation).
 */
import { RouterError } from '../errors.js';
import type { FetchWrapper } from '../fetch/resilience.js';
import { routerInstruments, type RouterInstruments } from '../metrics/router-instruments.js';
import type { StageOutcome } from '../pipeline/hooks.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';

export function metricsPlugin(): SwitchyardPlugin {
  return {
    name: 'switchyard/metrics',
    setup: (context) => {
      const instruments = routerInstruments(context.metrics);
      if (!instruments) return {};
      const timeCall = timedCall(instruments);
      return {
        hooks: {
          onRequest(event) {
            event.whenSettled(new OperationTiming(instruments, event.input.method).settled);
          },
          onFetch(event) {
            if (event.input.subscription !== true) event.aroundStage(timeCall);
          },
        },
      };
    },
  };
}

/** Times and counts a subgraph call by its outcome: `ok`, `errors` (answered with errors), or the error code. */
function timedCall(instruments: RouterInstruments): FetchWrapper {
  return async function timeCall(request, perform) {
    const started = performance.now();
    try {
      const response = await perform(request);
      instruments.subgraphFetches.inc({ subgraph: request.subgraph, outcome: response.errors ? 'errors' : 'ok' });
      return response;
    } catch (error) {
      instruments.subgraphFetches.inc({ subgraph: request.subgraph, outcome: error instanceof RouterError ? error.code : 'failed' });
      throw error;
    } finally {
      instruments.subgraphFetchDuration.observe({ subgraph: request.subgraph }, (performance.now() - started) / 1000);
    }
  };
}

/** One operation's clock; `settled` records it. */
class OperationTiming {
  private readonly started = performance.now();

  constructor(
    private readonly instruments: RouterInstruments,
    private readonly method: string,
  ) {}

  readonly settled = (outcome: StageOutcome<'request'>): void => {
    let result: 'ok' | 'partial' | 'error' = 'error';
    if (outcome.ok) {
      const body = outcome.output.body;
      // Neither data nor errors: no answer but a subscription's stream, which is not an answered operation.
      if (body.data === undefined && body.errors === undefined) return;
      result = !body.errors ? 'ok' : body.data ? 'partial' : 'error';
    }
    // A failed request stage is answered with the error alone ('error').
    this.instruments.operations.inc({ outcome: result });
    // The status answered (a failed request stage is answered by the kernel's error response: its status, else 500).
    const status = outcome.ok ? outcome.output.status : outcome.error instanceof RouterError && outcome.error.status !== undefined ? outcome.error.status : 500;
    this.instruments.operationDuration.observe({ method: this.method, status: String(status) }, (performance.now() - this.started) / 1000);
  };
}
