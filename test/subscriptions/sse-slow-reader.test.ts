/**
 * An SSE client (GET or POST) that stops reading while the subgraph streams
 * many events much smaller than `subscriptions.max_queued_bytes`: the router
 * must count everything it holds for that response (graphql-sse's handler
 * included) and drop the client as too slow, which ends the subgraph
 * subscription; a client that reads gets every event, in order.
 */
import net from 'node:net';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createLogger } from '../../src/kernel/logger.js';
import { createRouter } from '../../src/kernel/router/router.js';
import { collect, eventually, onCleanup, startProducts, startReviews, SUBSCRIPTION, SUBSCRIPTION_P1, type SubscriptionSetup, wsClient } from './fixtures.js';

/** 16 KiB events with a 256 KiB bound: no single event comes near the bound. */
const BODY = 'x'.repeat(16 * 1024);
const LIMIT = '256KiB';
/** At most 64 MiB of events: many times what loopback socket buffers hold. */
const MAX_EVENTS = 4000;
const DROP_WARNING = 'Ending a streamed subscription whose client reads too slowly';

type Method = 'GET' | 'POST';

/** The subgraphs and a router bounded at LIMIT whose warnings the test reads. */
async function setup(): Promise<SubscriptionSetup & { readonly warnings: Array<Record<string, unknown>> }> {
  const reviews = await startReviews();
  onCleanup(() => reviews.close());
  const products = await startProducts();
  onCleanup(() => products.close());
  const composed = composeSubgraphs([
    { name: reviews.name, url: reviews.url, sdl: reviews.typeDefs },
    { name: products.name, url: products.url, sdl: products.typeDefs },
  ]);
  const warnings: Array<Record<string, unknown>> = [];
  const router = await createRouter({
    config: { subscriptions: { max_queued_bytes: LIMIT }, execution_config: { file: { watch: false } } },
    graph: { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' },
    logger: createLogger({ level: 'warn', destination: { write: (line: string) => void warnings.push(JSON.parse(line)) } }),
  });
  onCleanup(() => router.close());
  const { url } = await router.listen('127.0.0.1:0');
  return { reviews, products, router, url, warnings };
}

const dropped = (warnings: Array<Record<string, unknown>>): boolean => warnings.some((line) => line.msg === DROP_WARNING);

/** A raw-socket SSE request (GET with the query in the URL, or a JSON POST); `text` is all it read (chunk framing included). */
async function rawSse(url: string, method: Method) {
  const { port } = new URL(url);
  const socket = net.connect(Number(port), '127.0.0.1');
  onCleanup(() => void socket.destroy());
  const state = { socket, text: '', closed: false };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (state.text += chunk));
  socket.on('close', () => (state.closed = true));
  await new Promise((resolve) => socket.once('connect', resolve));
  const body = JSON.stringify({ query: SUBSCRIPTION });
  socket.write(
    method === 'GET'
      ? `GET /graphql?query=${encodeURIComponent(SUBSCRIPTION)} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`
      : `POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return state;
}

const MULTIPART = 'multipart/mixed;subscriptionSpec="1.0"';

/** A streamed (SSE or multipart) client that reads everything as it comes (node's HTTP client); `text` is the stream. */
async function readingClient(url: string, method: Method, accept = 'text/event-stream') {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const target = method === 'GET' ? `${url}/graphql?query=${encodeURIComponent(SUBSCRIPTION)}` : `${url}/graphql`;
    const headers: Record<string, string> = { accept, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) };
    const req = httpRequest(target, { method, headers }, resolve);
    req.on('error', reject);
    onCleanup(() => void req.destroy());
    req.end(method === 'POST' ? JSON.stringify({ query: SUBSCRIPTION }) : undefined);
  });
  expect(res.statusCode).toBe(200);
  const state = { text: '' };
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => (state.text += chunk));
  return state;
}

/** Review ids of the `next` events in an SSE text, in order. */
const reviewIds = (text: string): string[] => [...text.matchAll(/"reviewAdded":\{"id":"([^"]+)"/g)].map((match) => match[1]!);

/** Pushes warm-up events until `joined` holds (every client is on the shared subgraph subscription). */
async function untilJoined(reviews: SubscriptionSetup['reviews'], joined: () => boolean): Promise<string[]> {
  const ids: string[] = [];
  await eventually(() => {
    const id = `warm${ids.length}`;
    ids.push(id);
    reviews.push({ id, body: 'warm-up', upc: 'p1' });
    return joined();
  }, 10_000);
  return ids;
}

/** Review ids a graphql-ws client collected. */
const collectedIds = (events: unknown[]): string[] => events.map((event) => (event as { data: { reviewAdded: { id: string } } }).data.reviewAdded.id);

/**
 * The subgraph emits 16 KiB events in bursts of 5 (80 KiB, well below the
 * bound), each once a reading client got the previous burst (`got`), so the
 * router keeps up and only the stalled client is slow; until `stop` holds,
 * MAX_EVENTS were sent, or 15 s passed. Returns the ids sent.
 */
async function emit(reviews: SubscriptionSetup['reviews'], got: (id: string) => boolean, stop: () => boolean): Promise<string[]> {
  const sent: string[] = [];
  const deadline = Date.now() + 15_000;
  for (let i = 0; i < MAX_EVENTS && Date.now() < deadline; i++) {
    const id = `e${i}`;
    sent.push(id);
    reviews.push({ id, body: BODY, upc: 'p1' });
    if (i % 5 === 4) {
      await eventually(() => got(id), 10_000);
      if (stop()) break;
    }
  }
  return sent;
}

describe.each<Method>(['GET', 'POST'])('an SSE client (%s) that stops reading', (method) => {
  it('is dropped with the slow-client warning, and its subgraph subscription ends, though each event is far below the bound', async () => {
    const { reviews, url, warnings } = await setup();
    // The pace: a client of another subgraph subscription (same events) that reads everything.
    const pace = collect(wsClient({ url } as SubscriptionSetup), { query: SUBSCRIPTION_P1 });
    const slow = await rawSse(url, method);
    await untilJoined(reviews, () => slow.text.includes('"warm') && pace.events.length > 0);
    expect(reviews.open()).toBe(2);
    slow.socket.pause();
    const started = Date.now();
    await emit(
      reviews,
      (id) => collectedIds(pace.events).includes(id),
      () => dropped(warnings),
    );
    expect(dropped(warnings)).toBe(true);
    const warning = warnings.find((line) => line.msg === DROP_WARNING)!;
    expect(warning.level).toBe('warn');
    expect(warning.limit).toBe(256 * 1024);
    expect(warning.queued_bytes).toBeGreaterThan(256 * 1024);
    // The slow client's subgraph subscription is closed while it is still connected; the other goes on.
    await eventually(() => reviews.open() === 1, 5_000);
    expect(slow.closed).toBe(false);
    expect(Date.now() - started).toBeLessThan(15_000);
    pace.dispose();
    await eventually(() => reviews.open() === 0, 5_000);
    // Reading again, the client gets what its socket held, then the error and `complete`.
    slow.socket.resume();
    await eventually(() => /"code":"SUBSCRIPTION_CLIENT_TOO_SLOW"[\s\S]*event: complete/.test(slow.text), 10_000);
    expect(reviewIds(slow.text).length).toBeLessThan(MAX_EVENTS);
  });

  it('is dropped while a reading SSE client on the same subgraph subscription gets every event in order', async () => {
    const { reviews, url, warnings } = await setup();
    const slow = await rawSse(url, method);
    const reader = await readingClient(url, method);
    const warm = await untilJoined(reviews, () => slow.text.includes('"warm') && reader.text.includes('"warm'));
    expect(reviews.open()).toBe(1);
    slow.socket.pause();
    // 50 more events after the drop.
    let after = 50;
    const sent = await emit(
      reviews,
      (id) => reviewIds(reader.text).includes(id),
      () => dropped(warnings) && --after < 0,
    );
    // Only the stalled client was dropped.
    expect(warnings.filter((line) => line.msg === DROP_WARNING)).toHaveLength(1);
    reviews.push({ id: 'last', body: 'the end', upc: 'p1' });
    await eventually(() => reviewIds(reader.text).includes('last'), 10_000);
    // Every event, once, in order (the warm-up events the reader joined before included).
    const got = reviewIds(reader.text);
    expect(got.slice(got.indexOf('e0'))).toEqual([...sent, 'last']);
    expect(got.filter((id) => id.startsWith('warm')).every((id) => warm.includes(id))).toBe(true);
    expect(reviews.open()).toBe(1);
  });
});

describe.each<{ protocol: string; method: Method; accept: string }>([
  { protocol: 'SSE', method: 'GET', accept: 'text/event-stream' },
  { protocol: 'SSE', method: 'POST', accept: 'text/event-stream' },
  { protocol: 'multipart', method: 'POST', accept: MULTIPART },
])('a $protocol client ($method) that reads everything', ({ method, accept }) => {
  it('is not dropped when bursts larger than the bound arrive faster than the router answers them', async () => {
    const { reviews, url, warnings } = await setup();
    const reader = await readingClient(url, method, accept);
    await untilJoined(reviews, () => reader.text.includes('"warm'));
    const sent: string[] = [];
    // Bursts of 40 events (640 KiB) at once: the router's queue for the client passes the bound while each waits for its entity fetch.
    for (let burst = 0; burst < 5; burst++) {
      for (let i = 0; i < 40; i++) {
        const id = `b${burst}e${i}`;
        sent.push(id);
        reviews.push({ id, body: BODY, upc: 'p1' });
      }
      await eventually(() => reviewIds(reader.text).includes(sent.at(-1)!) || dropped(warnings), 10_000);
    }
    expect(warnings).toEqual([]);
    const got = reviewIds(reader.text);
    expect(got.slice(got.indexOf('b0e0'))).toEqual(sent);
  });
});
