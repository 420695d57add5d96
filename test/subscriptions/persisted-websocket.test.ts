/**
 * Subscriptions sent by persisted-operation hash over both WebSocket
 * subprotocols: APQ (`extensions.persistedQuery`, with the
 * automatic-persisted-queries plugin) and `documentId` (the
 * persisted-operations plugin over a file store), from the real graphql-ws
 * client and from raw sockets (which may leave `query` out entirely).
 */
import { createHash } from 'node:crypto';
import type { SubscribePayload } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useAutomaticPersistedQueries } from '../../plugins/automatic-persisted-queries/index.js';
import { usePersistedOperations } from '../../plugins/persisted-operations/index.js';
import { openOperationsStore } from '../../src/operations/index.js';
import { graphqlInput, tempDir } from '../operations/support/operations.js';
import { collect, eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, type SubscriptionSetup, wsClient } from './fixtures.js';

const TABLE = { upc: 'p1', name: 'Table', price: 100 };
const HASH = createHash('sha256').update(SUBSCRIPTION).digest('hex');
const APQ = { persistedQuery: { version: 1, sha256Hash: HASH } };

type ErrorList = Array<{ message: string; extensions?: { code?: string } }>;

/** A raw socket on `subprotocol`, acknowledged, collecting what the router sends. */
async function rawClient(setup: SubscriptionSetup, subprotocol: 'graphql-transport-ws' | 'graphql-ws') {
  const socket = new WebSocket(`${setup.url.replace(/^http/, 'ws')}/graphql`, subprotocol);
  onCleanup(() => socket.terminate());
  const received: Array<{ type: string; id?: string; payload?: unknown }> = [];
  let closed: number | undefined;
  socket.on('message', (data) => received.push(JSON.parse(String(data)) as (typeof received)[number]));
  socket.on('close', (code) => (closed = code));
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'connection_init' }));
  await eventually(() => received.some((message) => message.type === 'connection_ack'));
  return {
    received,
    get closed() {
      return closed;
    },
    send: (message: unknown) => socket.send(JSON.stringify(message)),
    of: (id: string) => received.filter((message) => message.id === id),
  };
}

describe('subscriptions by APQ hash over WebSocket', () => {
  it('answers an unknown hash with PersistedQueryNotFound, keeps the connection, and runs the subscription by hash once registered (graphql-ws client)', async () => {
    const setup = await setupSubscriptions({ plugins: [useAutomaticPersistedQueries({ enabled: true })] });
    const client = wsClient(setup);
    const unknown = collect(client, { query: '', extensions: APQ });
    await eventually(() => unknown.error !== undefined);
    expect((unknown.error as ErrorList)[0]!.message).toBe('PersistedQueryNotFound');
    expect(setup.reviews.open()).toBe(0);
    // The same connection goes on: register the text with its hash, then subscribe by hash only.
    const register = collect(client, { query: SUBSCRIPTION, extensions: APQ });
    await eventually(() => setup.reviews.open() === 1);
    register.dispose();
    await eventually(() => setup.reviews.open() === 0);
    const byHash = collect(client, { query: '', extensions: APQ });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => byHash.events.length === 1);
    expect(byHash.events[0]).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });
  });

  it('accepts a subscribe message without any query on graphql-transport-ws, and a legacy start by hash', async () => {
    const setup = await setupSubscriptions({ plugins: [useAutomaticPersistedQueries({ enabled: true })] });
    const modern = await rawClient(setup, 'graphql-transport-ws');
    modern.send({ type: 'subscribe', id: 'a', payload: { extensions: APQ } });
    await eventually(() => modern.of('a').length > 0);
    expect(modern.of('a')[0]).toMatchObject({ type: 'error', payload: [{ message: 'PersistedQueryNotFound' }] });
    const legacy = await rawClient(setup, 'graphql-ws');
    legacy.send({ type: 'start', id: 'b', payload: { extensions: APQ } });
    await eventually(() => legacy.of('b').length > 0);
    // A result of errors, which Apollo Client's persisted-queries link reads as its cue to send the text.
    expect(legacy.of('b')[0]).toMatchObject({ type: 'data', payload: { errors: [{ message: 'PersistedQueryNotFound' }] } });
    legacy.send({ type: 'start', id: 'c', payload: { query: SUBSCRIPTION, extensions: APQ } });
    await eventually(() => setup.reviews.open() === 1);
    modern.send({ type: 'subscribe', id: 'd', payload: { extensions: APQ } });
    legacy.send({ type: 'start', id: 'e', payload: { extensions: APQ } });
    // All three share one subgraph subscription; wait until both by-hash ones joined it.
    await eventually(() => {
      setup.reviews.push({ id: 'warm', body: 'warm-up', upc: 'p1' });
      return modern.of('d').length > 0 && legacy.of('e').length > 0;
    });
    expect(modern.of('d')[0]).toMatchObject({ type: 'next', payload: { data: { reviewAdded: { id: 'warm', product: TABLE } } } });
    expect(legacy.of('e')[0]).toMatchObject({ type: 'data', payload: { data: { reviewAdded: { id: 'warm', product: TABLE } } } });
    expect(modern.closed).toBeUndefined();
    expect(legacy.closed).toBeUndefined();
  });

  it('refuses a start with neither query nor persisted operation, and a non-string documentId, with an error message', async () => {
    const setup = await setupSubscriptions();
    const modern = await rawClient(setup, 'graphql-transport-ws');
    modern.send({ type: 'subscribe', id: 'a', payload: {} });
    modern.send({ type: 'subscribe', id: 'b', payload: { documentId: 42 } });
    await eventually(() => modern.of('a').length > 0 && modern.of('b').length > 0);
    expect(modern.of('a')[0]).toMatchObject({ type: 'error' });
    expect(modern.of('b')[0]).toMatchObject({ type: 'error', payload: [{ message: '"documentId" must be a string.', extensions: { code: 'BAD_REQUEST' } }] });
    const legacy = await rawClient(setup, 'graphql-ws');
    legacy.send({ type: 'start', id: 'c', payload: {} });
    legacy.send({ type: 'start', id: 'd', payload: { documentId: 42 } });
    await eventually(() => legacy.of('c').length > 0 && legacy.of('d').length > 0);
    expect(legacy.of('c')[0]).toMatchObject({ type: 'error', payload: [{ extensions: { code: 'BAD_REQUEST' } }] });
    expect(legacy.of('d')[0]).toMatchObject({ type: 'error', payload: [{ message: '"documentId" must be a string.' }] });
    expect(modern.closed).toBeUndefined();
    expect(legacy.closed).toBeUndefined();
  });
});

describe('subscriptions by documentId over WebSocket', () => {
  it('runs a subscription registered with switchyard operations push by its id; an unknown id gets PersistedQueryNotFound', async () => {
    const store = await tempDir();
    onCleanup(() => store.remove());
    const operations = await openOperationsStore({ provider: 'file', path: store.path });
    const [pushed] = await operations.push('default', 'web', [graphqlInput(SUBSCRIPTION)]);
    await operations.close();
    const setup = await setupSubscriptions({ plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: store.path } })] });
    // Browsers cannot set headers on a WebSocket: the client name travels in the connection_init payload's headers.
    const client = wsClient(setup, { connectionParams: { headers: { 'graphql-client-name': 'web' } } });
    const unknown = collect(client, { query: '', documentId: 'f'.repeat(64) } as SubscribePayload);
    await eventually(() => unknown.error !== undefined);
    expect((unknown.error as ErrorList)[0]!.message).toBe('PersistedQueryNotFound');
    const byId = collect(client, { query: '', documentId: pushed!.id } as SubscribePayload);
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => byId.events.length === 1);
    expect(byId.events[0]).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });
  });

  it("takes the client name from the connection_init payload's top level too, as Cosmo's clients send it", async () => {
    const store = await tempDir();
    onCleanup(() => store.remove());
    const operations = await openOperationsStore({ provider: 'file', path: store.path });
    const [pushed] = await operations.push('default', 'wsapp', [graphqlInput(SUBSCRIPTION)]);
    await operations.close();
    const setup = await setupSubscriptions({ plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: store.path } })] });
    const byId = collect(wsClient(setup, { connectionParams: { 'graphql-client-name': 'wsapp' } }), { query: '', documentId: pushed!.id } as SubscribePayload);
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r2', body: 'Solid', upc: 'p1' });
    await eventually(() => byId.events.length === 1);
    expect(byId.events[0]).toEqual({ data: { reviewAdded: { id: 'r2', body: 'Solid', product: TABLE } } });
    // Another client's name finds nothing under that id.
    const other = collect(wsClient(setup, { connectionParams: { 'graphql-client-name': 'other' } }), { query: '', documentId: pushed!.id } as SubscribePayload);
    await eventually(() => other.error !== undefined);
    expect((other.error as ErrorList)[0]!.message).toBe('PersistedQueryNotFound');
  });
});
