/**
 * Subgraph subscriptions over the legacy `graphql-ws` subprotocol: the
 * reviews subgraph is served by Apollo's subscriptions-transport-ws, the
 * router subscribes with `websocket_subprotocol: graphql-ws` or `auto`;
 * clients are graphql-ws clients of the router.
 */
import { describe, expect, it } from 'vitest';
import type { SubscriptionSettings } from '../../src/kernel/graph/execution-config.js';
import { collect, eventually, setupSubscriptions, SUBSCRIPTION, wsClient } from './fixtures.js';
import { type LegacyOptions, type LegacyReviewsSubgraph, startLegacyReviews } from './legacy-subgraph.js';

const TABLE = { upc: 'p1', name: 'Table', price: 100 };

async function setupLegacy(subprotocol: SubscriptionSettings['websocketSubprotocol'], options: LegacyOptions = {}) {
  let legacy: LegacyReviewsSubgraph | undefined;
  const setup = await setupSubscriptions({
    reviews: async () => (legacy = await startLegacyReviews(options)),
    subscription: (url) => ({ url, protocol: 'ws', websocketSubprotocol: subprotocol }),
  });
  return { ...setup, legacy: legacy! };
}

describe('subgraph subscriptions over the legacy graphql-ws subprotocol', () => {
  it('streams events whose entity fields come from another subgraph, and completes with the subgraph', async () => {
    const { legacy, ...setup } = await setupLegacy('graphql-ws');
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => legacy.open() === 1);
    expect(legacy.connections).toHaveLength(1);
    expect(legacy.connections[0]!.subprotocol).toBe('graphql-ws');
    expect(legacy.requests[0]!.headers['sec-websocket-protocol']).toBe('graphql-ws');
    legacy.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    legacy.push({ id: 'r2', body: 'Wobbly', upc: 'p2' });
    legacy.push('end');
    await eventually(() => sub.completed);
    expect(sub.events).toEqual([
      { data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } },
      { data: { reviewAdded: { id: 'r2', body: 'Wobbly', product: { upc: 'p2', name: 'Chair', price: 50 } } } },
    ]);
    expect(sub.error).toBeUndefined();
    const messages = legacy.connections[0]!.messages;
    expect(messages[0]).toEqual({ type: 'connection_init' });
    expect(messages[1]).toMatchObject({ type: 'start', id: '1', payload: { query: expect.stringContaining('reviewAdded') } });
    await eventually(() => legacy.openConnections() === 0);
  });

  it('forwards the client connection_init payload to the subgraph', async () => {
    const { legacy, ...setup } = await setupLegacy('graphql-ws');
    collect(wsClient(setup, { connectionParams: { token: 'abc', tenant: 't1' } }), { query: SUBSCRIPTION });
    await eventually(() => legacy.open() === 1);
    expect(legacy.connections[0]!.messages[0]).toEqual({ type: 'connection_init', payload: { token: 'abc', tenant: 't1' } });
  });

  it('fails the client subscription with SUBSCRIPTION_UPSTREAM_FAILED when the subgraph errors mid-stream', async () => {
    const { legacy, ...setup } = await setupLegacy('graphql-ws');
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => legacy.open() === 1);
    legacy.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    legacy.push({ fail: 'review feed broke' });
    await eventually(() => sub.error !== undefined);
    expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } }]);
    const [error] = sub.error as Array<{ message: string; extensions: { code: string; serviceName: string; errors: Array<{ message: string }> } }>;
    expect(error!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
    expect(error!.extensions.errors[0]!.message).toBe('review feed broke');
    await eventually(() => legacy.openConnections() === 0);
  });

  it('fails the client subscription when the subgraph refuses the connection (connection_error)', async () => {
    const { legacy, ...setup } = await setupLegacy('graphql-ws', { refuseConnections: true });
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => sub.error !== undefined);
    const [error] = sub.error as Array<{ message: string; extensions: { code: string } }>;
    expect(error!.extensions.code).toBe('SUBSCRIPTION_UPSTREAM_FAILED');
    expect(error!.message).toContain('Prohibited connection');
    expect(legacy.open()).toBe(0);
  });

  it('sends stop and closes the subgraph connection when the client leaves', async () => {
    const { legacy, ...setup } = await setupLegacy('graphql-ws');
    const client = wsClient(setup);
    const sub = collect(client, { query: SUBSCRIPTION });
    await eventually(() => legacy.open() === 1);
    sub.dispose();
    await eventually(() => legacy.open() === 0 && legacy.openConnections() === 0);
    const types = legacy.connections[0]!.messages.map((message) => message.type);
    expect(types).toEqual(['connection_init', 'start', 'stop', 'connection_terminate']);
  });

  it('shares one subgraph connection between clients of the same operation; the last one leaving stops it', async () => {
    const { legacy, ...setup } = await setupLegacy('graphql-ws');
    const first = collect(wsClient(setup), { query: SUBSCRIPTION });
    const second = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => legacy.open() >= 1);
    legacy.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => first.events.length === 1 && second.events.length === 1);
    expect(legacy.connections).toHaveLength(1);
    expect(second.events[0]).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });
    first.dispose();
    legacy.push({ id: 'r2', body: 'Wobbly', upc: 'p2' });
    await eventually(() => second.events.length === 2);
    expect(legacy.open()).toBe(1);
    second.dispose();
    await eventually(() => legacy.open() === 0 && legacy.openConnections() === 0);
    expect(legacy.connections[0]!.messages.map((message) => message.type)).toContain('stop');
  });

  it('speaks the legacy subprotocol under auto when the subgraph accepts it', async () => {
    const { legacy, ...setup } = await setupLegacy('auto');
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => legacy.open() === 1);
    expect(legacy.requests[0]!.headers['sec-websocket-protocol']).toBe('graphql-ws,graphql-transport-ws');
    expect(legacy.connections[0]!.subprotocol).toBe('graphql-ws');
    legacy.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => sub.events.length === 1);
    expect(sub.events[0]).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });
  });

  it('falls back to the legacy subprotocol under auto when the subgraph names no subprotocol', async () => {
    const { legacy, ...setup } = await setupLegacy('auto', { noSubprotocol: true });
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => legacy.open() === 1);
    // The first upgrade offered both and got no subprotocol back; the second offered none.
    expect(legacy.requests.map((request) => request.headers['sec-websocket-protocol'])).toEqual(['graphql-ws,graphql-transport-ws', undefined]);
    legacy.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => sub.events.length === 1);
    expect(sub.events[0]).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });
  });

  it('fails the subscription when a subgraph configured for graphql-ws does not accept it', async () => {
    // The default fixture subgraph is a graphql-ws (graphql-transport-ws only) server.
    const setup = await setupSubscriptions({ subscription: (url) => ({ url, protocol: 'ws', websocketSubprotocol: 'graphql-ws' }) });
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => sub.error !== undefined);
    const [error] = sub.error as Array<{ message: string; extensions: { code: string } }>;
    expect(error!.extensions.code).toBe('SUBSCRIPTION_UPSTREAM_FAILED');
    expect(setup.reviews.open()).toBe(0);
  });
});
