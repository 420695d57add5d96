/**
 * `npm start`: the demo. Starts the four example subgraphs on
 * 127.0.0.1:4001-4004, composes them into router.execution.config.json, and
 * serves the router on localhost:3002 with the playground at `/`.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeOutput } from '../../src/compose/write-output.js';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { loadRouterSetup } from '../../src/cli/router-setup.js';
import { createRouter } from '../../src/kernel/router/router.js';
import { startSubgraph } from '../../src/testing/subgraph-server.js';
import { demoSubgraphs } from './subgraphs.js';

const here = dirname(fileURLToPath(import.meta.url));
const basePort = Number(process.env.DEMO_SUBGRAPH_PORT ?? 4001);

const subgraphs = await Promise.all(demoSubgraphs.map((options, i) => startSubgraph({ ...options, port: basePort + i })));
const composed = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs })));
await writeOutput(join(here, 'router.execution.config.json'), composed);

const setup = await loadRouterSetup({ configPath: join(here, 'router.config.yaml'), listenAddr: process.env.LISTEN_ADDR });
const router = await createRouter({ config: setup.config, plugins: setup.plugins, graph: setup.graph });
const { url } = await router.listen();

process.stdout.write(
  `\nSwitchyard demo is running.\n  playground: ${url}/\n  GraphQL:    ${url}/graphql\n  subgraphs:  ${subgraphs.map((s) => `${s.name} ${s.url}`).join(', ')}\nPress Ctrl+C to stop.\n\n`,
);

const stop = async () => {
  await router.close();
  await Promise.all(subgraphs.map((s) => s.close()));
  process.exit(0);
};
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
