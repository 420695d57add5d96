/**
 * Starts the demo's four subgraphs on free loopback ports and the custom
 * router over them (README.md):
 *
 *   npm run build && node --import tsx examples/custom-router/start.ts
 *
 * Environment: LISTEN_ADDR (default localhost:3002).
 */
import { pathToFileURL } from 'node:url';
import { composeSubgraphs, type Logger, type Router } from 'switchyard';
import { startSubgraph, type TestSubgraph } from 'switchyard/testing';
import { demoSubgraphs } from '../demo/subgraphs.js';
import { composeCustomRouter } from './compose-router.js';

/** The running example. */
export interface CustomRouterExample {
  readonly router: Router;
  /** The GraphQL endpoint. */
  readonly url: string;
  readonly subgraphs: readonly TestSubgraph[];
  close(): Promise<void>;
}

export async function startCustomRouter(options: { listenAddr?: string; logger?: Logger } = {}): Promise<CustomRouterExample> {
  const subgraphs = await Promise.all(demoSubgraphs.map((subgraph) => startSubgraph(subgraph)));
  const { supergraphSdl, subgraphs: routing } = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
  const router = await composeCustomRouter({
    graph: { supergraphSdl, subgraphs: routing, origin: 'examples/custom-router' },
    listenAddr: options.listenAddr,
    logger: options.logger,
  });
  const { url } = await router.listen();
  return {
    router,
    url: `${url}/graphql`,
    subgraphs,
    async close() {
      await router.close();
      await Promise.all(subgraphs.map((s) => s.close()));
    },
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const example = await startCustomRouter({ listenAddr: process.env.LISTEN_ADDR });
  process.stdout.write(`custom router on ${example.url} (plugins: ${example.router.plugins.join(', ')})\n`);
  process.once('SIGINT', () => void example.close());
  process.once('SIGTERM', () => void example.close());
}
