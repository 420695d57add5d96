/**
 * Authentication and authorization on subscriptions over WebSocket
 * (graphql-transport-ws): the token from the upgrade request or from the
 * connection_init payload, checked when the client subscribes; restricted
 * fields nulled in every event, or the subscription refused. A real
 * graphql-ws subgraph streams reviews; product fields come from an HTTP
 * subgraph per event; clients are graphql-ws clients (and a graphql-sse
 * client where a token's expiry ends a stream).
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient, type Client } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useAuthentication, type AuthenticationConfigInput } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { startWebSocketServer } from '../../support/loopback-server.js';
import { eventually, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';

const REVIEWS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@authenticated", "@requiresScopes"])
  type Query { reviewCount: Int }
  type Subscription {
    reviewAdded: Review!
    auditLog: String! @authenticated
  }
  type Review @key(fields: "id") {
    id: ID!
    body: String!
    rating: Int @requiresScopes(scopes: [["read:rating"]])
    product: Product!
  }
  type Product @key(fields: "upc") { upc: ID! }
`;

const PRODUCTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@requiresScopes"])
  type Query { product(upc: ID!): Product }
  type Product @key(fields: "upc") {
    upc: ID!
    name: String!
    price: Int @requiresScopes(scopes: [["read:price"]])
  }
`;

const PRODUCTS = new Map([['p1', { upc: 'p1', name: 'Table', price: 100 }]]);

/** A graphql-ws subgraph: the test pushes reviews to every open subscription; it records what it was sent. */
interface ReviewsSubgraph {
  readonly name: string;
  readonly url: string;
  readonly typeDefs: string;
  readonly open: () => number;
  /** Upgrade headers of each connection. */
  readonly connections: Array<Record<string, unknown>>;
  /** Query text of each subscribe message. */
  readonly subscribed: string[];
  push(review: { id: string; body: string; rating: number; upc: string }): void;
  close(): Promise<void>;
}

async function startReviews(): Promise<ReviewsSubgraph> {
  const queues = new Set<{ push(value: unknown): void }>();
  const connections: ReviewsSubgraph['connections'] = [];
  const subscribed: string[] = [];
  /** An iterator the test feeds; its return() ends it at once. */
  const feed = (map: (review: { id: string; body: string; rating: number; upc: string }) => unknown): AsyncIterableIterator<unknown> => {
    const pending: unknown[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const queue = {
      push(value: unknown) {
        pending.push(map(value as never));
        wake?.();
      },
    };
    queues.add(queue);
    const done = { done: true as const, value: undefined };
    return {
      async next() {
        while (!ended && pending.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        return ended ? done : { done: false, value: pending.shift() };
      },
      async return() {
        ended = true;
        queues.delete(queue);
        wake?.();
        return done;
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  };
  const schema = buildSubgraphSchema({
    typeDefs: parse(REVIEWS_SDL),
    resolvers: {
      Subscription: {
        reviewAdded: { subscribe: () => feed((review) => ({ reviewAdded: { ...review, product: { __typename: 'Product', upc: review.upc } } })) },
        auditLog: { subscribe: () => feed((review) => ({ auditLog: `review ${review.id}` })) },
      },
    } as never,
  });
  const ws = await startWebSocketServer();
  const disposable = useServer(
    {
      schema,
      onConnect: (ctx) => void connections.push({ ...ctx.extra.request.headers }),
      onSubscribe: (_ctx, _id, payload) => void subscribed.push(payload.query),
    },
    ws.wss,
  );
  return {
    name: 'reviews',
    typeDefs: REVIEWS_SDL,
    url: ws.url,
    open: () => queues.size,
    connections,
    subscribed,
    push: (review) => {
      for (const queue of [...queues]) queue.push(review);
    },
    async close() {
      await disposable.dispose();
      await ws.close();
    },
  };
}

/** What a graphql-ws client receives for one subscription. */
function collect(client: Client, query: string) {
  const events: unknown[] = [];
  const state: { error: unknown } = { error: undefined };
  client.subscribe({ query }, { next: (value) => void events.push(value), error: (error) => (state.error = error), complete: () => undefined });
  return {
    events,
    get error() {
      return state.error as Array<{ message: string; extensions?: { code?: string } }> | undefined;
    },
  };
}

let key: SigningKey;
let jwks: JwksServer;
let products: TestSubgraph;

beforeAll(async () => {
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
  products = await startSubgraph({
    name: 'products',
    typeDefs: PRODUCTS_SDL,
    resolvers: { Product: { __resolveReference: (ref: { upc: string }) => PRODUCTS.get(ref.upc) ?? null } } as never,
  });
});

afterAll(async () => {
  await Promise.all([jwks?.close(), products?.close()]);
});

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  authorization: Parameters<typeof useAuthorization>[0] = {},
  authentication: Partial<AuthenticationConfigInput> = {},
  config: Parameters<typeof startTestRouter>[0]['config'] = {},
): Promise<{ reviews: ReviewsSubgraph; router: TestRouter }> {
  const reviews = await startReviews();
  cleanups.push(() => reviews.close());
  const router = await startTestRouter({
    subgraphs: [reviews, products],
    listen: true,
    config,
    plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, ...authentication }), useAuthorization(authorization)],
  });
  cleanups.push(() => router.close());
  return { reviews, router };
}

/** A graphql-ws client; `upgradeHeaders` go on the WebSocket upgrade request, `connectionParams` in connection_init. */
function clientOf(router: TestRouter, options: { upgradeHeaders?: Record<string, string>; connectionParams?: Record<string, unknown> } = {}): Client {
  const headers = options.upgradeHeaders;
  class UpgradeWithHeaders extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, headers ? { headers } : {});
    }
  }
  const client = createClient({
    url: `${router.url!.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: UpgradeWithHeaders,
    retryAttempts: 0,
    lazy: true,
    connectionParams: options.connectionParams,
  });
  cleanups.push(() => client.dispose());
  return client;
}

const REVIEWS = 'subscription { reviewAdded { id body rating product { name price } } }';
const token = (scope?: string, claims: Record<string, unknown> = {}) => sign(key, { claims: { ...(scope ? { scope } : {}), ...claims } });
const unauthorized = (path: Array<string | number>) => ({ message: expect.stringMatching(/^Unauthorized to access /), path, extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } });

describe('require_authentication on a WebSocket', () => {
  it('refuses a subscription without a token, and opens nothing upstream', async () => {
    const { reviews, router } = await setup({ require_authentication: true });
    const sub = collect(clientOf(router), REVIEWS);
    await eventually(() => sub.error !== undefined);
    expect(sub.error).toEqual([expect.objectContaining({ message: 'Authentication is required: send a valid token.', extensions: { code: 'UNAUTHENTICATED' } })]);
    expect(reviews.open()).toBe(0);
    expect(reviews.connections).toHaveLength(0);
  });

  it('takes the token from the upgrade request, from connection_init (Authorization, any case) and from its headers object', async () => {
    const { reviews, router } = await setup({ require_authentication: true });
    const jwt = await token('read:rating read:price');
    const clients = [
      clientOf(router, { upgradeHeaders: { authorization: `Bearer ${jwt}` } }),
      clientOf(router, { connectionParams: { Authorization: `Bearer ${jwt}` } }),
      clientOf(router, { connectionParams: { authorization: `Bearer ${jwt}` } }),
      clientOf(router, { connectionParams: { headers: { Authorization: `Bearer ${jwt}` } } }),
    ];
    const subs = clients.map((client) => collect(client, REVIEWS));
    await eventually(() => reviews.open() === 4);
    reviews.push({ id: 'r1', body: 'Sturdy', rating: 5, upc: 'p1' });
    await eventually(() => subs.every((sub) => sub.events.length === 1));
    for (const sub of subs) {
      expect(sub.error).toBeUndefined();
      expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r1', body: 'Sturdy', rating: 5, product: { name: 'Table', price: 100 } } } }]);
    }
  });

  it('refuses an invalid token from connection_init with 401 UNAUTHENTICATED, even without require_authentication', async () => {
    const { reviews, router } = await setup();
    const expired = await sign(key, { expiresIn: -3600 });
    for (const connectionParams of [{ Authorization: 'Bearer not.a.token' }, { Authorization: `Bearer ${expired}` }, { Authorization: 'Basic dXNlcjpwdw==' }]) {
      const sub = collect(clientOf(router, { connectionParams }), REVIEWS);
      await eventually(() => sub.error !== undefined);
      expect(sub.error?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect(reviews.open()).toBe(0);
  });

  it('with ignore_introspection, answers introspection on the socket without a token but still refuses the subscription', async () => {
    const { reviews, router } = await setup({ require_authentication: true }, { ignore_introspection: true });
    const client = clientOf(router);
    const introspection = collect(client, '{ __schema { subscriptionType { name } } }');
    await eventually(() => introspection.events.length === 1);
    expect(introspection.events).toEqual([{ data: { __schema: { subscriptionType: { name: 'Subscription' } } } }]);
    const sub = collect(client, REVIEWS);
    await eventually(() => sub.error !== undefined);
    expect(sub.error?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    expect(reviews.open()).toBe(0);
  });
});

describe('directives on subscription events', () => {
  it('nulls restricted fields in every event, with errors at their paths, and never asks the subgraphs for them', async () => {
    const { reviews, router } = await setup();
    products.reset();
    const sub = collect(clientOf(router, { connectionParams: { Authorization: `Bearer ${await token('read:price')}` } }), REVIEWS);
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', rating: 5, upc: 'p1' });
    reviews.push({ id: 'r2', body: 'Wobbly', rating: 1, upc: 'p1' });
    await eventually(() => sub.events.length === 2);
    expect(sub.events).toEqual([
      { data: { reviewAdded: { id: 'r1', body: 'Sturdy', rating: null, product: { name: 'Table', price: 100 } } }, errors: [unauthorized(['reviewAdded', 'rating'])] },
      { data: { reviewAdded: { id: 'r2', body: 'Wobbly', rating: null, product: { name: 'Table', price: 100 } } }, errors: [unauthorized(['reviewAdded', 'rating'])] },
    ]);
    expect(reviews.subscribed).toHaveLength(1);
    expect(reviews.subscribed[0]).not.toMatch(/rating/);
  });

  it('without a token: fields of the per-event entity fetch are removed too', async () => {
    const { reviews, router } = await setup();
    products.reset();
    const sub = collect(clientOf(router), REVIEWS);
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', rating: 5, upc: 'p1' });
    await eventually(() => sub.events.length === 1);
    expect(sub.events).toEqual([
      {
        data: { reviewAdded: { id: 'r1', body: 'Sturdy', rating: null, product: { name: 'Table', price: null } } },
        errors: expect.arrayContaining([unauthorized(['reviewAdded', 'rating']), unauthorized(['reviewAdded', 'product', 'price'])]),
      },
    ]);
    expect(products.calls.map((call) => call.query).join('\n')).not.toMatch(/price/);
  });

  it('refuses a subscription whose root field the caller may not see', async () => {
    const { reviews, router } = await setup();
    const sub = collect(clientOf(router), 'subscription { auditLog }');
    await eventually(() => sub.error !== undefined);
    expect(sub.error).toEqual([
      expect.objectContaining({ message: 'Unauthorized to access Subscription.auditLog: not authenticated.', extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } }),
    ]);
    expect(reviews.open()).toBe(0);
    // With a token it streams.
    const allowed = collect(clientOf(router, { connectionParams: { Authorization: `Bearer ${await token()}` } }), 'subscription { auditLog }');
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r9', body: '', rating: 0, upc: 'p1' });
    await eventually(() => allowed.events.length === 1);
    expect(allowed.events).toEqual([{ data: { auditLog: 'review r9' } }]);
  });

  it('reject mode: a subscription selecting a field the token may not see is refused, nothing opened upstream', async () => {
    const { reviews, router } = await setup({ reject_operation_if_unauthorized: true });
    const refused = collect(clientOf(router, { connectionParams: { Authorization: `Bearer ${await token('read:price')}` } }), REVIEWS);
    await eventually(() => refused.error !== undefined);
    expect(refused.error?.[0]?.extensions?.code).toBe('UNAUTHORIZED_FIELD_OR_TYPE');
    expect(refused.error?.[0]?.message).toMatch(/Review\.rating/);
    expect(reviews.open()).toBe(0);
    const allowed = collect(clientOf(router, { connectionParams: { Authorization: `Bearer ${await token('read:price read:rating')}` } }), REVIEWS);
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', rating: 5, upc: 'p1' });
    await eventually(() => allowed.events.length === 1);
    expect(allowed.events).toEqual([{ data: { reviewAdded: { id: 'r1', body: 'Sturdy', rating: 5, product: { name: 'Table', price: 100 } } } }]);
  });
});

describe('forward_claims on a subscription', () => {
  it('sends claims on the stream and on the per-event entity fetches, and a client cannot send the claim header itself', async () => {
    const { reviews, router } = await setup(
      {},
      { forward_claims: { sub: 'x-user-id' } },
      // This rule would pass a client's own x-user-id on; the plugin must drop it.
      { headers: { all: { request: [{ op: 'propagate', matching: '^x-' }] } } },
    );
    products.reset();
    const jwt = await token('read:rating read:price', { sub: 'ada' });
    const sub = collect(clientOf(router, { upgradeHeaders: { 'x-user-id': 'mallory', 'x-trace': 't1' }, connectionParams: { Authorization: `Bearer ${jwt}` } }), REVIEWS);
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r1', body: 'Sturdy', rating: 5, upc: 'p1' });
    await eventually(() => sub.events.length === 1);
    expect(reviews.connections).toHaveLength(1);
    // The token's claim, not the client's own header of that name.
    expect(reviews.connections[0]!['x-user-id']).toBe('ada');
    expect(reviews.connections[0]!['x-trace']).toBe('t1');
    expect(products.calls.map((call) => call.headers['x-user-id'])).toEqual(['ada']);
  });
});

describe('a token that expires while its subscription runs', () => {
  const EXPIRED = 'The token has expired, so the subscription has ended; subscribe again with a new token.';

  it('ends that subscription when the token expires (WebSocket); a subscription with a longer-lived token goes on', async () => {
    const { reviews, router } = await setup({}, { jwt: { jwks: [{ url: jwks.url }], clock_skew: '0s' } });
    const shortLived = await sign(key, { expiresIn: 4 });
    const ending = collect(clientOf(router, { connectionParams: { Authorization: `Bearer ${shortLived}` } }), REVIEWS);
    const lasting = collect(clientOf(router, { connectionParams: { Authorization: `Bearer ${await token()}` } }), REVIEWS);
    await eventually(() => reviews.open() === 2);
    reviews.push({ id: 'r1', body: 'Sturdy', rating: 5, upc: 'p1' });
    await eventually(() => ending.events.length === 1 && lasting.events.length === 1);
    expect(ending.error).toBeUndefined();

    // exp is in whole seconds: the token expires 3 to 4 s after it was signed.
    await eventually(() => ending.error !== undefined, 8000);
    expect(ending.error).toEqual([expect.objectContaining({ message: EXPIRED, extensions: { code: 'UNAUTHENTICATED' } })]);
    // Its subgraph subscription is closed; the other client's is not.
    await eventually(() => reviews.open() === 1);
    reviews.push({ id: 'r2', body: 'Wobbly', rating: 1, upc: 'p1' });
    await eventually(() => lasting.events.length === 2);
    expect(ending.events).toHaveLength(1);
    expect(lasting.error).toBeUndefined();
  });

  it('ends an SSE subscription with a last event carrying the error, counting clock_skew', async () => {
    const { reviews, router } = await setup({}, { jwt: { jwks: [{ url: jwks.url }], clock_skew: '1s' } });
    const signedAt = Date.now();
    const shortLived = await sign(key, { expiresIn: 2 });
    const sse = createSseClient({ url: `${router.url!}/graphql`, retryAttempts: 0, headers: { authorization: `Bearer ${shortLived}` } });
    cleanups.push(() => sse.dispose());
    const events: unknown[] = [];
    let completedAt: number | undefined;
    sse.subscribe({ query: REVIEWS }, { next: (value) => void events.push(value), error: () => undefined, complete: () => void (completedAt = Date.now()) });
    await eventually(() => reviews.open() === 1);
    await eventually(() => completedAt !== undefined, 8000);
    expect(events).toEqual([{ errors: [expect.objectContaining({ message: EXPIRED, extensions: { code: 'UNAUTHENTICATED' } })] }]);
    // Not before exp + clock_skew (exp is signedAt rounded down to the second, plus 2 s).
    expect(completedAt! - Math.floor(signedAt / 1000) * 1000).toBeGreaterThanOrEqual(3000);
    await eventually(() => reviews.open() === 0);
  });
});
