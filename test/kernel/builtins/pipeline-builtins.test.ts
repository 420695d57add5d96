/**
 * The pipeline's built-in features as internal plugins: metrics, request
 * limits, header rules, in-flight sharing, retries and the circuit breaker.
 * Each hooks in ahead of user plugins only when configured; user hooks see
 * what they did, and their answers (a cache hit) skip what wraps a call.
 */
import { describe, expect, it } from 'vitest';
import type { SwitchyardPlugin } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { collect, eventually, setupSubscriptions, SUBSCRIPTION, wsClient } from '../../subscriptions/fixtures.js';
import { librarySubgraph } from '../library-subgraphs.js';
import { useLibraryAndPeople } from '../library-hooks.js';

/** One series' value in a Prometheus text, NaN when absent. */
function sample(text: string, series: string): number {
  return Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
}

type HostView = { host: { stageHooks: Record<string, Array<{ plugin: string }>> } };
const hooksOf = (router: unknown): Record<string, string[]> =>
  Object.fromEntries(Object.entries((router as HostView).host.stageHooks).map(([stage, hooks]) => [stage, hooks.map((h) => h.plugin)]));

/** Every built-in of this file off (and plans not shown). */
const OFF = {
  query_plans: { enabled: false },
  limits: { max_fields: 0 },
  engine: { enable_single_flight: false },
  traffic_shaping: { all: { retry: { enabled: false } } },
} as const;

let library: TestSubgraph;
let people: TestSubgraph;
useLibraryAndPeople((started) => ({ library, people } = started));

describe('registration', () => {
  const user: SwitchyardPlugin = { name: 'user', setup: () => ({ hooks: { onRequest() {}, onParse() {}, onFetch() {} } }) };

  it('hooks each feature in ahead of user plugins when configured, the call wrappers in their nesting order', async () => {
    const router = await startTestRouter({
      subgraphs: [library],
      plugins: [user],
      config: {
        ...OFF,
        metrics: { enabled: true, listen_addr: '127.0.0.1:0' },
        limits: { max_depth: 8, max_fields: 0 },
        headers: { subgraphs: { library: { request: [{ op: 'propagate', named: 'x-tenant' }] } } },
        engine: { enable_single_flight: true },
        traffic_shaping: { subgraphs: { library: { retry: { enabled: true, max_attempts: 2 }, circuit_breaker: { enabled: true } } } },
      },
    });
    expect(hooksOf(router.router)).toEqual({
      request: ['switchyard/metrics', 'switchyard/header-rules', 'user'],
      parse: ['switchyard/request-limits', 'user'],
      validate: [],
      plan: [],
      fetch: ['switchyard/metrics', 'switchyard/header-rules', 'switchyard/single-flight', 'switchyard/retries', 'switchyard/circuit-breaker', 'user'],
      merge: [],
      respond: [],
    });
    expect(router.router.plugins).toEqual(['user']);
    expect((await router.query('{ books { id } }')).body.data).toBeDefined();
    await router.close();
  });

  it('has no hook for a feature that is off: no metrics, no rule, limits at 0, no sharing, no retries, no breaker', async () => {
    const router = await startTestRouter({ subgraphs: [library], plugins: [user], config: OFF });
    expect(hooksOf(router.router)).toEqual({ request: ['user'], parse: ['user'], validate: [], plan: [], fetch: ['user'], merge: [], respond: [] });
    await router.close();
  });
});

describe('header rules', () => {
  it('set the headers before user fetch hooks see them, from the request as request hooks left it, per subgraph', async () => {
    const seen: Array<{ subgraph: string; headers: Readonly<Record<string, string>> }> = [];
    const plugin: SwitchyardPlugin = {
      name: 'tenant',
      setup: () => ({
        hooks: {
          // A request hook changing the client's headers: the rules read its result.
          onRequest(event) {
            event.setInput({ ...event.input, headers: { ...event.input.headers, 'x-tenant': `${event.input.headers['x-tenant']}-checked` } });
          },
          onFetch(event) {
            seen.push({ subgraph: event.input.subgraph, headers: event.input.headers });
          },
        },
      }),
    };
    const router = await startTestRouter({
      subgraphs: [library, people],
      plugins: [plugin],
      config: { headers: { subgraphs: { people: { request: [{ op: 'propagate', named: 'x-tenant' }] } } } },
    });
    people.reset();
    const response = await router.query({ query: '{ book(id: "b1") { title author { name } } }', headers: { 'x-tenant': 'acme' } });
    expect(response.body.errors).toBeUndefined();
    expect(seen).toEqual([
      { subgraph: 'library', headers: {} },
      { subgraph: 'people', headers: { 'x-tenant': 'acme-checked' } },
    ]);
    expect(people.calls[0]!.headers['x-tenant']).toBe('acme-checked');
    await router.close();
  });
});

describe('metrics', () => {
  it('time the subgraph call alone and count only calls made, not a plugin answer', async () => {
    let answerFetches = false;
    const plugin: SwitchyardPlugin = {
      name: 'slow-cache',
      setup: () => ({
        hooks: {
          async onFetch(event) {
            // 150 ms of plugin work before the call: not the subgraph's time.
            await new Promise((resolve) => setTimeout(resolve, 150));
            if (answerFetches) event.respondWith({ data: { books: [{ id: 'cached' }] } });
          },
        },
      }),
    };
    const router = await startTestRouter({ subgraphs: [library], plugins: [plugin], listen: true, config: { metrics: { enabled: true, listen_addr: '127.0.0.1:0' } } });
    await router.query('{ books { id } }');
    answerFetches = true;
    expect((await router.query('{ books { id } }')).body.data).toEqual({ books: [{ id: 'cached' }] });
    const text = await (await fetch(router.router.metricsUrl!)).text();
    expect(sample(text, 'switchyard_subgraph_fetches_total{subgraph="library",outcome="ok"}')).toBe(1);
    expect(sample(text, 'switchyard_subgraph_fetch_duration_seconds_count{subgraph="library"}')).toBe(1);
    expect(sample(text, 'switchyard_subgraph_fetch_duration_seconds_sum{subgraph="library"}')).toBeLessThan(0.15);
    expect(sample(text, 'switchyard_operations_total{outcome="ok"}')).toBe(2);
    await router.close();
  });

  it('count a query answered over WebSocket, not a subscription stream nor the fetches of its events', async () => {
    const setup = await setupSubscriptions({ config: { metrics: { enabled: true, listen_addr: '127.0.0.1:0' } } });
    const client = wsClient(setup);
    const query = collect(client, { query: '{ product(upc: "p1") { name } }' });
    await eventually(() => query.completed);
    expect(query.events).toEqual([{ data: { product: { name: 'Table' } } }]);
    const stream = collect(client, { query: SUBSCRIPTION });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p2' });
    await eventually(() => stream.events.length === 1);
    const text = await (await fetch(setup.router.metricsUrl!)).text();
    expect(sample(text, 'switchyard_operations_total{outcome="ok"}')).toBe(1);
    // The query's one call; the event's entity fetch (to products as well) is part of the stream.
    expect(sample(text, 'switchyard_subgraph_fetches_total{subgraph="products",outcome="ok"}')).toBe(1);
    stream.dispose();
  });
});

describe('request limits', () => {
  it('refuse a document over a limit before user parse after-hooks and validation; cycles are refused with limits off', async () => {
    const after: string[] = [];
    const plugin: SwitchyardPlugin = { name: 'watch', setup: () => ({ hooks: { onParse: () => () => void after.push('parse'), onValidate: () => void after.push('validate') } }) };
    const limited = await startTestRouter({ subgraphs: [library], plugins: [plugin], config: { limits: { max_depth: 2 } } });
    const deep = await limited.query('{ book(id: "b1") { author { id } } }');
    expect(deep.status).toBe(400);
    expect(deep.body.errors?.[0]?.extensions?.code).toBe('MAX_DEPTH_EXCEEDED');
    expect(after).toEqual([]);
    await limited.close();

    const open = await startTestRouter({ subgraphs: [library], config: OFF });
    const cycle = await open.query('{ ...A } fragment A on Query { books { id } ...A }');
    expect(cycle.status).toBe(400);
    expect(cycle.body.errors?.[0]?.message).toBe('Cannot spread fragment "A" within itself.');
    await open.close();
  });
});

describe('sharing, retries and the circuit breaker', () => {
  it('retry a call two requests share once, inside the sharing', async () => {
    let failures = 1;
    const flaky = await startSubgraph(librarySubgraph({ delayMs: 50, reply: () => (failures-- > 0 ? { status: 503, body: 'busy' } : undefined) }));
    const router = await startTestRouter({ subgraphs: [flaky], config: { traffic_shaping: { all: { retry: { interval: '1ms' } } } } });
    const [a, b] = await Promise.all([router.query('{ books { id } }'), router.query('{ books { id } }')]);
    expect(a.body).toEqual(b.body);
    expect(a.body.errors).toBeUndefined();
    // One shared call that failed, one retry: not one retry per waiting request.
    expect(flaky.calls).toHaveLength(2);
    await router.close();
    await flaky.close();
  });

  it('serve a plugin answer while the circuit is open: the breaker wraps only calls that leave the router', async () => {
    const down = await startSubgraph(librarySubgraph({ reply: () => ({ status: 503, body: 'down' }) }));
    let cached = false;
    const cache: SwitchyardPlugin = {
      name: 'cache',
      setup: () => ({
        hooks: {
          onFetch(event) {
            if (cached) event.respondWith({ data: { books: [{ id: 'b1' }] } });
          },
        },
      }),
    };
    const router = await startTestRouter({
      subgraphs: [down],
      plugins: [cache],
      config: { traffic_shaping: { all: { retry: { enabled: false }, circuit_breaker: { enabled: true, failure_threshold: 1, cooldown: '1m' } } } },
    });
    expect((await router.query('{ books { id } }')).body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    expect((await router.query('{ books { id } }')).body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_CIRCUIT_OPEN');
    cached = true;
    expect((await router.query('{ books { id } }')).body).toEqual({ data: { books: [{ id: 'b1' }] } });
    expect(down.calls).toHaveLength(1);
    await router.close();
    await down.close();
  });
});
