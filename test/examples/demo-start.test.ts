import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { freePort, waitFor } from '../cli/run-cli.js';

vi.setConfig({ testTimeout: 120_000 });

const root = fileURLToPath(new URL('../..', import.meta.url));

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A base port with the three after it free too: the demo's subgraphs take four in a row. */
async function fourFreePorts(): Promise<number> {
  for (;;) {
    const base = await freePort();
    if (base > 65_000) continue;
    const rest = await Promise.all([1, 2, 3].map((i) => isFree(base + i)));
    if (rest.every(Boolean)) return base;
  }
}

describe('npm start (examples/demo/README.md)', () => {
  it('serves the playground and the README query across the four subgraphs, then stops on Ctrl+C', async () => {
    const [subgraphPort, routerPort] = [await fourFreePorts(), await freePort()];
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/demo/start.ts'], {
      cwd: root,
      env: { ...process.env, DEMO_SUBGRAPH_PORT: String(subgraphPort), LISTEN_ADDR: `127.0.0.1:${routerPort}`, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await waitFor(async () => stdout.includes('Switchyard demo is running.'));
      const url = `http://127.0.0.1:${routerPort}`;
      expect(stdout).toContain(`playground: ${url}/`);
      expect(stdout).toContain(`accounts http://127.0.0.1:${subgraphPort}/graphql`);

      const playground = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
      expect(playground.status).toBe(200);
      expect(await playground.text()).toContain('<html');

      const query = '{ topProducts(first: 2) { name inStock reviews { body author { name } } } }';
      const ask = () => fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
      const expected = {
        data: {
          topProducts: [
            {
              name: 'Table',
              inStock: true,
              reviews: [
                { body: 'Love it!', author: { name: 'Ada Lovelace' } },
                { body: 'Prefer something else.', author: { name: 'Grace Hopper' } },
              ],
            },
            { name: 'Couch', inStock: false, reviews: [{ body: 'Too expensive.', author: { name: 'Ada Lovelace' } }] },
          ],
        },
      };
      const first = await ask();
      expect(await first.json()).toEqual(expected);
      // The subgraphs allow ten seconds of caching; the router passes the shortest lifetime on.
      expect(first.headers.get('cache-control')).toMatch(/max-age=(10|9)\b/);
      expect(await (await ask()).json()).toEqual(expected);
    } finally {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    }
  });
});
