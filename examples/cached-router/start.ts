/**
 * The cached-router example: the two subgraphs on 127.0.0.1 and a router
 * with the response cache on Redis, from router.config.yaml.
 *
 *   node --import tsx examples/cached-router/start.ts
 *
 * Environment: REDIS_URL (default redis://localhost:6379), LISTEN_ADDR,
 * RESPONSE_CACHE_INVALIDATION_ENDPOINT_LISTEN_ADDR, ... (every config key).
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { composeSubgraphs, createRouter, type Logger, type Router } from '../../src/index.js';
import { loadRouterSetup } from '../../src/setup/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { catalog, inventory } from './subgraphs.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Options of `startCachedRouter`; the config file and environment decide the rest. */
export interface CachedRouterOptions {
  /** The Redis the cache uses. Default: the config file's (`redis://localhost:6379`). */
  readonly redisUrl?: string;
  /** Environment overrides, as `process.env` would give them. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Ports of the catalog and inventory subgraphs. Default: free ports. */
  readonly subgraphPorts?: readonly [number, number];
  readonly logger?: Logger;
}

/** The running example. */
export interface CachedRouter {
  readonly router: Router;
  /** The GraphQL endpoint. */
  readonly url: string;
  readonly subgraphs: readonly TestSubgraph[];
  close(): Promise<void>;
}

export async function startCachedRouter(options: CachedRouterOptions = {}): Promise<CachedRouter> {
  const subgraphs = await Promise.all([catalog, inventory].map((subgraph, i) => startSubgraph({ ...subgraph, port: options.subgraphPorts?.[i] })));
  try {
    const composed = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
    const setup = await loadRouterSetup({ configPath: join(here, 'router.config.yaml'), env: options.env ?? process.env });
    const config = options.redisUrl
      ? { ...setup.config, core: { ...setup.config.core, storage_providers: { sharedstore: [{ id: 'main', cluster_enabled: false, urls: [options.redisUrl] }] } } }
      : setup.config;
    const router = await createRouter({
      config,
      plugins: setup.plugins,
      graph: { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'examples/cached-router' },
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
  } catch (error) {
    await Promise.all(subgraphs.map((s) => s.close()));
    throw error;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const running = await startCachedRouter({ redisUrl: process.env.REDIS_URL });
  process.stdout.write(
    `\nCached router running.\n  GraphQL:   ${running.url}\n  subgraphs: ${running.subgraphs.map((s) => `${s.name} ${s.url}`).join(', ')}\nPress Ctrl+C to stop.\n\n`,
  );
  const stop = async () => {
    await running.close();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
