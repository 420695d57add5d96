import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SwitchyardPlugin } from 'switchyard';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from 'switchyard/testing';
import { CLIENT_RATE_LIMIT, useClientRateLimit, type ClientRateLimitOptions, type RateLimitDecision } from '../src/index.js';

// A real subgraph on 127.0.0.1; every test composes a router over it with the plugin.
let inventory: TestSubgraph;
const routers: TestRouter[] = [];

beforeAll(async () => {
  inventory = await startSubgraph({
    name: 'inventory',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        stock(sku: ID!): Int!
      }
    `,
    resolvers: { Query: { stock: (_: unknown, { sku }: { sku: string }) => sku.length * 10 } },
  });
});

afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await inventory?.close();
});

/** A router with the plugin, after the plugins in `before`; `metrics` serves them on a port of their own. */
async function routerWith(options: ClientRateLimitOptions, more: { before?: SwitchyardPlugin[]; metrics?: boolean } = {}): Promise<TestRouter> {
  const router = await startTestRouter({
    subgraphs: [inventory],
    plugins: [...(more.before ?? []), useClientRateLimit(options)],
    config: more.metrics ? { metrics: { enabled: true, listen_addr: '127.0.0.1:0' } } : undefined,
    listen: more.metrics,
  });
  routers.push(router);
  return router;
}

function ask(router: TestRouter, client?: string) {
  return router.query({ query: '{ stock(sku: "abc") }', headers: client === undefined ? {} : { 'graphql-client-name': client } });
}

/** Retry-After counts down while the test runs: a busy machine may take a second between requests. */
function retryAfter(response: { headers: Headers }, full: number): number {
  const seconds = Number(response.headers.get('retry-after'));
  expect([full - 1, full]).toContain(seconds);
  return seconds;
}

function limits(response: { headers: Headers }) {
  return [response.headers.get('ratelimit-limit'), response.headers.get('ratelimit-remaining'), response.headers.get('retry-after')];
}

describe('the client rate limit', () => {
  it('lets a client send its requests, then answers 429 RATE_LIMITED with Retry-After, without calling the subgraph', async () => {
    const router = await routerWith({ requests: 2, window: '1m' });
    inventory.reset();
    const first = await ask(router, 'web');
    expect([first.status, first.body, limits(first)]).toEqual([200, { data: { stock: 30 } }, ['2', '1', null]]);
    expect(limits(await ask(router, 'web'))).toEqual(['2', '0', null]);
    const refused = await ask(router, 'web');
    const retry = retryAfter(refused, 30);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({
      errors: [
        {
          message: `Client "web" is over its limit of 2 requests per 1m; retry in ${retry}s.`,
          extensions: { client: 'web', retryAfter: retry, code: 'RATE_LIMITED' },
        },
      ],
    });
    expect(limits(refused)).toEqual(['2', '0', String(retry)]);
    expect(inventory.calls).toHaveLength(2);
    // Another client has its own bucket.
    expect((await ask(router, 'mobile')).status).toBe(200);
  });

  it('gives named clients the limits configured for them', async () => {
    const router = await routerWith({ requests: 5, clients: { 'batch-jobs': { requests: 1, window: '1h' } } });
    expect((await ask(router, 'batch-jobs')).status).toBe(200);
    const refused = await ask(router, 'batch-jobs');
    const retry = retryAfter(refused, 3600);
    expect([refused.status, refused.body.errors?.[0]?.message, limits(refused)]).toEqual([
      429,
      `Client "batch-jobs" is over its limit of 1 request per 1h; retry in ${retry}s.`,
      ['1', '0', String(retry)],
    ]);
    expect(limits(await ask(router, 'web'))).toEqual(['5', '4', null]);
  });

  it('counts requests without a graphql-client-name as the client "anonymous"', async () => {
    const router = await routerWith({ requests: 1, clients: { anonymous: { requests: 2 } } });
    expect((await ask(router)).status).toBe(200);
    expect((await ask(router)).status).toBe(200);
    const refused = await ask(router);
    const retry = retryAfter(refused, 30);
    expect([refused.status, refused.body.errors?.[0]?.extensions]).toEqual([429, { client: 'anonymous', retryAfter: retry, code: 'RATE_LIMITED' }]);
  });

  it('treats client names like "constructor" or "__proto__" as any other unconfigured client', async () => {
    const router = await routerWith({ requests: 1, clients: { web: { requests: 5 } } });
    for (const client of ['constructor', '__proto__', 'toString']) {
      expect(limits(await ask(router, client))).toEqual(['1', '0', null]);
      expect((await ask(router, client)).status).toBe(429);
    }
  });

  it('gives requests back evenly over the window', async () => {
    const router = await routerWith({ requests: 1, window: '1s' });
    expect((await ask(router, 'web')).status).toBe(200);
    expect(limits(await ask(router, 'web'))).toEqual(['1', '0', '1']);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await ask(router, 'web')).status).toBe(200);
  });

  it('forgets the client seen least recently once it tracks max_clients', async () => {
    const router = await routerWith({ requests: 1, max_clients: 2 });
    for (const client of ['a', 'b']) expect((await ask(router, client)).status).toBe(200);
    expect((await ask(router, 'a')).status).toBe(429);
    // "c" pushes out "b", the one seen least recently, which then starts afresh.
    expect((await ask(router, 'c')).status).toBe(200);
    expect((await ask(router, 'b')).status).toBe(200);
  });

  it('tells other plugins its decision through the CLIENT_RATE_LIMIT request state', async () => {
    const seen: Array<RateLimitDecision | undefined> = [];
    const reader: SwitchyardPlugin = {
      name: 'reader',
      setup: () => ({ hooks: { onRequest: (event) => () => void seen.push(event.state.get(CLIENT_RATE_LIMIT)) } }),
    };
    // Registered first: a refusal skips the before-hooks after the limiter's, never the after-hooks before it.
    const router = await routerWith({ requests: 1 }, { before: [reader] });
    await ask(router, 'web');
    await ask(router, 'web');
    expect(seen).toEqual([
      { client: 'web', allowed: true, limit: 1, remaining: 0 },
      { client: 'web', allowed: false, limit: 1, remaining: 0 },
    ]);
  });

  it('counts decisions in Prometheus metrics, labelling only configured clients by name', async () => {
    const router = await routerWith({ requests: 1, clients: { web: { requests: 1 } } }, { metrics: true });
    for (const client of ['web', 'web', 'someone-else']) await ask(router, client);
    const text = await (await fetch(router.router.metricsUrl!)).text();
    const lines = text.split('\n').filter((line) => line.startsWith('switchyard_client_rate_limit_requests_total{'));
    expect(lines.sort()).toEqual([
      'switchyard_client_rate_limit_requests_total{client="other",result="allowed"} 1',
      'switchyard_client_rate_limit_requests_total{client="web",result="allowed"} 1',
      'switchyard_client_rate_limit_requests_total{client="web",result="limited"} 1',
    ]);
  });

  it('refuses bad options, naming the plugin and the key', () => {
    expect(() => useClientRateLimit({ requests: 0 })).toThrow(/\[client-rate-limit\] requests: /);
    expect(() => useClientRateLimit({ window: '500ms' })).toThrow(/\[client-rate-limit\] window: must be at least 1s/);
    expect(() => useClientRateLimit({ clients: { web: { window: '1m' } } } as never)).toThrow(/\[client-rate-limit\] clients\.web\.requests: /);
    expect(() => useClientRateLimit({ burst: 3 } as never)).toThrow(/\[client-rate-limit\] unknown key "burst"/);
  });
});
