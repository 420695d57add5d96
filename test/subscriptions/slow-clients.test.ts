/**
 * A client that stops reading while the subgraph streams large events (the
 * HTTP streams: many 16 KiB events, each far below the bound):
 * past `subscriptions.max_queued_bytes` the router drops it (WebSocket:
 * close code 1008; SSE: a last event with SUBSCRIPTION_CLIENT_TOO_SLOW),
 * so what it holds for that client stays bounded, and a fast client on the
 * same subgraph subscription receives every event.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ConfigError, parseConfig } from '../../src/kernel/config/index.js';
import { collect, eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, type SubscriptionSetup, wsClient } from './fixtures.js';

/** Events of 128 KiB each, 80 of them (10 MiB): more than twice what loopback socket buffers hold here (a paused client took about 4.5 MiB). */
const BIG_BODY = 'x'.repeat(128 * 1024);
const BIG_EVENTS = 80;
/** The HTTP streams get the same 10 MiB as 640 events of 16 KiB, each far below the bound: what is held for them must add up. */
const SMALL_BODY = 'x'.repeat(16 * 1024);
const SMALL_EVENTS = 640;
const LIMIT = '256KiB';

interface SlowSocket {
  readonly ids: string[];
  readonly closed: number | undefined;
  pause(): void;
  resume(): void;
}

/** A raw WebSocket client (either subprotocol) subscribed to SUBSCRIPTION; it records the review ids it got. */
async function slowSocket(setup: SubscriptionSetup, subprotocol: 'graphql-transport-ws' | 'graphql-ws'): Promise<SlowSocket> {
  const socket = new WebSocket(`${setup.url.replace(/^http/, 'ws')}/graphql`, subprotocol);
  onCleanup(() => socket.terminate());
  const ids: string[] = [];
  let closed: number | undefined;
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { type: string; payload?: { data?: { reviewAdded?: { id: string } } } };
    const id = message.payload?.data?.reviewAdded?.id;
    if (id) ids.push(id);
  });
  socket.on('close', (code) => (closed = code));
  const acknowledged = new Promise<void>((resolve) =>
    socket.on('message', (data) => {
      if (String(data).includes('"connection_ack"')) resolve();
    }),
  );
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init' }));
  await acknowledged;
  const payload = { query: SUBSCRIPTION };
  socket.send(JSON.stringify(subprotocol === 'graphql-ws' ? { type: 'start', id: '1', payload } : { type: 'subscribe', id: '1', payload }));
  return {
    ids,
    get closed() {
      return closed;
    },
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  };
}

/** Pushes warm-up events until every check passes (each client joined the shared subgraph subscription). */
async function untilJoined(setup: SubscriptionSetup, joined: () => boolean): Promise<void> {
  let n = 0;
  await eventually(() => {
    setup.reviews.push({ id: `warm${n++}`, body: 'warm-up', upc: 'p1' });
    return joined();
  });
}

/** The subgraph emits the big events (`count` of `body`) in bursts of 10, each once the fast client got the previous burst. */
async function emitBigEvents(setup: SubscriptionSetup, fastEvents: unknown[], body = BIG_BODY, count = BIG_EVENTS): Promise<void> {
  for (let i = 0; i < count; i++) {
    setup.reviews.push({ id: `big${i}`, body, upc: 'p1' });
    if (i % 10 === 9) await eventually(() => reviewIds(fastEvents).includes(`big${i}`), 10_000);
  }
}

const reviewIds = (events: unknown[]): string[] => events.map((event) => (event as { data: { reviewAdded: { id: string } } }).data.reviewAdded.id);

describe('slow subscription clients', () => {
  it('closes a WebSocket that stops reading with 1008 (either subprotocol) while a fast client on the same subscription gets every event', async () => {
    const setup = await setupSubscriptions({ config: { subscriptions: { max_queued_bytes: LIMIT } } });
    const fast = collect(wsClient(setup), { query: SUBSCRIPTION });
    const modern = await slowSocket(setup, 'graphql-transport-ws');
    const legacy = await slowSocket(setup, 'graphql-ws');
    await untilJoined(setup, () => fast.events.length > 0 && modern.ids.length > 0 && legacy.ids.length > 0);
    expect(setup.reviews.open()).toBe(1);
    modern.pause();
    legacy.pause();
    await emitBigEvents(setup, fast.events);
    expect(reviewIds(fast.events).filter((id) => id.startsWith('big'))).toHaveLength(BIG_EVENTS);
    // The slow clients read what reached their sockets, then the close.
    modern.resume();
    legacy.resume();
    await eventually(() => modern.closed !== undefined && legacy.closed !== undefined, 10_000);
    expect(modern.closed).toBe(1008);
    expect(legacy.closed).toBe(1008);
    for (const slow of [modern, legacy]) expect(slow.ids.filter((id) => id.startsWith('big')).length).toBeLessThan(BIG_EVENTS);
    // The shared subgraph subscription goes on for the fast client.
    setup.reviews.push({ id: 'after', body: 'still here', upc: 'p1' });
    await eventually(() => reviewIds(fast.events).includes('after'));
    expect(setup.reviews.open()).toBe(1);
  });

  it.each([
    { protocol: 'SSE', accept: 'text/event-stream', last: /"code":"SUBSCRIPTION_CLIENT_TOO_SLOW".*\n\nevent: complete\ndata:\s*$/s, part: 'event: next' },
    {
      protocol: 'multipart',
      accept: 'multipart/mixed;subscriptionSpec="1.0"',
      last: /\{"payload":null,"errors":\[[^\n]*"code":"SUBSCRIPTION_CLIENT_TOO_SLOW"[^\n]*\r\n--graphql--\r\n$/s,
      part: '{"payload":{',
    },
  ])('ends a $protocol stream that stops reading with SUBSCRIPTION_CLIENT_TOO_SLOW while a fast client gets every event', async ({ accept, last, part }) => {
    const setup = await setupSubscriptions({ config: { subscriptions: { max_queued_bytes: LIMIT } } });
    const fast = collect(wsClient(setup), { query: SUBSCRIPTION });
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`${setup.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify({ query: SUBSCRIPTION }));
    });
    onCleanup(() => void res.destroy());
    expect(res.statusCode).toBe(200);
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => (text += chunk));
    const ended = new Promise<void>((resolve) => res.once('end', resolve));
    await untilJoined(setup, () => fast.events.length > 0 && text.includes('warm'));
    res.pause();
    await emitBigEvents(setup, fast.events, SMALL_BODY, SMALL_EVENTS);
    expect(reviewIds(fast.events).filter((id) => id.startsWith('big'))).toHaveLength(SMALL_EVENTS);
    res.resume();
    await ended;
    expect(text).toMatch(last);
    expect(text.split(part).length - 1).toBeLessThan(SMALL_EVENTS);
    setup.reviews.push({ id: 'after', body: 'still here', upc: 'p1' });
    await eventually(() => reviewIds(fast.events).includes('after'));
  });
});

describe('subscriptions.max_queued_bytes', () => {
  it('is a size with a unit, 4MiB by default, 0B for no limit; other values are refused naming the key', () => {
    const parse = (subscriptions: Record<string, unknown>) => parseConfig({ version: '1', subscriptions }, { env: {} }).core.subscriptions.max_queued_bytes;
    expect(parse({})).toBe(4 * 1024 * 1024);
    expect(parse({ max_queued_bytes: '0B' })).toBe(0);
    expect(parse({ max_queued_bytes: '512KB' })).toBe(512_000);
    for (const bad of ['lots', '-1MB', 1024]) {
      let refused: unknown;
      try {
        parse({ max_queued_bytes: bad });
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).issues[0]!.path).toBe('subscriptions.max_queued_bytes');
    }
  });
});
