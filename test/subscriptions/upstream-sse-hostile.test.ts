/**
 * A hostile subgraph serving subscriptions over SSE cannot make the router
 * buffer without end: an event larger than the subgraph's
 * `max_response_body` (here a `data:` line that never ends) is cut off, and
 * of an error answer with an endless body only the first 64 KiB are read.
 * Either way the client gets SUBSCRIPTION_UPSTREAM_FAILED at once, the
 * subgraph's connection is closed, and the heap holds nothing of it after.
 * The limit is strict (an event arriving whole in one chunk is measured)
 * and counts no keep-alive comments.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collect, REVIEWS_SDL, type ReviewsSubgraph, SUBSCRIPTION, setupSubscriptions, wsClient } from './fixtures.js';

const LIMIT = 1024 * 1024;
/** What a flooding subgraph sends at most (below V8's longest string, so an unbounded router fails slowly rather than crashing the test). */
const FLOOD_BYTES = 256 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

type Mode = 'flood' | 'error' | 'events' | 'comments' | 'one-write';

/** A raw SSE subgraph: what it answers each subscription request with is `mode`; it counts what it sent and what is open. */
interface HostileSubgraph extends ReviewsSubgraph {
  mode: Mode;
  sent: number;
}

async function startHostile(): Promise<HostileSubgraph> {
  let open = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    open++;
    res.once('close', () => open--);
    req.resume();
    if (state.mode === 'events') return sendEvents(res);
    if (state.mode === 'comments') return sendCommentedEvents(res);
    if (state.mode === 'one-write') return sendInOneWrite(res);
    if (state.mode === 'flood') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      return flood(res, 'event: next\ndata: ');
    }
    // JSON followed by whitespace: the first 64 KiB still parse as a GraphQL error answer.
    res.writeHead(500, { 'content-type': 'application/json' });
    flood(res, '{"errors":[{"message":"reviews overloaded"}]}', Buffer.alloc(64 * 1024, ' '));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const flood = (res: ServerResponse, first: string, chunk = CHUNK): void => {
    res.write(first);
    const pump = (): void => {
      while (!res.destroyed && state.sent < FLOOD_BYTES) {
        state.sent += chunk.byteLength;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
    };
    pump();
  };
  const state: HostileSubgraph = {
    name: 'reviews',
    typeDefs: REVIEWS_SDL,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    open: () => open,
    requests: [],
    push: () => undefined,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
    mode: 'flood',
    sent: 0,
  };
  return state;
}

/** Ten events of 200 KiB each (2 MiB in all, more than the limit), then `complete`. */
function sendEvents(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let i = 0; i < 10; i++) {
    const data = { data: { reviewAdded: { id: `r${i}`, body: 'x'.repeat(200 * 1024), product: { __typename: 'Product', upc: 'p1' } } } };
    res.write(`event: next\r\ndata: ${JSON.stringify(data)}\r\n\r\n`);
  }
  res.end('event: complete\ndata:\n\n');
}

/** Two events, each after 1.5 MiB of keep-alive comment lines without a blank line (more than the limit), then `complete`. */
function sendCommentedEvents(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const comments = ': keep-alive\n'.repeat((1.5 * LIMIT) / 13);
  for (let i = 0; i < 2; i++) {
    const data = { data: { reviewAdded: { id: `r${i}`, body: 'ok', product: { __typename: 'Product', upc: 'p1' } } } };
    res.write(`event: next\n${comments}data: ${JSON.stringify(data)}\n${comments}\n`);
  }
  res.end('event: complete\ndata:\n\n');
}

/** An event of 8 KiB and `complete` in one write: it reaches the router in one chunk, blank line included. */
function sendInOneWrite(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const data = { data: { reviewAdded: { id: 'r0', body: 'x'.repeat(8 * 1024), product: { __typename: 'Product', upc: 'p1' } } } };
  res.end(`event: next\ndata: ${JSON.stringify(data)}\n\nevent: complete\ndata:\n\n`);
}

let session: Session;
beforeAll(() => {
  session = new Session();
  session.connect();
});
afterAll(() => session.disconnect());

async function heapUsedAfterGc(): Promise<number> {
  await session.post('HeapProfiler.collectGarbage');
  return ((await session.post('Runtime.getHeapUsage')) as unknown as { usedSize: number }).usedSize;
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

type ClientError = Array<{ message: string; extensions: Record<string, unknown> }>;

describe('a hostile SSE subgraph', () => {
  let hostile: HostileSubgraph;
  const setup = async (mode: Mode, limit = '1MiB') => {
    const started = await setupSubscriptions({
      reviews: async () => (hostile = await startHostile()),
      subscription: (url) => ({ url, protocol: 'sse', websocketSubprotocol: 'auto' }),
      config: { traffic_shaping: { subgraphs: { reviews: { max_response_body: limit } } } },
    });
    hostile.mode = mode;
    return started;
  };

  it('sending an event without end is cut off at max_response_body: the client gets SUBSCRIPTION_UPSTREAM_FAILED and the heap keeps nothing', async () => {
    const router = await setup('flood');
    const before = await heapUsedAfterGc();
    const sub = collect(wsClient(router), { query: SUBSCRIPTION });
    await sub.until(() => sub.error !== undefined, 5_000);
    const [error] = sub.error as ClientError;
    expect(error!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
    expect(error!.message).toContain(`larger than ${LIMIT} bytes`);
    // The router closed the request: the subgraph stopped after little more than the limit (plus socket buffers).
    await sub.until(() => hostile.open() === 0);
    expect(hostile.sent).toBeLessThan(16 * LIMIT);
    const after = await heapUsedAfterGc();
    expect(after - before, `heap ${mb(before)} before, ${mb(after)} after`).toBeLessThan(4 * LIMIT);
  });

  it('answering 500 with an endless body: the router reads 64 KiB, passes on its GraphQL errors and closes the request', async () => {
    const router = await setup('error');
    const before = await heapUsedAfterGc();
    const sub = collect(wsClient(router), { query: SUBSCRIPTION });
    await sub.until(() => sub.error !== undefined, 5_000);
    const [error] = sub.error as ClientError;
    expect(error!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews', errors: [{ message: 'reviews overloaded' }] });
    expect(error!.message).toContain('answered 500');
    await sub.until(() => hostile.open() === 0);
    expect(hostile.sent).toBeLessThan(16 * LIMIT);
    const after = await heapUsedAfterGc();
    expect(after - before, `heap ${mb(before)} before, ${mb(after)} after`).toBeLessThan(4 * LIMIT);
  });

  it('still streams events that together exceed the limit, each under it, split across lines with CRLF', async () => {
    const router = await setup('events');
    const sub = collect(wsClient(router), { query: 'subscription { reviewAdded { id product { name } } }' });
    await sub.until(() => sub.completed);
    expect(sub.error).toBeUndefined();
    expect(sub.events).toEqual(Array.from({ length: 10 }, (_, i) => ({ data: { reviewAdded: { id: `r${i}`, product: { name: 'Table' } } } })));
  });
  it('does not count keep-alive comment lines toward an event, even without blank lines between them', async () => {
    const router = await setup('comments');
    const sub = collect(wsClient(router), { query: 'subscription { reviewAdded { id } }' });
    await sub.until(() => sub.completed || sub.error !== undefined);
    expect(sub.error).toBeUndefined();
    expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r0' } } }, { data: { reviewAdded: { id: 'r1' } } }]);
  });

  it('cuts off an event over the limit that arrives whole in one chunk', async () => {
    const router = await setup('one-write', '4KiB');
    const sub = collect(wsClient(router), { query: 'subscription { reviewAdded { id } }' });
    await sub.until(() => sub.error !== undefined || sub.completed);
    expect(sub.events).toEqual([]);
    const [error] = sub.error as ClientError;
    expect(error!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
    expect(error!.message).toContain('larger than 4096 bytes');
  });
});
