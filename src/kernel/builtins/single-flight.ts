/**
 * In-flight sharing (`engine.enable_single_flight`, default on) as an
 * internal plugin: identical subgraph queries in flight at the same time
 * make one call, whose answer every request waiting for it receives. Its
 * fetch hook wraps the call (`aroundStage`) outside retries and the circuit
 * breaker, so a shared call is retried and counted once, and inside the
 * metrics' clock, so every request's wait is timed. A call carrying uploaded
 * files is never shared: its key writes each file as `null`.
 */
import { setMaxListeners } from 'node:events';
import { SingleFlight } from '../fetch/single-flight.js';
import type { SubgraphRequest, SubgraphResponse } from '../fetch/subgraph-types.js';
import { uploadCount, variablesJson } from '../fetch/variables-json.js';
import type { FetchWrapper } from '../fetch/resilience.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';

export function singleFlightPlugin(): SwitchyardPlugin {
  return {
    name: 'switchyard/single-flight',
    setup: () => {
      const flights = new SingleFlight<SubgraphResponse>();
      // A shared call follows the router's life, not one client's: a client that leaves does not cancel the others' answer.
      const stopping = new AbortController();
      // Every shared call in flight listens on this one signal (and removes its listener when done): many at once is
      // normal, not a leak, so Node's warning past 10 listeners (MaxListenersExceededWarning) would be noise.
      setMaxListeners(0, stopping.signal);
      const share: FetchWrapper = (request, perform) => {
        const key = flightKey(request);
        // Counted while the key's variables text was written: one property read.
        if (uploadCount(request.variables) > 0) return perform(request);
        return flights.run(key, () => perform(request, stopping.signal));
      };
      return {
        hooks: {
          onFetch(event) {
            // Only queries: they have no side effects.
            if (event.input.operationType === 'query') event.aroundStage(share);
          },
        },
        stop: () => stopping.abort(),
      };
    },
  };
}

/** What makes two calls the same: subgraph, operation, variables and headers. */
function flightKey(request: SubgraphRequest): string {
  return `${request.subgraph}\u0000${request.query}\u0000${variablesJson(request.variables)}\u0000${JSON.stringify(withoutTraceContext(request.headers))}`;
}

/**
 * Headers as the in-flight key sees them: W3C trace context left out, since
 * each traced request carries its own and would otherwise never share a call
 * (the shared call carries the first request's trace context).
 */
function withoutTraceContext(headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  if (headers.traceparent === undefined && headers.tracestate === undefined) return headers;
  const { traceparent: _traceparent, tracestate: _tracestate, ...rest } = headers;
  return rest;
}
