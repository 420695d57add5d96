/**
 * Federated subscriptions over GraphQL over WebSocket: a real graphql-ws
 * subgraph (reviews) streams events whose `product` fields come from an
 * HTTP subgraph (products); clients are graphql-ws clients and raw sockets.
 */
import { createClient, type Client } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RouterError } from '../../src/kernel/errors.js';
import type { SwitchyardPlugin } from '../../src/kernel/pipeline/plugin.js';
import { startTestRouter, type TestRouter } from '../../src/testing/index.js';
import { startWebSocketServer } from '../support/loopback-server.js';
import { collect, createReviewsSchema, eventually, reviewsAt, type ReviewEvent, startProducts, SUBSCRIPTION } from './fixtures.js';

/** A graphql-ws subgraph whose events the test pushes; it records connections and open subscriptions. */
interface ReviewsSubgraph {
  readonly url: string;
  readonly typeDefs: string;
  readonly name: string;
  /** Subscriptions open on the subgraph now. */
  readonly open: () => number;
  /** Upgrade headers and connection_init payloads, one per connection. */
  readonly connections: Array<{ headers: Record<string, unknown>; payload: unknown }>;
  push(event: ReviewEvent): void;
  close(): Promise<void>;
}

async function startReviews(): Promise<ReviewsSubgraph> {
  const { schema, push, open } = createReviewsSchema();
  const connections: ReviewsSubgraph['connections'] = [];
  const ws = await startWebSocketServer();
  const disposable = useServer(
    {
      schema,
      onConnect: (ctx) => {
        connections.push({ headers: { ...ctx.extra.request.headers }, payload: ctx.connectionParams });
      },
    },
    ws.wss,
  );
  return {
    ...reviewsAt(ws.url),
    open,
    connections,
    push,
    async close() {
      await disposable.dispose();
      await ws.close();
    },
  };
}

function wsUrl(router: TestRouter): string {
  return `${router.url!.replace(/^http/, 'ws')}/graphql`;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(config: Parameters<typeof startTestRouter>[0]['config'] = {}, plugins: SwitchyardPlugin[] = []) {
  const reviews = await startReviews();
  cleanups.push(() => reviews.close());
  const products = await startProducts();
  cleanups.push(() => products.close());
  const router = await startTestRouter({ subgraphs: [reviews, products], listen: true, config, plugins });
  cleanups.push(() => router.close());
  return { reviews, products, router };
}

function clientOf(router: TestRouter, connectionParams?: Record<string, unknown>): Client {
  const client = createClient({ url: wsUrl(router), webSocketImpl: WebSocket, retryAttempts: 0, lazy: true, connectionParams });
  cleanups.push(() => client.dispose());
  return client;
}

describe('subscriptions over WebSocket', () => {
  it('streams events with entity fields resolved from another subgraph per event', async () => {
    const { reviews, products, router } = await setup();
    const sub = collect(clientOf(router), { query: SUBSCRIPTION });
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    reviews.push({ id: 'r2', body: 'Wobbly', upc: 'p2' });
    await sub.until(() => sub.events.length === 2);
    expect(sub.events).toEqual([
      { data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: { upc: 'p1', name: 'Table', price: 100 } } } },
      { data: { reviewAdded: { id: 'r2', body: 'Wobbly', product: { upc: 'p2', name: 'Chair', price: 50 } } } },
    ]);
    // One entity fetch per event, over HTTP to products.
    expect(products.calls.filter((call) => call.query.includes('_entities'))).toHaveLength(2);
    reviews.push('end');
    await sub.until(() => sub.completed);
    expect(sub.error).toBeUndefined();
  });

  it('passes variables, propagates headers by the header rules and forwards the connection_init payload', async () => {
    const { reviews, router } = await setup({ headers: { all: { request: [{ op: 'propagate', named: 'authorization' }] } } });
    const client = clientOf(router, { headers: { Authorization: 'Bearer t0k3n' }, tenant: 'acme' });
    const sub = collect(client, { query: 'subscription ($upc: ID) { reviewAdded(upc: $upc) { id product { name } } }', variables: { upc: 'p2' } });
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'x', upc: 'p1' });
    reviews.push({ id: 'r2', body: 'y', upc: 'p2' });
    await sub.until(() => sub.events.length === 1);
    expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r2', product: { name: 'Chair' } } } }]);
    expect(reviews.connections).toHaveLength(1);
    expect(reviews.connections[0]!.headers.authorization).toBe('Bearer t0k3n');
    expect(reviews.connections[0]!.payload).toEqual({ headers: { Authorization: 'Bearer t0k3n' }, tenant: 'acme' });
  });

  it('reports an entity fetch failure in the event and keeps streaming', async () => {
    const { reviews, router } = await setup();
    const sub = collect(clientOf(router), { query: SUBSCRIPTION });
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Ghost', upc: 'missing' });
    reviews.push({ id: 'r2', body: 'Sturdy', upc: 'p1' });
    await sub.until(() => sub.events.length === 2);
    const [first, second] = sub.events as Array<{ data: unknown; errors?: Array<{ message: string; path?: unknown[] }> }>;
    // Product.name is non-null and Review.product too: the null reaches the (non-null) root field, so data is null.
    expect(first!.data).toBeNull();
    expect(first!.errors?.length).toBeGreaterThan(0);
    expect(second).toEqual({ data: { reviewAdded: { id: 'r2', body: 'Sturdy', product: { upc: 'p1', name: 'Table', price: 100 } } } });
  });

  it('errors the client when the subgraph fails mid-stream', async () => {
    const { reviews, router } = await setup();
    const sub = collect(clientOf(router), { query: SUBSCRIPTION });
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await sub.until(() => sub.events.length === 1);
    reviews.push({ fail: 'the review feed broke' });
    await sub.until(() => sub.error !== undefined);
    const errors = sub.error as Array<{ message: string; extensions?: Record<string, unknown> }>;
    expect(errors[0]!.message).toContain('the review feed broke');
    expect(errors[0]!.extensions?.code).toBe('SUBSCRIPTION_UPSTREAM_FAILED');
    expect(errors[0]!.extensions?.serviceName).toBe('reviews');
    await eventually(() => reviews.open() === 0);
  });

  it('closes the upstream subscription when the client completes or disconnects', async () => {
    const { reviews, router } = await setup();
    const client = clientOf(router);
    // Different subgraph operations (the same one would share an upstream, see dedup.test.ts).
    const first = collect(client, { query: SUBSCRIPTION });
    const second = collect(client, { query: SUBSCRIPTION.replace('reviewAdded', 'reviewAdded(upc: "p1")') });
    await eventually(() => reviews.open() === 2);
    first.dispose();
    await eventually(() => reviews.open() === 1);
    expect(second.completed).toBe(false);
    await client.dispose();
    await eventually(() => reviews.open() === 0);
    await eventually(() => reviews.connections.length === 2);
  });

  it('answers request errors with an error message, through the pipeline (validation, introspection off)', async () => {
    const { reviews, router } = await setup({ introspection: { enabled: false } });
    const client = clientOf(router);
    const invalid = collect(client, { query: 'subscription { reviewAdded { nope } }' });
    await invalid.until(() => invalid.error !== undefined);
    expect((invalid.error as Array<{ extensions?: { code?: string } }>)[0]!.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const introspection = collect(client, { query: '{ __schema { queryType { name } } }' });
    await introspection.until(() => introspection.error !== undefined);
    expect(reviews.open()).toBe(0);
  });

  it('runs plugins: request hooks may refuse, and each event passes fetch, merge and respond', async () => {
    const stages: string[] = [];
    const plugin: SwitchyardPlugin = {
      name: 'gate',
      setup: () => ({
        hooks: {
          onRequest(event) {
            stages.push('request');
            if (event.input.headers['x-token'] !== 'open-sesame') throw new RouterError('UNAUTHENTICATED', 'no token', { status: 401 });
          },
          onPlan: () => void stages.push('plan'),
          onFetch: (event) => void stages.push(`fetch:${event.input.subgraph}:${String(event.input.subscription)}`),
          onMerge: () => void stages.push('merge'),
          onRespond: () => (after) => after.setOutput({ ...after.output, body: { ...after.output.body, extensions: { seen: true } } }),
        },
      }),
    };
    const { reviews, router } = await setup({}, [plugin]);
    const refused = collect(clientOf(router), { query: SUBSCRIPTION });
    await refused.until(() => refused.error !== undefined);
    expect((refused.error as Array<{ extensions?: { code?: string } }>)[0]!.extensions?.code).toBe('UNAUTHENTICATED');
    expect(reviews.open()).toBe(0);
    stages.length = 0;
    const sub = collect(clientOf(router, { headers: { 'x-token': 'open-sesame' } }), { query: SUBSCRIPTION });
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await sub.until(() => sub.events.length === 1);
    expect(sub.events[0]).toMatchObject({ data: { reviewAdded: { product: { name: 'Table' } } }, extensions: { seen: true } });
    expect(stages).toEqual(['request', 'plan', 'fetch:products:true', 'merge']);
  });

  it('answers queries sent on the socket once', async () => {
    const { router } = await setup();
    const query = collect(clientOf(router), { query: '{ product(upc: "p1") { name } }' });
    await query.until(() => query.completed);
    expect(query.events).toEqual([{ data: { product: { name: 'Table' } } }]);
  });

  it('refuses subscriptions over HTTP with a coded error', async () => {
    const { router } = await setup();
    const response = await router.query(SUBSCRIPTION);
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('SUBSCRIPTION_NOT_SUPPORTED');
  });

  it('limits subscriptions per connection', async () => {
    const { reviews, router } = await setup({ subscriptions: { max_per_connection: 1 } });
    const client = clientOf(router);
    const first = collect(client, { query: SUBSCRIPTION });
    await eventually(() => reviews.open() === 1);
    const second = collect(client, { query: SUBSCRIPTION });
    await second.until(() => second.error !== undefined);
    expect((second.error as Array<{ extensions?: { code?: string } }>)[0]!.extensions?.code).toBe('SUBSCRIPTION_LIMIT_EXCEEDED');
    expect(first.error).toBeUndefined();
    expect(reviews.open()).toBe(1);
  });

  it('completes subscriptions and closes the upstream when the router shuts down', async () => {
    const { reviews, router } = await setup();
    const sub = collect(clientOf(router), { query: SUBSCRIPTION });
    await eventually(() => reviews.open() === 1);
    await router.close();
    await sub.until(() => sub.completed || sub.error !== undefined);
    expect(sub.completed).toBe(true);
    await eventually(() => reviews.open() === 0);
  });

  it('does not serve WebSocket when subscriptions are disabled', async () => {
    const { router } = await setup({ subscriptions: { enabled: false } });
    const code = await new Promise<string>((resolve) => {
      const socket = new WebSocket(wsUrl(router), 'graphql-transport-ws');
      socket.on('unexpected-response', (_req, res) => resolve(`http ${res.statusCode}`));
      socket.on('error', (error) => resolve(`error ${error.message}`));
      socket.on('open', () => resolve('open'));
    });
    expect(code).not.toBe('open');
    const response = await router.query(SUBSCRIPTION);
    expect(response.body.errors?.[0]?.message).toContain('subscriptions.enabled: false');
  });
});

describe('bad input on the WebSocket', () => {
  /** Opens a raw socket, sends the messages once open, and resolves with the close code. */
  function closeCode(router: TestRouter, protocol: string, messages: string[]): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(wsUrl(router), protocol);
      socket.on('open', () => {
        for (const message of messages) socket.send(message);
      });
      socket.on('close', (code) => resolve(code));
      socket.on('error', reject);
    });
  }

  it('refuses an unknown subprotocol with 4406', async () => {
    const { router } = await setup();
    expect(await closeCode(router, 'graphql-not-a-protocol', [])).toBe(4406);
  });

  it('closes with 4401 on subscribe before connection_init', async () => {
    const { router } = await setup();
    const subscribe = JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION } });
    expect(await closeCode(router, 'graphql-transport-ws', [subscribe])).toBe(4401);
  });

  it('closes with 4400 on a malformed message', async () => {
    const { router } = await setup();
    expect(await closeCode(router, 'graphql-transport-ws', [JSON.stringify({ type: 'connection_init' }), '{not json'])).toBe(4400);
    expect(await closeCode(router, 'graphql-transport-ws', [JSON.stringify({ type: 'connection_init' }), JSON.stringify({ type: 'subscribe', id: 1 })])).toBe(4400);
  });

  it('refuses upgrades on other paths', async () => {
    const { router } = await setup();
    const outcome = await new Promise<string>((resolve) => {
      const socket = new WebSocket(`${router.url!.replace(/^http/, 'ws')}/elsewhere`, 'graphql-transport-ws');
      socket.on('unexpected-response', (_req, res) => resolve(`http ${res.statusCode}`));
      socket.on('error', (error) => resolve(`error ${error.message}`));
      socket.on('open', () => resolve('open'));
    });
    expect(outcome).not.toBe('open');
  });
});
