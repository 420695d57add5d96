/**
 * Deduplication: clients asking the subgraph for the same operation,
 * variables, forwarded headers and connection_init payload share one
 * subgraph subscription, counted on the real reviews subgraph.
 */
import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client } from 'graphql-ws';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, type SubscriptionSetup } from './fixtures.js';

const TABLE = { upc: 'p1', name: 'Table', price: 100 };

interface Subscriber {
  readonly events: Array<{ data?: { reviewAdded?: { id: string } }; errors?: unknown[] }>;
  readonly ids: () => string[];
  error: unknown;
  completed: boolean;
  dispose(): void;
}

function wsClient(setup: SubscriptionSetup, connectionParams?: Record<string, unknown>, headers: Record<string, string> = {}): Client {
  class HeaderedWebSocket extends WebSocket {
    constructor(address: string | URL, protocols?: string | string[]) {
      super(address, protocols, { headers });
    }
  }
  const client = createWsClient({ url: `${setup.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: HeaderedWebSocket, retryAttempts: 0, connectionParams });
  onCleanup(() => client.dispose());
  return client;
}

function subscribe(client: Client, query: string, variables?: Record<string, unknown>): Subscriber {
  const subscriber: Subscriber = {
    events: [],
    ids: () => subscriber.events.map((event) => event.data?.reviewAdded?.id ?? '?'),
    error: undefined,
    completed: false,
    dispose: () => undefined,
  };
  subscriber.dispose = client.subscribe(
    { query, variables },
    {
      next: (value) => void subscriber.events.push(value as Subscriber['events'][number]),
      error: (error) => void (subscriber.error = error),
      complete: () => void (subscriber.completed = true),
    },
  );
  return subscriber;
}

/**
 * Pushes warm-up events until every subscriber got one: then each has joined
 * the upstream (a client's subscribe is asynchronous, and a subscriber only
 * gets the events that arrive after it joined).
 */
async function untilJoined(setup: SubscriptionSetup, subscribers: readonly Subscriber[]): Promise<void> {
  let n = 0;
  const deadline = Date.now() + 5000;
  while (!subscribers.every((subscriber) => subscriber.ids().some((id) => id.startsWith('warm')))) {
    if (Date.now() > deadline) throw new Error('subscribers did not join in time');
    setup.reviews.push({ id: `warm${n++}`, body: 'warm-up', upc: 'p1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const wsUpstreams = (setup: SubscriptionSetup): number => setup.reviews.requests.filter((request) => request.protocol === 'ws').length;

describe('deduplication of subgraph subscriptions', () => {
  it('shares one subgraph subscription between clients of the same operation; a late joiner gets the following events only', async () => {
    const setup = await setupSubscriptions();
    const first = [wsClient(setup), wsClient(setup), wsClient(setup)].map((client) => subscribe(client, SUBSCRIPTION));
    await eventually(() => setup.reviews.open() === 1);
    await untilJoined(setup, first);
    expect(setup.reviews.open()).toBe(1);
    expect(wsUpstreams(setup)).toBe(1);

    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => first.every((subscriber) => subscriber.ids().includes('r1')));
    // Each client's event went through the entity fetch to products.
    for (const subscriber of first)
      expect(subscriber.events.find((event) => event.data?.reviewAdded?.id === 'r1')).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });

    const late = subscribe(wsClient(setup), SUBSCRIPTION);
    await untilJoined(setup, [late]);
    setup.reviews.push({ id: 'r2', body: 'Wobbly', upc: 'p1' });
    await eventually(() => [...first, late].every((subscriber) => subscriber.ids().includes('r2')));
    expect(late.ids()).not.toContain('r1');
    expect(late.ids().at(-1)).toBe('r2');
    expect(setup.reviews.open()).toBe(1);
    expect(wsUpstreams(setup)).toBe(1);
  });

  it('keeps the subgraph subscription while one client remains, and closes it when the last one leaves', async () => {
    const setup = await setupSubscriptions();
    const subscribers = [wsClient(setup), wsClient(setup)].map((client) => subscribe(client, SUBSCRIPTION));
    await untilJoined(setup, subscribers);
    subscribers[0]!.dispose();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(setup.reviews.open()).toBe(1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => subscribers[1]!.ids().includes('r1'));
    expect(subscribers[0]!.ids()).not.toContain('r1');
    subscribers[1]!.dispose();
    await eventually(() => setup.reviews.open() === 0);
    // A new client afterwards opens a new subgraph subscription.
    const again = subscribe(wsClient(setup), SUBSCRIPTION);
    await untilJoined(setup, [again]);
    expect(wsUpstreams(setup)).toBe(2);
  });

  it('shares across client protocols: a WebSocket and an SSE client of the same operation', async () => {
    const setup = await setupSubscriptions();
    const ws = subscribe(wsClient(setup), SUBSCRIPTION);
    const sse = createSseClient({ url: `${setup.url}/graphql`, retryAttempts: 0 });
    onCleanup(() => sse.dispose());
    const sseSubscriber = subscribe(sse as unknown as Client, SUBSCRIPTION);
    await untilJoined(setup, [ws, sseSubscriber]);
    expect(setup.reviews.open()).toBe(1);
  });

  it('opens separate subgraph subscriptions for other variables, other forwarded headers and other connection_init payloads', async () => {
    const setup = await setupSubscriptions({ config: { headers: { all: { request: [{ op: 'propagate', named: 'x-tenant' }] } } } });
    const query = 'subscription ($upc: ID) { reviewAdded(upc: $upc) { id body product { upc name price } } }';
    const subscribers = [
      subscribe(wsClient(setup), query, { upc: 'p1' }),
      subscribe(wsClient(setup), query, { upc: 'p1' }), // the same as the first
      subscribe(wsClient(setup), query, { upc: 'p2' }), // other variables
      subscribe(wsClient(setup, undefined, { 'x-tenant': 'a' }), query, { upc: 'p1' }), // a forwarded header
      subscribe(wsClient(setup, undefined, { 'x-tenant': 'b' }), query, { upc: 'p1' }), // another value
      subscribe(wsClient(setup, undefined, { 'x-other': 'b' }), query, { upc: 'p1' }), // a header the rules do not forward: shared with the first
      subscribe(wsClient(setup, { token: 'one' }), query, { upc: 'p1' }), // a connection_init payload
      subscribe(wsClient(setup, { token: 'two' }), query, { upc: 'p1' }), // another payload
    ];
    await eventually(() => setup.reviews.open() === 6);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(setup.reviews.open()).toBe(6);
    const forwarded = setup.reviews.requests.filter((request) => request.protocol === 'ws').map((request) => request.headers['x-tenant'] ?? null);
    expect(forwarded.sort()).toEqual(['a', 'b', null, null, null, null]);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push({ id: 'r2', body: 'Comfy', upc: 'p2' });
    await eventually(() => subscribers.every((subscriber) => subscriber.events.length >= 1));
    expect(subscribers.map((subscriber) => subscriber.ids()[0])).toEqual(['r1', 'r1', 'r2', 'r1', 'r1', 'r1', 'r1', 'r1']);
  });

  it('ends every client of a shared subscription when the subgraph fails, and opens a fresh one afterwards', async () => {
    const setup = await setupSubscriptions();
    const subscribers = [wsClient(setup), wsClient(setup)].map((client) => subscribe(client, SUBSCRIPTION));
    await untilJoined(setup, subscribers);
    setup.reviews.push({ fail: 'database down' });
    await eventually(() => subscribers.every((subscriber) => subscriber.error !== undefined));
    for (const subscriber of subscribers) {
      expect((subscriber.error as Array<{ extensions: { code: string } }>)[0]!.extensions.code).toBe('SUBSCRIPTION_UPSTREAM_FAILED');
    }
    const after = subscribe(wsClient(setup), SUBSCRIPTION);
    await untilJoined(setup, [after]);
    expect(setup.reviews.open()).toBe(1);
  });
});
