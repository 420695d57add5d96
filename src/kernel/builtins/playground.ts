/**
 * The GraphiQL playground (`playground.enabled`): the page at `GET /` and its
 * assets under `/playground/` (router/playground.ts builds and serves them).
 * With `query_plans.enabled` the page has the plan-and-trace panel, which
 * asks for query plans.
 */
import type { HttpRequest, HttpRoute } from '../pipeline/http-routes.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { Playground, PLAYGROUND_ASSETS_PATH } from '../router/playground.js';

export function playgroundPlugin(options: { readonly tracePanel: boolean }): SwitchyardPlugin {
  return {
    name: 'switchyard/playground',
    setup: () => {
      const playground = new Playground({ endpoint: '/graphql', tracePanel: options.tracePanel });
      const handle = (request: HttpRequest) => playground.answer(request.path, request.header('accept-encoding'));
      const routes: HttpRoute[] = [
        { path: '/', methods: ['GET', 'HEAD'], handle },
        { path: PLAYGROUND_ASSETS_PATH, prefix: true, methods: ['GET', 'HEAD'], handle },
      ];
      return { http: { routes } };
    },
  };
}
