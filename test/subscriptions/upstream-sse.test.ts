/**
 * Subgraph subscriptions over Server-Sent Events, chosen per subgraph by its
 * compose-file `subscription: {protocol: sse | sse_post}`: the reviews
 * subgraph is served by graphql-yoga; clients are graphql-ws and graphql-sse.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient, type Client } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, type SubscriptionSetup } from './fixtures.js';

const TABLE = { upc: 'p1', name: 'Table', price: 100 };

function wsClient(setup: SubscriptionSetup, connectionParams?: Record<string, unknown>): Client {
  const client = createClient({ url: `${setup.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, connectionParams });
  onCleanup(() => client.dispose());
  return client;
}

function collect(client: Pick<Client, 'subscribe'>, query: string) {
  const state = { events: [] as unknown[], error: undefined as unknown, completed: false };
  const dispose = client.subscribe(
    { query },
    {
      next: (value) => void state.events.push(value),
      error: (error) => void (state.error = error),
      complete: () => void (state.completed = true),
    },
  );
  return Object.assign(state, { dispose });
}

describe('subgraph subscriptions over SSE', () => {
  it('subscribes with GET for protocol sse, with the header rules applied, and federates each event', async () => {
    const setup = await setupSubscriptions({
      subscription: (url) => ({ url, protocol: 'sse', websocketSubprotocol: 'auto' }),
      config: { headers: { all: { request: [{ op: 'propagate', named: 'authorization' }] } } },
    });
    const sub = collect(wsClient(setup, { headers: { Authorization: 'Bearer t0k3n' } }), SUBSCRIPTION);
    await eventually(() => setup.reviews.open() === 1);
    expect(setup.reviews.requests).toHaveLength(1);
    expect(setup.reviews.requests[0]).toMatchObject({ method: 'GET', protocol: 'sse', headers: { authorization: 'Bearer t0k3n', accept: 'text/event-stream' } });
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push('end');
    await eventually(() => sub.completed);
    expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } }]);
    expect(sub.error).toBeUndefined();
  });

  it('subscribes with POST for protocol sse_post (also from an SSE client), and dials http for a ws:// URL', async () => {
    const setup = await setupSubscriptions({ subscription: (url) => ({ url: url.replace(/^http/, 'ws'), protocol: 'sse_post', websocketSubprotocol: 'auto' }) });
    const client = createSseClient({ url: `${setup.url}/graphql`, retryAttempts: 0 });
    onCleanup(() => client.dispose());
    const sub = collect(client, 'subscription { reviewAdded(upc: "p1") { id product { name } } }');
    await eventually(() => setup.reviews.open() === 1);
    expect(setup.reviews.requests.map((request) => [request.method, request.protocol])).toEqual([['POST', 'sse']]);
    setup.reviews.push({ id: 'r0', body: 'Other', upc: 'p2' });
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => sub.events.length === 1);
    expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r1', product: { name: 'Table' } } } }]);
  });

  it('closes the subgraph request when the client goes away', async () => {
    const setup = await setupSubscriptions({ subscription: (url) => ({ url, protocol: 'sse', websocketSubprotocol: 'auto' }) });
    const sub = collect(wsClient(setup), SUBSCRIPTION);
    await eventually(() => setup.reviews.open() === 1);
    sub.dispose();
    await eventually(() => setup.reviews.open() === 0);
  });

  it('passes on the errors of a subgraph failing mid-stream, then completes', async () => {
    const setup = await setupSubscriptions({ subscription: (url) => ({ url, protocol: 'sse_post', websocketSubprotocol: 'auto' }) });
    const sub = collect(wsClient(setup), SUBSCRIPTION);
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ fail: 'the review feed broke' });
    await eventually(() => sub.completed || sub.error !== undefined);
    // graphql-yoga sends the failure as a last result with errors, then completes: the client gets both.
    expect(sub.completed).toBe(true);
    const [event] = sub.events as Array<{ data: unknown; errors: Array<{ message: string }> }>;
    expect(event!.data).toBeNull();
    expect(event!.errors[0]!.message).toBe('the review feed broke');
  });

  it('fails the client subscription with SUBSCRIPTION_UPSTREAM_FAILED when the subgraph refuses or cannot be reached', async () => {
    const setup = await setupSubscriptions({ subscription: (url) => ({ url: url.replace('/graphql', '/nowhere'), protocol: 'sse', websocketSubprotocol: 'auto' }) });
    const refused = collect(wsClient(setup), SUBSCRIPTION);
    await eventually(() => refused.error !== undefined);
    const [error] = refused.error as Array<{ message: string; extensions: Record<string, unknown> }>;
    expect(error!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
    expect(error!.message).toContain('404');

    const gone = await setupSubscriptions({ subscription: () => ({ url: 'http://127.0.0.1:9/graphql', protocol: 'sse_post', websocketSubprotocol: 'auto' }) });
    const unreachable = collect(wsClient(gone), SUBSCRIPTION);
    await eventually(() => unreachable.error !== undefined);
    expect((unreachable.error as Array<{ extensions: Record<string, unknown> }>)[0]!.extensions.code).toBe('SUBSCRIPTION_UPSTREAM_FAILED');
  });
});
