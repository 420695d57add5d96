/**
 * Authorization across graph reloads. A running subscription is planned again
 * on each new graph through the plan stage, so the new graph's
 * `@requiresScopes` decide what later events carry (and a protected root field
 * ends the stream); a request already in flight when the graph changes is
 * authorized on the graph it was validated on. Real subgraphs (reviews streams
 * over graphql-ws, products answers entities over HTTP); clients are
 * graphql-sse and graphql-ws clients with a token lacking the scopes.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { createExecutionConfig } from '../../../src/compose/write-output.js';
import type { GraphSource } from '../../../src/kernel/graph/execution-config.js';
import { createLogger } from '../../../src/kernel/logger.js';
import type { SwitchyardPlugin } from '../../../src/kernel/pipeline/plugin.js';
import { createRouter, type Router } from '../../../src/kernel/router/router.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { onCleanup, startReviews, type ReviewsSubgraph } from '../../subscriptions/fixtures.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key", "@requiresScopes"])';

/** What the router composes for reviews (the running subgraph serves the same fields; the directives are the router's business). */
const REVIEWS_SDL = /* GraphQL */ `
  ${LINK}
  type Query { reviewCount: Int }
  type Subscription { reviewAdded(upc: ID): Review! }
  type Review { id: ID! body: String! product: Product! }
  type Product @key(fields: "upc") { upc: ID! }
`;
/** The subscription's root field itself protected. */
const REVIEWS_ROOT_PROTECTED_SDL = REVIEWS_SDL.replace('reviewAdded(upc: ID): Review!', 'reviewAdded(upc: ID): Review! @requiresScopes(scopes: [["read:reviews"]])');

const PRODUCTS_OPEN_SDL = /* GraphQL */ `
  ${LINK}
  type Query { product(upc: ID!): Product }
  type Product @key(fields: "upc") { upc: ID! name: String! price: Int }
`;
const PRODUCTS_PROTECTED_SDL = PRODUCTS_OPEN_SDL.replace(' price: Int', ' price: Int @requiresScopes(scopes: [["read:price"]])');

const TABLE = { upc: 'p1', name: 'Table', price: 4242 };
const SUBSCRIPTION = 'subscription { reviewAdded { id product { name price } } }';

let key: SigningKey;
let jwks: JwksServer;
/** Serves `price` whatever the router's graph says: only the router's filtering keeps it from a caller. */
let products: TestSubgraph;

beforeAll(async () => {
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
  products = await startSubgraph({
    name: 'products',
    typeDefs: PRODUCTS_PROTECTED_SDL,
    resolvers: {
      Query: { product: (_: unknown, { upc }: { upc: string }) => (upc === TABLE.upc ? TABLE : null) },
      Product: { __resolveReference: (ref: { upc: string }) => (ref.upc === TABLE.upc ? TABLE : null) },
    } as never,
  });
});

afterAll(async () => {
  await Promise.all([jwks?.close(), products?.close()]);
});

/** A token with a scope, but none of those the graphs ask for. */
const tokenWithoutScopes = () => sign(key, { claims: { scope: 'read:name' } });

function graphOf(reviews: ReviewsSubgraph, reviewsSdl: string, productsSdl: string): GraphSource {
  const composed = composeSubgraphs([
    { name: 'reviews', url: reviews.url, sdl: reviewsSdl },
    { name: 'products', url: products.url, sdl: productsSdl },
  ]);
  return { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' };
}

/** The router over `graph` (a source, or an execution config file it watches), with authentication and authorization. */
async function startRouter(graph: GraphSource | string, extra: SwitchyardPlugin[] = []): Promise<{ router: Router; url: string }> {
  const router = await createRouter({
    config: typeof graph === 'string' ? {} : { execution_config: { file: { watch: false } } },
    plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization({}), ...extra],
    graph,
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
  });
  onCleanup(() => router.close());
  const { url } = await router.listen('127.0.0.1:0');
  return { router, url: `${url}/graphql` };
}

async function reviewsServer(): Promise<ReviewsSubgraph> {
  const reviews = await startReviews();
  onCleanup(() => reviews.close());
  return reviews;
}

/** What one client received for one subscription. */
interface Stream {
  readonly label: string;
  readonly events: unknown[];
  error: unknown;
  completed: boolean;
}

interface Sink {
  next(value: unknown): void;
  error(error: unknown): void;
  complete(): void;
}

function collect(label: string, subscribe: (sink: Sink) => () => void): Stream {
  const stream: Stream = { label, events: [], error: undefined, completed: false };
  const dispose = subscribe({
    next: (value) => void stream.events.push(value),
    error: (error) => void (stream.error = error),
    complete: () => void (stream.completed = true),
  });
  onCleanup(dispose);
  return stream;
}

/** Over Server-Sent Events (graphql-sse, POST with the token in `Authorization`). */
function overSse(url: string, token: string): Stream {
  const client = createSseClient({ url, headers: bearer(token), retryAttempts: 0 });
  onCleanup(() => client.dispose());
  return collect('sse', (sink) => client.subscribe({ query: SUBSCRIPTION }, sink));
}

/** Over WebSocket (graphql-ws, the token in connection_init). */
function overWebSocket(url: string, token: string, label = 'ws'): Stream {
  const client = createWsClient({ url: url.replace(/^http/, 'ws'), webSocketImpl: WebSocket, retryAttempts: 0, connectionParams: { Authorization: `Bearer ${token}` } });
  onCleanup(() => client.dispose());
  return collect(label, (sink) => client.subscribe({ query: SUBSCRIPTION }, sink));
}

/** What the streams received, for a failure message. */
function received(streams: Stream[]): string {
  return streams.map((s) => `${s.label}: events ${JSON.stringify(s.events)}, error ${JSON.stringify(s.error)}, completed ${s.completed}`).join('\n');
}

/** Waits (polling) until `check` holds; fails after `timeoutMs` saying what arrived. */
async function until(check: () => boolean, streams: Stream[], timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out; received:\n${received(streams)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let pushed = 0;
/** Pushes one review and waits until every stream received it; returns each stream's event for it. */
async function pushAndReceive(reviews: ReviewsSubgraph, streams: Stream[]): Promise<unknown[]> {
  const id = `r${++pushed}`;
  reviews.push({ id, body: 'Sturdy', upc: 'p1' });
  const find = (stream: Stream) => stream.events.find((event) => (event as { data?: { reviewAdded?: { id?: string } } }).data?.reviewAdded?.id === id);
  await until(() => streams.every((stream) => find(stream) !== undefined), streams);
  return streams.map(find);
}

/** Pushes reviews until every stream received one (the subscriptions are open upstream). */
async function warmUp(reviews: ReviewsSubgraph, streams: Stream[]): Promise<void> {
  const deadline = Date.now() + 4000;
  while (!streams.every((stream) => stream.events.length > 0)) {
    if (Date.now() > deadline) throw new Error(`the subscriptions did not start; received:\n${received(streams)}`);
    reviews.push({ id: `warm${++pushed}`, body: 'Warm', upc: 'p1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const unauthorized = (path: Array<string | number>) => ({ message: expect.stringMatching(/^Unauthorized to access /), path, extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } });
const idOf = (event: unknown) => (event as { data: { reviewAdded: { id: string } } }).data.reviewAdded.id;
/** An event with `price` withheld: null, and the error at its path. */
const withheld = (event: unknown) => ({
  data: { reviewAdded: { id: idOf(event), product: { name: 'Table', price: null } } },
  errors: [unauthorized(['reviewAdded', 'product', 'price'])],
});
const priceAsked = () => products.calls.some((call) => /\bprice\b/.test(call.query));

describe('running subscriptions across a graph reload', () => {
  it.each(['router.loadGraph', 'an edit of the watched graph file'] as const)(
    'after a reload of the same graph (%s), a caller without the scope still gets price null with the error, over SSE and WebSocket, and products is never asked for it',
    async (how) => {
      const reviews = await reviewsServer();
      const graph = graphOf(reviews, REVIEWS_SDL, PRODUCTS_PROTECTED_SDL);
      let file: string | undefined;
      if (how === 'an edit of the watched graph file') {
        const dir = await mkdtemp(join(tmpdir(), 'switchyard-authz-reload-'));
        onCleanup(() => rm(dir, { recursive: true, force: true }));
        file = join(dir, 'router.execution.config.json');
        await writeFile(file, JSON.stringify(createExecutionConfig(graph)));
      }
      const { router, url } = await startRouter(file ?? graph);
      const token = await tokenWithoutScopes();
      const streams = [overSse(url, token), overWebSocket(url, token)];
      await warmUp(reviews, streams);
      for (const event of await pushAndReceive(reviews, streams)) expect(event).toEqual(withheld(event));

      products.reset();
      const before = router.graph!;
      if (file) {
        // As editors and `switchyard compose` write it: a new file (the same graph) renamed over the old one.
        await writeFile(`${file}.tmp`, JSON.stringify(createExecutionConfig(graph)));
        await rename(`${file}.tmp`, file);
        await until(() => router.graph !== before, streams, 5000);
      } else {
        await router.loadGraph(graphOf(reviews, REVIEWS_SDL, PRODUCTS_PROTECTED_SDL));
      }
      expect(router.graph).not.toBe(before);

      for (let n = 0; n < 3; n++) {
        for (const event of await pushAndReceive(reviews, streams)) expect(event).toEqual(withheld(event));
      }
      expect(products.calls.length).toBeGreaterThan(0);
      expect(priceAsked()).toBe(false);
      for (const stream of streams) {
        expect(stream.error).toBeUndefined();
        expect(stream.completed).toBe(false);
      }
    },
  );

  it('a reload that adds @requiresScopes to a selected field: later events have it null with the error', async () => {
    const reviews = await reviewsServer();
    const { router, url } = await startRouter(graphOf(reviews, REVIEWS_SDL, PRODUCTS_OPEN_SDL));
    const token = await tokenWithoutScopes();
    const streams = [overSse(url, token), overWebSocket(url, token)];
    await warmUp(reviews, streams);
    for (const event of await pushAndReceive(reviews, streams)) expect(event).toEqual({ data: { reviewAdded: { id: idOf(event), product: { name: 'Table', price: 4242 } } } });

    await router.loadGraph(graphOf(reviews, REVIEWS_SDL, PRODUCTS_PROTECTED_SDL));
    // The subscriptions are planned again asynchronously: events until both run under the new rules.
    const deadline = Date.now() + 3000;
    for (;;) {
      const events = await pushAndReceive(reviews, streams);
      if (events.every((event) => (event as { errors?: unknown }).errors !== undefined)) break;
      if (Date.now() > deadline) throw new Error(`price still served after the reload: ${JSON.stringify(events)}`);
    }
    products.reset();
    for (let n = 0; n < 2; n++) {
      for (const event of await pushAndReceive(reviews, streams)) expect(event).toEqual(withheld(event));
    }
    expect(products.calls.length).toBeGreaterThan(0);
    expect(priceAsked()).toBe(false);
  });

  it('a reload that protects the subscription root field: the stream ends with UNAUTHORIZED_FIELD_OR_TYPE; a caller with the scope goes on', async () => {
    const reviews = await reviewsServer();
    const { router, url } = await startRouter(graphOf(reviews, REVIEWS_SDL, PRODUCTS_OPEN_SDL));
    const token = await tokenWithoutScopes();
    const sse = overSse(url, token);
    const ws = overWebSocket(url, token);
    const allowed = overWebSocket(url, await sign(key, { claims: { scope: 'read:reviews' } }), 'ws with read:reviews');
    const streams = [sse, ws, allowed];
    await warmUp(reviews, streams);

    await router.loadGraph(graphOf(reviews, REVIEWS_ROOT_PROTECTED_SDL, PRODUCTS_OPEN_SDL));
    const refusal = {
      message: expect.stringMatching(/^Unauthorized to access Subscription\.reviewAdded/),
      extensions: expect.objectContaining({ code: 'UNAUTHORIZED_FIELD_OR_TYPE' }),
    };
    // Over WebSocket: an `error` message ends the operation.
    await until(() => ws.error !== undefined, streams);
    expect(ws.error).toEqual([refusal]);
    // Over SSE: a last event with only the error, then the stream completes.
    await until(() => sse.completed, streams);
    expect(sse.events.at(-1)).toEqual({ errors: [refusal] });
    expect(sse.error).toBeUndefined();

    const [event] = await pushAndReceive(reviews, [allowed]);
    expect(event).toEqual({ data: { reviewAdded: { id: idOf(event), product: { name: 'Table', price: 4242 } } } });
    expect(allowed.error).toBeUndefined();
    const seen = [sse.events.length, ws.events.length];
    await pushAndReceive(reviews, [allowed]);
    expect([sse.events.length, ws.events.length]).toEqual(seen);
  });
});

describe('a request in flight across a graph reload', () => {
  it('is authorized on the graph it was validated on: price protected there, not in the new graph, still null with the error', async () => {
    const reviews = await reviewsServer();
    // Holds the next request in its validate stage until released.
    let held: (() => void) | undefined;
    let release: () => void = () => undefined;
    const hold: SwitchyardPlugin = {
      name: 'hold-validate',
      setup: () => ({
        hooks: {
          async onValidate() {
            if (!held) return;
            const entered = held;
            held = undefined;
            const gate = new Promise<void>((resolve) => (release = resolve));
            entered();
            await gate;
          },
        },
      }),
    };
    const { router, url } = await startRouter(graphOf(reviews, REVIEWS_SDL, PRODUCTS_PROTECTED_SDL), [hold]);
    const query = (token: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer(token) }, body: JSON.stringify({ query: '{ product(upc: "p1") { name price } }' }) });
    const token = await tokenWithoutScopes();

    const entered = new Promise<void>((resolve) => (held = resolve));
    const inFlight = query(token);
    await Promise.race([entered, new Promise((_, reject) => setTimeout(() => reject(new Error('the request never reached validation')), 3000))]);
    products.reset();
    // The new graph: `price` without @requiresScopes.
    await router.loadGraph(graphOf(reviews, REVIEWS_SDL, PRODUCTS_OPEN_SDL));
    release();

    const response = await inFlight;
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { product: { name: 'Table', price: null } }, errors: [unauthorized(['product', 'price'])] });
    expect(products.calls.length).toBe(1);
    expect(priceAsked()).toBe(false);

    // A request that starts on the new graph gets the field.
    expect(await (await query(token)).json()).toEqual({ data: { product: { name: 'Table', price: 4242 } } });
  });
});
