/**
 * Step 1 of the walkthrough (README.md): starts the demo's four subgraphs on
 * 127.0.0.1:4001-4004 (`SUBGRAPH_PORT` moves the first one) and composes
 * them into .switchyard/router.execution.config.json for the router.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { composeSubgraphs, writeOutput } from '../../src/compose/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { demoSubgraphs } from '../demo/subgraphs.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Where the composed graph is written, as router.config.yaml names it. */
export const EXECUTION_CONFIG = join(here, '.switchyard', 'router.execution.config.json');

/** Starts the subgraphs on `basePort`, `basePort + 1`, ... (0: free ports) and writes the execution config. */
export async function startExampleSubgraphs(basePort: number, executionConfig = EXECUTION_CONFIG): Promise<TestSubgraph[]> {
  const subgraphs = await Promise.all(demoSubgraphs.map((options, i) => startSubgraph({ ...options, port: basePort === 0 ? 0 : basePort + i })));
  await writeOutput(executionConfig, composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs }))));
  return subgraphs;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const subgraphs = await startExampleSubgraphs(Number(process.env.SUBGRAPH_PORT ?? 4001));
  process.stdout.write(`subgraphs: ${subgraphs.map((s) => `${s.name} ${s.url}`).join(', ')}\nwrote ${EXECUTION_CONFIG}\nPress Ctrl+C to stop.\n`);
  const stop = async () => {
    await Promise.all(subgraphs.map((s) => s.close()));
    process.exit(0);
  };
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
