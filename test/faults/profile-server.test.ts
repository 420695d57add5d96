import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO_QUERY, startProfilingRouter, type ProfilingRouter } from '../plugins/profiling/helpers.js';
import { problems, sleep, startLoad } from './load-loop.js';

vi.setConfig({ testTimeout: 30_000 });

/** A profile server that accepts connections and reads requests but never answers. */
let blackHole: Server;
const held = new Set<Socket>();
let port = 0;

beforeAll(async () => {
  blackHole = createServer((socket) => {
    held.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => held.delete(socket));
  });
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  const address = blackHole.address();
  port = typeof address === 'object' && address ? address.port : 0;
});

afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise<void>((resolve) => blackHole.close(() => resolve()));
});

describe('a profile server that hangs', () => {
  it('costs the router no answers, and does not hold up its shutdown', async () => {
    let app: ProfilingRouter | undefined = await startProfilingRouter({ enabled: true, server_address: `http://127.0.0.1:${port}`, upload_interval: '300ms' });
    try {
      const router = app.router;
      const expected = JSON.stringify((await router.query(DEMO_QUERY)).body);
      expect(JSON.parse(expected)).toHaveProperty('data.topProducts');
      const load = startLoad(async () => {
        const response = await router.query(DEMO_QUERY);
        const body = JSON.stringify(response.body);
        return response.status === 200 && body === expected ? undefined : `${response.status} ${body.slice(0, 200)}`;
      }, 4);
      await sleep(2000);
      const samples = await load.stop();
      expect(problems(samples)).toEqual([]);
      expect(samples.length).toBeGreaterThan(40);
      // Pushes were attempted and are stuck waiting for an answer.
      expect(held.size).toBeGreaterThan(0);

      const closing = Date.now();
      await app.close();
      app = undefined;
      expect(Date.now() - closing).toBeLessThan(3000);
    } finally {
      await app?.close();
    }
  });
});
