/**
 * Subscriptions on real router processes started by the CLI: with
 * `--workers 2` (node:cluster spreads connections over the workers, each
 * deduplicates its own subgraph subscriptions), and SIGTERM completing
 * every subscription within `grace_period`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient, type Client } from 'graphql-ws';
import { describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createExecutionConfig } from '../../src/compose/write-output.js';
import { startSubgraph } from '../../src/testing/index.js';
import { freePort, spawnCli, waitFor } from '../cli/run-cli.js';
import { eventually, onCleanup, PRODUCTS_SDL, startReviews, SUBSCRIPTION, type ReviewsSubgraph } from './fixtures.js';

vi.setConfig({ testTimeout: 120_000 });

const TABLE = { upc: 'p1', name: 'Table', price: 100 };

interface Subscriber {
  readonly events: unknown[];
  error: unknown;
  completed: boolean;
}

async function startGraph(config: string[]): Promise<{ reviews: ReviewsSubgraph; port: number; configFile: string }> {
  const reviews = await startReviews();
  onCleanup(() => reviews.close());
  const products = await startSubgraph({
    name: 'products',
    typeDefs: PRODUCTS_SDL,
    resolvers: { Product: { __resolveReference: (ref: { upc: string }) => (ref.upc === 'p1' ? TABLE : null) } } as never,
  });
  onCleanup(() => products.close());
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-sub-cli-'));
  onCleanup(() => rm(dir, { recursive: true, force: true }));
  const composed = composeSubgraphs([
    { name: 'reviews', url: reviews.url, sdl: reviews.typeDefs },
    { name: 'products', url: products.url, sdl: PRODUCTS_SDL },
  ]);
  await writeFile(join(dir, 'router.execution.config.json'), JSON.stringify(createExecutionConfig(composed)));
  const port = await freePort();
  const configFile = join(dir, 'router.config.yaml');
  await writeFile(
    configFile,
    ['version: "1"', `listen_addr: "127.0.0.1:${port}"`, 'execution_config:', '  file:', `    path: ${join(dir, 'router.execution.config.json')}`, ...config, ''].join('\n'),
  );
  return { reviews, port, configFile };
}

function subscribeWs(port: number): Subscriber {
  const client: Client = createClient({ url: `ws://127.0.0.1:${port}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
  onCleanup(() => client.dispose());
  const subscriber: Subscriber = { events: [], error: undefined, completed: false };
  client.subscribe(
    { query: SUBSCRIPTION },
    { next: (value) => void subscriber.events.push(value), error: (error) => void (subscriber.error = error), complete: () => void (subscriber.completed = true) },
  );
  return subscriber;
}

function subscribeSse(port: number): Subscriber {
  const client = createSseClient({ url: `http://127.0.0.1:${port}/graphql`, retryAttempts: 0 });
  onCleanup(() => client.dispose());
  const subscriber: Subscriber = { events: [], error: undefined, completed: false };
  client.subscribe(
    { query: SUBSCRIPTION },
    { next: (value) => void subscriber.events.push(value), error: (error) => void (subscriber.error = error), complete: () => void (subscriber.completed = true) },
  );
  return subscriber;
}

/** Pushes events until every subscriber got one (each joined its worker's subgraph subscription). */
async function untilJoined(reviews: ReviewsSubgraph, subscribers: readonly Subscriber[]): Promise<void> {
  for (let n = 0; !subscribers.every((subscriber) => subscriber.events.length > 0); n++) {
    if (n > 200) throw new Error('subscribers did not join in time');
    reviews.push({ id: `warm${n}`, body: 'warm-up', upc: 'p1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('subscriptions on router processes', () => {
  it('serves federated subscriptions with --workers 2, one subgraph subscription per worker, and completes them on SIGTERM', async () => {
    const { reviews, port, configFile } = await startGraph(['grace_period: 10s']);
    const child = spawnCli(['router', '-c', configFile, '--workers', '2']);
    let exited = false;
    void child.exited.then(() => (exited = true));
    onCleanup(() => {
      if (!exited) child.kill('SIGKILL');
    });
    await waitFor(async () => (child.output().stdout.match(/"msg":"Router listening"/g) ?? []).length >= 2);
    // Each WebSocket is a new connection: the cluster hands them to the workers in turn.
    const subscribers = [...Array.from({ length: 6 }, () => subscribeWs(port)), subscribeSse(port), subscribeSse(port)];
    await untilJoined(reviews, subscribers);
    // Two workers, each sharing one subgraph subscription between its clients.
    expect(reviews.open()).toBe(2);
    // Warm-up events may still be on their way: find r1 among each client's events.
    reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    const r1 = (subscriber: Subscriber) => subscriber.events.find((event) => (event as { data?: { reviewAdded?: { id?: string } } }).data?.reviewAdded?.id === 'r1');
    await eventually(() => subscribers.every((subscriber) => r1(subscriber) !== undefined));
    for (const subscriber of subscribers) expect(r1(subscriber)).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });

    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    const result = await child.exited;
    expect(result.code).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    await eventually(() => subscribers.every((subscriber) => subscriber.completed));
    expect(subscribers.map((subscriber) => subscriber.error)).toEqual(subscribers.map(() => undefined));
    await eventually(() => reviews.open() === 0);
  });

  it('completes every subscription on SIGTERM within grace_period and exits 0', async () => {
    const { reviews, port, configFile } = await startGraph(['grace_period: 5s']);
    const child = spawnCli(['router', '-c', configFile]);
    let exited = false;
    void child.exited.then(() => (exited = true));
    onCleanup(() => {
      if (!exited) child.kill('SIGKILL');
    });
    await waitFor(async () => /"msg":"Router listening"/.test(child.output().stdout));
    const subscribers = [subscribeWs(port), subscribeWs(port), subscribeSse(port)];
    await untilJoined(reviews, subscribers);
    expect(reviews.open()).toBe(1);

    const stoppedAt = Date.now();
    child.kill('SIGTERM');
    await eventually(() => subscribers.every((subscriber) => subscriber.completed), 5000);
    const result = await child.exited;
    expect(result.code).toBe(0);
    // Well within grace_period: open subscriptions do not hold the shutdown until it runs out.
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    expect(subscribers.map((subscriber) => subscriber.error)).toEqual([undefined, undefined, undefined]);
    await eventually(() => reviews.open() === 0);
  });
});
