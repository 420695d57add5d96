/**
 * Health endpoints on the main listener: `/health/live` answers 200 while the
 * process serves HTTP at all (and `/health`, Cosmo's default health check
 * path, the same, so probes written for Cosmo keep working, unless a plugin
 * serves `/health` itself); `/health/ready`
 * 200 once a graph is loaded and 503 before that and from the moment the
 * router starts closing (so load balancers stop sending before the listener
 * goes). Every method, as INTERFACES.md fixes them.
 */
import type { HttpAnswer } from '../pipeline/http-routes.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { yieldingRoute } from '../router/http-routes.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };
const LIVE: HttpAnswer = { status: 200, headers: JSON_TYPE, body: '{"status":"ok"}' };
const READY: HttpAnswer = { status: 200, headers: JSON_TYPE, body: '{"status":"ready"}' };
const NOT_READY: HttpAnswer = { status: 503, headers: JSON_TYPE, body: '{"status":"not ready"}' };

/** `ready`: a graph is loaded and the router is not closing. */
export function healthPlugin(ready: () => boolean): SwitchyardPlugin {
  return {
    name: 'switchyard/health',
    setup: () => ({
      http: {
        routes: [
          { path: '/health/live', handle: () => LIVE },
          // Cosmo's path; a plugin of the user's serving /health keeps it.
          yieldingRoute({ path: '/health', handle: () => LIVE }),
          { path: '/health/ready', handle: () => (ready() ? READY : NOT_READY) },
        ],
      },
    }),
  };
}
