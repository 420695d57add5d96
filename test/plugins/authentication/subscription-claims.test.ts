/**
 * `forward_claims` on a subscription's own connection to its subgraph: that
 * connection (WebSocket upgrade, SSE request) is opened without the fetch
 * stage, yet a subgraph serving per-user subscriptions needs the claims as
 * it gets them on every other request. Two users never share one subgraph
 * subscription, and a client cannot send the header itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { collect, eventually, setupSubscriptions, SUBSCRIPTION, wsClient } from '../../subscriptions/fixtures.js';
import { sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from './jwks-fixtures.js';

let key: SigningKey;
let jwks: JwksServer;

beforeAll(async () => {
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
});
afterAll(async () => {
  await jwks?.close();
});

const SSE = { protocol: 'sse', websocketSubprotocol: 'auto' } as const;

describe.each([
  { upstream: 'WebSocket', subscription: undefined },
  { upstream: 'SSE', subscription: (url: string) => ({ url, ...SSE }) },
])('claims on the subscription connection to the subgraph ($upstream)', ({ subscription }) => {
  it("carries each user's claims, never the client's own header, and keeps users on separate subgraph subscriptions", async () => {
    const setup = await setupSubscriptions({
      plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, forward_claims: { sub: 'x-user-id' } })],
      ...(subscription ? { subscription } : {}),
    });
    const ada = collect(wsClient(setup, { connectionParams: { Authorization: `Bearer ${await sign(key, { claims: { sub: 'ada' } })}`, headers: { 'x-user-id': 'root' } } }), {
      query: SUBSCRIPTION,
    });
    const bob = collect(wsClient(setup, { connectionParams: { Authorization: `Bearer ${await sign(key, { claims: { sub: 'bob' } })}` } }), { query: SUBSCRIPTION });
    // SSE from the client side too, with a forged header of the claim's name.
    const sse = await fetch(`${setup.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', authorization: `Bearer ${await sign(key, { claims: { sub: 'cy' } })}`, 'x-user-id': 'root' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(sse.status).toBe(200);
    await eventually(() => setup.reviews.requests.length >= 3 && setup.reviews.open() >= 3);
    const users = setup.reviews.requests.map((request) => request.headers['x-user-id']).sort();
    expect(users).toEqual(['ada', 'bob', 'cy']);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await ada.until(() => ada.events.length === 1);
    await bob.until(() => bob.events.length === 1);
    ada.dispose();
    bob.dispose();
    await sse.body?.cancel();
  });
});

describe('claim headers a header rule fills on the subscription connection', () => {
  it('are taken off when the token lacks the claim or there is no token, as on every other subgraph request', async () => {
    const setup = await setupSubscriptions({
      // An operator rule that would let a client pick the claim's header: renamed from a header the client sends.
      config: { headers: { all: { request: [{ op: 'propagate', named: 'x-forwarded-user', rename: 'x-user-id' }] } } },
      plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, forward_claims: { sub: 'x-user-id' } })],
    });
    const withoutSub = await sign(key, { claims: { sub: undefined, scope: 'read' } });
    const clients = [
      collect(wsClient(setup, { connectionParams: { Authorization: `Bearer ${withoutSub}`, headers: { 'x-forwarded-user': 'root' } } }), { query: SUBSCRIPTION }),
      collect(wsClient(setup, { connectionParams: { headers: { 'x-forwarded-user': 'root' } } }), { query: SUBSCRIPTION }),
    ];
    const sse = await fetch(`${setup.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'x-forwarded-user': 'root' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(sse.status).toBe(200);
    await eventually(() => setup.reviews.requests.length >= 3 && setup.reviews.open() >= 3);
    expect(setup.reviews.requests.map((request) => request.headers['x-user-id'])).toEqual([undefined, undefined, undefined]);
    // The same rule on an entity fetch of an event: taken off there too.
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    for (const client of clients) await client.until(() => client.events.length === 1);
    expect(setup.products.calls.length).toBeGreaterThan(0);
    for (const call of setup.products.calls) expect(call.headers['x-user-id']).toBeUndefined();
    for (const client of clients) client.dispose();
    await sse.body?.cancel();
  });

  it('two claims sharing a header: the one the token holds is sent, on fetches and on the subscription connection', async () => {
    const setup = await setupSubscriptions({
      config: { headers: { all: { request: [{ op: 'set', name: 'x-user', value: 'root' }] } } },
      plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, forward_claims: { sub: 'x-user', uid: 'x-user' } })],
    });
    const token = await sign(key, { claims: { sub: 'ada' } });
    const query = await fetch(`${setup.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: '{ product(upc: "p1") { name } }' }),
    });
    expect(await query.json()).toEqual({ data: { product: { name: 'Table' } } });
    expect(setup.products.calls.map((call) => call.headers['x-user'])).toEqual(['ada']);
    const client = collect(wsClient(setup, { connectionParams: { Authorization: `Bearer ${token}` } }), { query: SUBSCRIPTION });
    await eventually(() => setup.reviews.requests.length >= 1);
    expect(setup.reviews.requests.map((request) => request.headers['x-user'])).toEqual(['ada']);
    client.dispose();
  });
});
