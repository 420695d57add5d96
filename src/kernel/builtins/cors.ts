/**
 * CORS for `/graphql` (`cors.enabled`; the policy is router/cors.ts): a
 * preflight is answered before the router reads anything, and every other
 * answer on `/graphql` (the post lane's, the general handler's, a stream)
 * carries the policy's headers. A bad `cors.allow_origins` entry fails startup.
 */
import type { CorsConfig } from '../config/core-schema.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { CorsPolicy } from '../router/cors.js';

export function corsPlugin(config: CorsConfig): SwitchyardPlugin {
  return {
    name: 'switchyard/cors',
    setup: ({ log }) => {
      const policy = new CorsPolicy(config, log);
      return {
        http: {
          beforeGraphQL(request) {
            const answer = policy.answer(request.method, request.header('origin'), request.header('access-control-request-method'));
            if (answer.preflight) return { answer: answer.preflight };
            return Object.keys(answer.headers).length > 0 ? { headers: answer.headers } : undefined;
          },
        },
      };
    },
  };
}
