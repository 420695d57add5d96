/** The testing kit (`switchyard/testing`): real subgraphs on loopback and a router over them, in a few lines. */
export { startSubgraph, type SubgraphCall, type SubgraphOptions, type SubgraphReply, type TestSubgraph } from './subgraph-server.js';
export {
  startTestRouter,
  type TestRequest,
  type TestResponse,
  type TestRouter,
  type TestRouterOptions,
  type TestRouterSubgraph,
} from './test-router.js';
