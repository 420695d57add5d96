/**
 * Client-triggered failures of the router's WebSocket endpoint, with raw
 * `ws` clients against a router over real subscription subgraphs: a
 * subscription id reused right after `complete` (either subprotocol), a
 * client that stops reading while it sends queries, a connection reset with
 * operations pending, a message over the size limit, variables nested
 * thousands of levels deep.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket from 'ws';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createLogger } from '../../src/kernel/logger.js';
import { createRouter } from '../../src/kernel/router/router.js';
import { startSubgraph } from '../../src/testing/index.js';
import { collect, eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, type SubscriptionSetup, wsClient } from './fixtures.js';

interface Message {
  readonly type: string;
  readonly id?: string;
  readonly payload?: unknown;
}

interface RawClient {
  readonly socket: WebSocket;
  readonly received: Message[];
  readonly closed: number | undefined;
  send(message: unknown): void;
  /** Messages of `type` for `id` received after the first `from` messages. */
  count(type: string, id: string, from?: number): number;
}

/** A raw client on `subprotocol`, acknowledged (connection_init sent, connection_ack received). */
async function rawClient(setup: SubscriptionSetup, subprotocol: 'graphql-transport-ws' | 'graphql-ws'): Promise<RawClient> {
  const socket = new WebSocket(`${setup.url.replace(/^http/, 'ws')}/graphql`, subprotocol);
  onCleanup(() => socket.terminate());
  socket.on('error', () => undefined);
  const received: Message[] = [];
  let closed: number | undefined;
  socket.on('message', (data) => received.push(JSON.parse(String(data)) as Message));
  socket.on('close', (code) => (closed = code));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
  await eventually(() => received.some((message) => message.type === 'connection_ack'));
  return {
    socket,
    received,
    get closed() {
      return closed;
    },
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    count: (type, id, from = 0) => received.slice(from).filter((message) => message.type === type && message.id === id).length,
  };
}

const PROTOCOLS = [
  { subprotocol: 'graphql-transport-ws', subscribe: 'subscribe', complete: 'complete', next: 'next' },
  { subprotocol: 'graphql-ws', subscribe: 'start', complete: 'stop', next: 'data' },
] as const;

let pushed = 0;
const push = (setup: SubscriptionSetup): void => setup.reviews.push({ id: `e${pushed++}`, body: 'event', upc: 'p1' });

/** Pushes events until `check` holds (a subscription that is still starting gets a later one). */
async function pushUntil(setup: SubscriptionSetup, check: () => boolean): Promise<void> {
  await eventually(() => {
    push(setup);
    return check();
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const INTROSPECTION = '{ __schema { types { name kind description fields { name description args { name } type { name kind ofType { name kind } } } } } }';

afterEach(() => {
  vi.restoreAllMocks();
});

describe.each(PROTOCOLS)('a subscription id reused after $complete ($subprotocol)', ({ subprotocol, subscribe, complete, next }) => {
  it('runs the new subscription under the id, which the next complete stops; a disconnect ends everything on the subgraph', async () => {
    const setup = await setupSubscriptions();
    const client = await rawClient(setup, subprotocol);
    const payload = { query: SUBSCRIPTION };
    client.send({ type: subscribe, id: 'r', payload });
    await pushUntil(setup, () => client.count(next, 'r') > 0);
    // Back to back: the old operation is still ending when the new one arrives (a race: several rounds).
    let mark = 0;
    for (let round = 0; round < 5; round++) {
      client.send({ type: complete, id: 'r' });
      client.send({ type: subscribe, id: 'r', payload });
      mark = client.received.length;
      await pushUntil(setup, () => client.count(next, 'r', mark) > 0);
    }
    expect(client.closed).toBeUndefined();
    // The complete stops the subscription the client has under the id now.
    client.send({ type: complete, id: 'r' });
    await eventually(() => setup.reviews.open() === 0);
    await sleep(100);
    mark = client.received.length;
    push(setup);
    push(setup);
    await sleep(300);
    expect(client.count(next, 'r', mark)).toBe(0);
    // The id is free again: a third subscribe with it is served, not refused.
    client.send({ type: subscribe, id: 'r', payload });
    mark = client.received.length;
    await pushUntil(setup, () => client.count(next, 'r', mark) > 0);
    expect(client.closed).toBeUndefined();
    client.socket.terminate();
    await eventually(() => setup.reviews.open() === 0);
  });

  it('runs the new operation when the id is reused while the first one is still starting', async () => {
    const setup = await setupSubscriptions();
    const client = await rawClient(setup, subprotocol);
    // All three in one go: the first subscription (p2's reviews only) is still starting when it is completed.
    client.send({ type: subscribe, id: 'r', payload: { query: SUBSCRIPTION.replace('reviewAdded', 'reviewAdded(upc: "p2")') } });
    client.send({ type: complete, id: 'r' });
    client.send({ type: subscribe, id: 'r', payload: { query: SUBSCRIPTION } });
    // p1's reviews reach the second subscription only.
    await pushUntil(setup, () => client.count(next, 'r') > 0);
    expect(client.closed).toBeUndefined();
    client.send({ type: complete, id: 'r' });
    await eventually(() => setup.reviews.open() === 0);
    const mark = client.received.length;
    push(setup);
    await sleep(300);
    expect(client.count(next, 'r', mark)).toBe(0);
  });

  it('frees the subscriptions.max_total slot of each reused id when the client disconnects', async () => {
    const setup = await setupSubscriptions({ config: { subscriptions: { max_total: 3 } } });
    const payload = { query: SUBSCRIPTION };
    for (let round = 0; round < 5; round++) {
      const client = await rawClient(setup, subprotocol);
      client.send({ type: subscribe, id: 'r', payload });
      await pushUntil(setup, () => client.count(next, 'r') > 0);
      client.send({ type: complete, id: 'r' });
      client.send({ type: subscribe, id: 'r', payload });
      const mark = client.received.length;
      await pushUntil(setup, () => client.count(next, 'r', mark) > 0);
      client.socket.terminate();
      await eventually(() => setup.reviews.open() === 0);
    }
    const fresh = collect(wsClient(setup), { query: SUBSCRIPTION });
    await pushUntil(setup, () => fresh.events.length > 0 || fresh.error !== undefined);
    expect(fresh.error).toBeUndefined();
  });
});

describe('a reused id whose subscribe is refused (graphql-transport-ws)', () => {
  it('closes with 4409 and a reason cut to a close frame, however long the id; the router keeps serving', async () => {
    const setup = await setupSubscriptions();
    const client = await rawClient(setup, 'graphql-transport-ws');
    // 300 characters, several bytes each: the reason would pass the 123 bytes a close frame carries.
    const id = 'é'.repeat(300);
    // The second subscribe waits for the first to end; the third finds it waiting and is refused.
    client.send({ type: 'subscribe', id, payload: { query: SUBSCRIPTION } });
    client.send({ type: 'complete', id });
    client.send({ type: 'subscribe', id, payload: { query: SUBSCRIPTION } });
    client.send({ type: 'subscribe', id, payload: { query: SUBSCRIPTION } });
    await eventually(() => client.closed !== undefined);
    expect(client.closed).toBe(4409);
    const fresh = collect(wsClient(setup), { query: SUBSCRIPTION });
    await pushUntil(setup, () => fresh.events.length > 0 || fresh.error !== undefined);
    expect(fresh.error).toBeUndefined();
  });
});

describe.each(PROTOCOLS)('a client that reads everything ($subprotocol)', ({ subprotocol, subscribe }) => {
  it('gets an answer larger than subscriptions.max_queued_bytes in full, with its complete, and stays connected', async () => {
    // 6 MB in one answer: more than the default bound (4 MiB) and than a loopback socket takes at once.
    const sdl = 'type Query { big(n: Int!): String }';
    const big = await startSubgraph({ name: 'big', typeDefs: sdl, resolvers: { Query: { big: (_: unknown, { n }: { n: number }) => 'x'.repeat(n) } } });
    onCleanup(() => big.close());
    const composed = composeSubgraphs([{ name: 'big', url: big.url, sdl }]);
    const router = await createRouter({
      config: { execution_config: { file: { watch: false } } },
      graph: { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' },
      logger: createLogger({ level: 'silent' }),
    });
    onCleanup(() => router.close());
    const { url } = await router.listen('127.0.0.1:0');
    const client = await rawClient({ url } as SubscriptionSetup, subprotocol);
    for (let i = 0; i < 2; i++) {
      client.send({ type: subscribe, id: `q${i}`, payload: { query: '{ big(n: 6000000) }' } });
      await eventually(() => client.received.some((message) => message.type === 'complete' && message.id === `q${i}`) || client.closed !== undefined, 20_000);
    }
    expect(client.closed).toBeUndefined();
    const answers = client.received.filter((message) => message.id?.startsWith('q') && message.type !== 'complete');
    expect(answers.map((message) => (message.payload as { data?: { big?: string } }).data?.big?.length)).toEqual([6_000_000, 6_000_000]);
  });
});

describe.each(PROTOCOLS)('a client that stops reading ($subprotocol)', ({ subprotocol, subscribe }) => {
  it('is closed like a slow subscription reader once the answers to its queries pass subscriptions.max_queued_bytes', async () => {
    const setup = await setupSubscriptions({ config: { subscriptions: { max_queued_bytes: '256KiB' } } });
    const client = await rawClient(setup, subprotocol);
    client.socket.pause();
    // About 1500 answers of several KiB each: far more than loopback socket buffers hold.
    for (let round = 0; round < 15; round++) {
      for (let i = 0; i < 100; i++) client.send({ type: subscribe, id: `q${round}-${i}`, payload: { query: INTROSPECTION } });
      await sleep(50);
    }
    await sleep(500);
    client.socket.resume();
    await eventually(() => client.closed !== undefined, 15_000);
    expect(client.closed).toBe(1008);
    expect(client.received.filter((message) => message.type !== 'ka').length).toBeLessThan(1500);
  });
});

describe('errors on a graphql-transport-ws connection', () => {
  it('writes nothing to the console when a client resets its connection with operations pending', async () => {
    const setup = await setupSubscriptions();
    const printed = [vi.spyOn(console, 'error'), vi.spyOn(console, 'warn'), vi.spyOn(console, 'log')];
    const client = await rawClient(setup, 'graphql-transport-ws');
    client.send({ type: 'subscribe', id: 's', payload: { query: SUBSCRIPTION } });
    await pushUntil(setup, () => client.count('next', 's') > 0);
    client.socket.pause();
    for (let i = 0; i < 2000; i++) client.send({ type: 'subscribe', id: `q${i}`, payload: { query: INTROSPECTION } });
    await sleep(500);
    (client.socket as unknown as { _socket: { resetAndDestroy(): void } })._socket.resetAndDestroy();
    await eventually(() => setup.reviews.open() === 0);
    await sleep(500);
    for (const spy of printed) expect(spy).not.toHaveBeenCalled();
  });

  it('closes a connection that sends a message over limits.max_request_body with 1009, writing nothing to the console', async () => {
    const setup = await setupSubscriptions({ config: { limits: { max_request_body: '1KB' } } });
    const printed = [vi.spyOn(console, 'error'), vi.spyOn(console, 'warn'), vi.spyOn(console, 'log')];
    const client = await rawClient(setup, 'graphql-transport-ws');
    client.send({ type: 'subscribe', id: 'big', payload: { query: `{ __typename ${' '.repeat(2000)}}` } });
    await eventually(() => client.closed !== undefined);
    expect(client.closed).toBe(1009);
    await sleep(100);
    for (const spy of printed) expect(spy).not.toHaveBeenCalled();
  });

  it('answers variables nested 5000 levels deep with BAD_USER_INPUT for that operation; the connection stays open', async () => {
    const setup = await setupSubscriptions();
    const client = await rawClient(setup, 'graphql-transport-ws');
    const depth = 5000;
    const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    client.send(`{"type":"subscribe","id":"d","payload":{"query":"subscription($u: ID) { reviewAdded(upc: $u) { id } }","variables":{"u":${deep}}}}`);
    await eventually(() => client.count('error', 'd') > 0 || client.closed !== undefined);
    expect(client.closed).toBeUndefined();
    const error = client.received.find((message) => message.type === 'error' && message.id === 'd') as { payload: Array<{ extensions?: { code?: string } }> };
    expect(error.payload[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    client.send({ type: 'ping' });
    await eventually(() => client.received.some((message) => message.type === 'pong'));
  });
});
