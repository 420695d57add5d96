/**
 * Hot reload with running subscriptions: the router watches its execution
 * config file; a new graph ends the subscriptions it invalidates with
 * SUBSCRIPTION_INVALIDATED and moves the others onto itself.
 */
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient, type Client } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createExecutionConfig } from '../../src/compose/write-output.js';
import { createLogger } from '../../src/kernel/logger.js';
import { createRouter, type Router } from '../../src/kernel/router/router.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { eventually, onCleanup, PRODUCTS_SDL, startReviews, type ReviewsSubgraph } from './fixtures.js';

/** Products without `price`: operations selecting it no longer validate. */
const PRODUCTS_V2_SDL = PRODUCTS_SDL.replace(' price: Int', '');

async function startProducts(name: string, sdl: string): Promise<TestSubgraph> {
  const products = await startSubgraph({
    name: 'products',
    typeDefs: sdl,
    resolvers: {
      Product: { __resolveReference: (ref: { upc: string }) => ({ upc: ref.upc, name: `${name} ${ref.upc}`, price: 1 }) },
    } as never,
  });
  onCleanup(() => products.close());
  return products;
}

async function reviewsServer(): Promise<ReviewsSubgraph> {
  const reviews = await startReviews();
  onCleanup(() => reviews.close());
  return reviews;
}

/** Writes the file as editors and `switchyard compose` do: a new file renamed over the old one. */
async function writeGraph(file: string, reviews: ReviewsSubgraph, products: TestSubgraph, productsSdl: string): Promise<void> {
  const composed = composeSubgraphs([
    { name: 'reviews', url: reviews.url, sdl: reviews.typeDefs },
    { name: 'products', url: products.url, sdl: productsSdl },
  ]);
  await writeFile(`${file}.tmp`, JSON.stringify(createExecutionConfig(composed)));
  await rename(`${file}.tmp`, file);
}

async function watchedRouter(reviews: ReviewsSubgraph, products: TestSubgraph): Promise<{ router: Router; file: string; url: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-sub-reload-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'router.execution.config.json');
  await writeGraph(file, reviews, products, PRODUCTS_SDL);
  const router = await createRouter({ graph: file, logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }) });
  onCleanup(() => router.close());
  const { url } = await router.listen('127.0.0.1:0');
  return { router, file, url: `${url.replace(/^http/, 'ws')}/graphql` };
}

interface Subscriber {
  readonly events: unknown[];
  error: unknown;
}

function subscribe(url: string, query: string): Subscriber {
  const client: Client = createClient({ url, webSocketImpl: WebSocket, retryAttempts: 0 });
  onCleanup(() => client.dispose());
  const subscriber: Subscriber = { events: [], error: undefined };
  client.subscribe({ query }, { next: (value) => void subscriber.events.push(value), error: (error) => void (subscriber.error = error), complete: () => undefined });
  return subscriber;
}

const WITH_PRICE = 'subscription { reviewAdded { id product { name price } } }';
const WITHOUT_PRICE = 'subscription { reviewAdded { id product { name } } }';

function codeOf(error: unknown): string | undefined {
  return (error as Array<{ extensions?: { code?: string } }>)[0]?.extensions?.code;
}

describe('hot reload with running subscriptions', () => {
  it('ends the subscriptions the new graph invalidates with an error and keeps the rest, on the new graph', async () => {
    const reviews = await reviewsServer();
    const products = await startProducts('Old', PRODUCTS_SDL);
    const { router, file, url } = await watchedRouter(reviews, products);
    const priced = subscribe(url, WITH_PRICE);
    const plain = subscribe(url, WITHOUT_PRICE);
    // Both ask reviews for the same fields: they share one subgraph subscription. Events until both joined it:
    for (let n = 0; !(priced.events.length > 0 && plain.events.length > 0); n++) {
      if (n > 100) throw new Error('subscribers did not join in time');
      reviews.push({ id: `warm${n}`, body: 'Sturdy', upc: 'p1' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(reviews.open()).toBe(1);
    expect(priced.events.at(-1)).toEqual({ data: { reviewAdded: { id: expect.any(String), product: { name: 'Old p1', price: 1 } } } });

    // The new graph: products moved to another server, and lost `price`.
    const moved = await startProducts('New', PRODUCTS_V2_SDL);
    await writeGraph(file, reviews, moved, PRODUCTS_V2_SDL);
    await eventually(() => router.graph?.subgraphs.get('products')?.url === moved.url, 10_000);

    await eventually(() => priced.error !== undefined);
    expect(codeOf(priced.error)).toBe('SUBSCRIPTION_INVALIDATED');
    expect((priced.error as Array<{ message: string }>)[0]!.message).toMatch(/price/);
    // The subgraph subscription stays for the one kept.
    expect(reviews.open()).toBe(1);
    reviews.push({ id: 'r2', body: 'Wobbly', upc: 'p2' });
    // (Warm-up events may still have been on their way: r2 is looked up by id.)
    const r2 = (events: unknown[]) => events.find((event) => (event as { data?: { reviewAdded?: { id?: string } } }).data?.reviewAdded?.id === 'r2');
    await eventually(() => r2(plain.events) !== undefined);
    // The kept subscription now fetches its entities from the new products server.
    expect(r2(plain.events)).toEqual({ data: { reviewAdded: { id: 'r2', product: { name: 'New p2' } } } });
    expect(plain.error).toBeUndefined();
    expect(r2(priced.events)).toBeUndefined();
  });

  it('ends the subscriptions of a subgraph that moved to another URL, and new ones go to the new URL', async () => {
    const reviews = await reviewsServer();
    const products = await startProducts('Old', PRODUCTS_SDL);
    const { router, file, url } = await watchedRouter(reviews, products);
    const before = subscribe(url, WITHOUT_PRICE);
    const sse = createSseClient({ url: url.replace(/^ws/, 'http'), retryAttempts: 0 });
    onCleanup(() => sse.dispose());
    const overSse: Subscriber = { events: [], error: undefined };
    sse.subscribe({ query: WITHOUT_PRICE }, { next: (value) => void overSse.events.push(value), error: (error) => void (overSse.error = error), complete: () => undefined });
    // Events until both joined (they share one subgraph subscription).
    for (let n = 0; !(before.events.length > 0 && overSse.events.length > 0); n++) {
      if (n > 100) throw new Error('subscribers did not join in time');
      reviews.push({ id: `warm${n}`, body: 'Sturdy', upc: 'p1' });
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(reviews.open()).toBe(1);

    const reviews2 = await reviewsServer();
    await writeGraph(file, reviews2, products, PRODUCTS_SDL);
    await eventually(() => router.graph?.subgraphs.get('reviews')?.url === reviews2.url, 10_000);
    await eventually(() => before.error !== undefined);
    expect(codeOf(before.error)).toBe('SUBSCRIPTION_INVALIDATED');
    expect((before.error as Array<{ message: string }>)[0]!.message).toContain(reviews2.url);
    // Over SSE: a last event with only the error.
    await eventually(() => overSse.events.length > 0);
    expect(overSse.events.at(-1)).toMatchObject({ errors: [{ extensions: { code: 'SUBSCRIPTION_INVALIDATED' } }] });
    await eventually(() => reviews.open() === 0);

    const after = subscribe(url, WITHOUT_PRICE);
    await eventually(() => reviews2.open() === 1);
    reviews2.push({ id: 'r9', body: 'Fine', upc: 'p1' });
    await eventually(() => after.events.length === 1);
    expect(after.events[0]).toEqual({ data: { reviewAdded: { id: 'r9', product: { name: 'Old p1' } } } });
  });

  it('keeps every subscription when the reloaded graph serves them unchanged', async () => {
    const reviews = await reviewsServer();
    const products = await startProducts('Old', PRODUCTS_SDL);
    const { router, file, url } = await watchedRouter(reviews, products);
    const subscriber = subscribe(url, WITH_PRICE);
    await eventually(() => reviews.open() === 1);
    const loadedAt = router.graph!.loadedAt;
    // The same subgraphs, with a new field on products: nothing running is affected.
    const extended = PRODUCTS_SDL.replace(' price: Int', ' price: Int weight: Int');
    await writeGraph(file, reviews, products, extended);
    await eventually(() => router.graph!.loadedAt !== loadedAt, 10_000);
    reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => subscriber.events.length === 1);
    expect(subscriber.error).toBeUndefined();
    expect(reviews.open()).toBe(1);
  });
});
