/**
 * The legacy `graphql-ws` subprotocol (subscriptions-transport-ws message
 * types) spoken by a raw WebSocket client, and the `Origin` check on
 * WebSocket upgrades (the `cors.allow_origins` policy).
 */
import { createClient } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useAuthentication } from '../../plugins/authentication/index.js';
import { useAuthorization } from '../../plugins/authorization/index.js';
import { bearer, sign, signingKey, startJwksServer } from '../plugins/authentication/jwks-fixtures.js';
import { eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, SUBSCRIPTION_P1, type SubscriptionSetup } from './fixtures.js';

interface Message {
  type: string;
  id?: string;
  payload?: unknown;
}

/** A raw client on the legacy subprotocol: what it received, and a way to wait for it. */
async function legacyClient(setup: SubscriptionSetup, headers: Record<string, string> = {}) {
  const socket = new WebSocket(`${setup.url.replace(/^http/, 'ws')}/graphql`, 'graphql-ws', { headers });
  onCleanup(() => socket.terminate());
  const received: Message[] = [];
  let closed: number | undefined;
  socket.on('message', (data) => received.push(JSON.parse(String(data)) as Message));
  socket.on('close', (code) => (closed = code));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  expect(socket.protocol).toBe('graphql-ws');
  return {
    socket,
    received,
    get closed() {
      return closed;
    },
    send: (message: unknown) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    /** Messages other than keep-alives. */
    messages: () => received.filter((message) => message.type !== 'ka'),
  };
}

const TABLE = { upc: 'p1', name: 'Table', price: 100 };

describe('legacy graphql-ws subprotocol', () => {
  it('acknowledges connection_init with connection_ack and a keep-alive, and streams federated events as data', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    client.send({ type: 'connection_init', payload: {} });
    await eventually(() => client.received.length >= 2);
    expect(client.received.slice(0, 2)).toEqual([{ type: 'connection_ack' }, { type: 'ka' }]);
    client.send({ type: 'start', id: '1', payload: { query: SUBSCRIPTION } });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push('end');
    await eventually(() => client.messages().some((message) => message.type === 'complete'));
    expect(client.messages().slice(1)).toEqual([
      { type: 'data', id: '1', payload: { data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } } },
      { type: 'complete', id: '1' },
    ]);
  });

  it('stops the subgraph subscription on stop and on disconnect', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    client.send({ type: 'connection_init' });
    client.send({ type: 'start', id: 'a', payload: { query: SUBSCRIPTION } });
    client.send({ type: 'start', id: 'b', payload: { query: SUBSCRIPTION_P1 } });
    await eventually(() => setup.reviews.open() === 2);
    client.send({ type: 'stop', id: 'a' });
    await eventually(() => setup.reviews.open() === 1);
    await eventually(() => client.messages().some((message) => message.type === 'complete' && message.id === 'a'));
    client.socket.close();
    await eventually(() => setup.reviews.open() === 0);
  });

  it('answers queries once, and refused operations as subscriptions-transport-ws does: a result of errors, then complete', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    client.send({ type: 'connection_init' });
    client.send({ type: 'start', id: 'q', payload: { query: '{ product(upc: "p1") { name } }' } });
    client.send({ type: 'start', id: 'v', payload: { query: 'subscription { reviewAdded { nope } }' } });
    await eventually(() => client.messages().filter((message) => message.type !== 'connection_ack').length === 4);
    const byId = (id: string) => client.messages().filter((message) => message.id === id);
    expect(byId('q')).toEqual([
      { type: 'data', id: 'q', payload: { data: { product: { name: 'Table' } } } },
      { type: 'complete', id: 'q' },
    ]);
    expect(byId('v')).toMatchObject([
      { type: 'data', id: 'v', payload: { errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } },
      { type: 'complete', id: 'v' },
    ]);
    expect(setup.reviews.open()).toBe(0);
  });

  it('sends a subgraph failure as an error message', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    client.send({ type: 'connection_init' });
    client.send({ type: 'start', id: '1', payload: { query: SUBSCRIPTION } });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ fail: 'the review feed broke' });
    await eventually(() => client.messages().some((message) => message.type === 'error'));
    expect(client.messages().at(-1)).toMatchObject({ type: 'error', id: '1', payload: [{ extensions: { code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' } }] });
  });

  it('answers bad input with error messages and keeps the connection', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    client.send({ type: 'start', id: 'early', payload: { query: SUBSCRIPTION } });
    await eventually(() => client.received.length === 1);
    expect(client.received[0]).toMatchObject({ type: 'error', id: 'early', payload: [{ message: 'Send connection_init before starting operations.' }] });
    client.send({ type: 'connection_init' });
    client.send('{not json');
    client.send({ id: '1' });
    client.send({ type: 'subscribe', id: '2' });
    client.send({ type: 'start', payload: { query: SUBSCRIPTION } });
    client.send({ type: 'start', id: '3', payload: { query: 42 } });
    client.send({ type: 'start', id: '4', payload: { query: SUBSCRIPTION, variables: [1] } });
    client.send({ type: 'start', id: '5', payload: { query: SUBSCRIPTION } });
    client.send({ type: 'start', id: '5', payload: { query: SUBSCRIPTION } });
    await eventually(() => client.messages().filter((message) => message.type === 'error').length === 8);
    const errors = client.messages().filter((message) => message.type === 'error');
    expect(errors.map((message) => [message.id, (message.payload as Array<{ message: string }>)[0]!.message])).toEqual([
      ['early', 'Send connection_init before starting operations.'],
      [undefined, 'Message must be JSON-parseable.'],
      [undefined, 'Message must be a JSON object with a string "type".'],
      ['2', 'Unknown message type "subscribe".'],
      [undefined, 'A start message needs a string "id".'],
      ['3', 'The payload needs a string "query".'],
      ['4', '"variables" must be an object.'],
      ['5', 'An operation with id "5" is running already.'],
    ]);
    expect(client.closed).toBeUndefined();
    await eventually(() => setup.reviews.open() === 1);
  });

  it('authenticates with the token of the connection_init payload or the upgrade request', async () => {
    const key = await signingKey('k1', 'RS256');
    const jwks = await startJwksServer([key]);
    onCleanup(() => jwks.close());
    const setup = await setupSubscriptions({
      plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization({ require_authentication: true })],
    });
    const token = await sign(key);
    const anonymous = await legacyClient(setup);
    anonymous.send({ type: 'connection_init', payload: {} });
    anonymous.send({ type: 'start', id: '1', payload: { query: SUBSCRIPTION } });
    await eventually(() => anonymous.messages().some((message) => message.type === 'complete'));
    expect(anonymous.messages().slice(-2)).toMatchObject([
      { type: 'data', id: '1', payload: { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] } },
      { type: 'complete', id: '1' },
    ]);
    const byPayload = await legacyClient(setup);
    byPayload.send({ type: 'connection_init', payload: { Authorization: `Bearer ${token}` } });
    byPayload.send({ type: 'start', id: '1', payload: { query: SUBSCRIPTION } });
    const byHeader = await legacyClient(setup, bearer(token));
    byHeader.send({ type: 'connection_init' });
    byHeader.send({ type: 'start', id: '1', payload: { query: SUBSCRIPTION } });
    await eventually(() => setup.reviews.open() === 2);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => [byPayload, byHeader].every((client) => client.messages().some((message) => message.type === 'data')));
  });

  it('closes a connection that sends no connection_init with 4408', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    await eventually(() => client.closed !== undefined, 5000);
    expect(client.closed).toBe(4408);
  });

  it('sends complete for running operations when the router shuts down', async () => {
    const setup = await setupSubscriptions();
    const client = await legacyClient(setup);
    client.send({ type: 'connection_init' });
    client.send({ type: 'start', id: '1', payload: { query: SUBSCRIPTION } });
    await eventually(() => setup.reviews.open() === 1);
    await setup.router.close();
    await eventually(() => client.closed !== undefined);
    expect(client.messages().at(-1)).toEqual({ type: 'complete', id: '1' });
    expect(client.closed).toBe(1001);
    await eventually(() => setup.reviews.open() === 0);
  });
});

describe('Origin check on WebSocket upgrades', () => {
  /** The HTTP status an upgrade from `origin` gets, or `open`. */
  function upgrade(setup: SubscriptionSetup, protocol: string, origin?: string): Promise<string> {
    return new Promise((resolve) => {
      const socket = new WebSocket(`${setup.url.replace(/^http/, 'ws')}/graphql`, protocol, origin ? { origin } : {});
      onCleanup(() => socket.terminate());
      socket.on('unexpected-response', (_req, res) => resolve(`http ${res.statusCode}`));
      socket.on('error', (error) => resolve(`error ${error.message}`));
      socket.on('open', () => resolve('open'));
    });
  }

  it('refuses an origin CORS does not allow with 403, before the upgrade, on both subprotocols', async () => {
    const setup = await setupSubscriptions({ config: { cors: { enabled: true, allow_origins: ['https://app.example.com', 'https://*.example.org'] } } });
    expect(await upgrade(setup, 'graphql-transport-ws', 'https://evil.example.net')).toBe('http 403');
    expect(await upgrade(setup, 'graphql-ws', 'https://evil.example.net')).toBe('http 403');
    expect(await upgrade(setup, 'graphql-transport-ws', 'https://app.example.com')).toBe('open');
    expect(await upgrade(setup, 'graphql-transport-ws', 'https://a.b.example.org')).toBe('open');
    // No Origin: not a browser page, nothing for CORS to protect.
    expect(await upgrade(setup, 'graphql-transport-ws')).toBe('open');
    // A client on an allowed origin subscribes as usual.
    const client = createClient({
      url: `${setup.url.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: class extends WebSocket {
        constructor(address: string, protocols?: string | string[]) {
          super(address, protocols, { origin: 'https://app.example.com' });
        }
      },
      retryAttempts: 0,
    });
    onCleanup(() => client.dispose());
    const events: unknown[] = [];
    client.subscribe({ query: SUBSCRIPTION }, { next: (value) => void events.push(value), error: () => undefined, complete: () => undefined });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => events.length === 1);
  });

  it('accepts any origin when allow_origins is "*", and when CORS is off', async () => {
    const any = await setupSubscriptions({ config: { cors: { enabled: true, allow_origins: ['*'] } } });
    expect(await upgrade(any, 'graphql-transport-ws', 'https://anywhere.example')).toBe('open');
    const off = await setupSubscriptions();
    expect(await upgrade(off, 'graphql-transport-ws', 'https://anywhere.example')).toBe('open');
  });
});
