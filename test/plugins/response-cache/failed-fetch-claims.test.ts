/**
 * The write guard (`invalidation.guard_concurrent_writes`, on by default)
 * keeps a claim per fetch in flight, keyed by its variables. A fetch that
 * failed (subgraph 5xx, a body it refused, a timeout) never ended its
 * claim: with large variables, a run of failures held hundreds of MB until
 * a later miss swept entries past 90 s (or never, without one).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';

// `global.gc` is not exposed under vitest: turn the flag on now and take `gc` from a new context, where it appears.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

let subgraph: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'echo',
    typeDefs: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query { echo(s: String!): String }`,
    resolvers: { Query: { echo: (_: unknown, { s }: { s: string }) => s.length } },
    // As body-parser's default limit answers a large body.
    reply: () => ({ status: 413, body: 'request entity too large' }),
  });
  router = await startTestRouter({ subgraphs: [subgraph], plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })] });
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

describe('a subgraph fetch that fails', () => {
  it('lets go of its variables: 100 failures with 400 KB variables each leave the heap where it was', async () => {
    const query = 'query E($s: String!) { echo(s: $s) }';
    // Warm-up: plans, parsers, sockets.
    await router.query({ query, variables: { s: 'warm' } });
    const before = heapMb();
    for (let i = 0; i < 100; i += 1) {
      const answer = await router.query({ query, variables: { s: `${i}:${'x'.repeat(400_000)}` } });
      expect(answer.body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    }
    // The test subgraph keeps what it was sent: dropped, so that only the router's memory counts.
    subgraph.reset();
    // 100 x 400 KB is 40 MB held while the claims stay.
    expect(heapMb() - before).toBeLessThan(15);
  });
});
