/**
 * A subgraph serving subscriptions over WebSocket cannot make the router hold
 * a message larger than its `max_response_body` (ws's own default would be
 * 100 MiB): the message is refused as soon as its length is known, the
 * client gets SUBSCRIPTION_UPSTREAM_FAILED naming the limit, and the
 * subgraph's connection is closed. Messages under the limit still flow.
 * Both subprotocols, since each is spoken on the socket the router dialled.
 */
import { describe, expect, it } from 'vitest';
import { collect, eventually, type ReviewsSubgraph, setupSubscriptions, startReviews, SUBSCRIPTION, wsClient } from './fixtures.js';
import { startLegacyReviews } from './legacy-subgraph.js';

const LIMIT = 64 * 1024;

type ClientError = Array<{ message: string; extensions: Record<string, unknown> }>;

const cases: Array<{ subprotocol: 'graphql-transport-ws' | 'graphql-ws'; start: () => Promise<ReviewsSubgraph> }> = [
  { subprotocol: 'graphql-transport-ws', start: startReviews },
  { subprotocol: 'graphql-ws', start: () => startLegacyReviews() },
];

describe('a WebSocket subgraph sending a message over max_response_body', () => {
  for (const { subprotocol, start } of cases) {
    it(`ends the subscription with SUBSCRIPTION_UPSTREAM_FAILED and closes the subgraph's connection (${subprotocol})`, async () => {
      const router = await setupSubscriptions({
        reviews: start,
        subscription: (url) => ({ url, protocol: 'ws', websocketSubprotocol: subprotocol }),
        config: { traffic_shaping: { subgraphs: { reviews: { max_response_body: '64KiB' } } } },
      });
      const sub = collect(wsClient(router), { query: SUBSCRIPTION });
      await eventually(() => router.reviews.open() === 1);
      router.reviews.push({ id: 'r1', body: 'small', upc: 'p1' });
      await sub.until(() => sub.events.length === 1);
      router.reviews.push({ id: 'r2', body: 'x'.repeat(2 * LIMIT), upc: 'p1' });
      await sub.until(() => sub.error !== undefined);
      expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r1', body: 'small', product: { upc: 'p1', name: 'Table', price: 100 } } } }]);
      const [error] = sub.error as ClientError;
      expect(error!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
      expect(error!.message).toBe(`Subscription to subgraph "reviews" failed: the subgraph sent a message larger than ${LIMIT} bytes (its traffic_shaping max_response_body)`);
      // The router closed its connection: the subgraph's subscription ended.
      await eventually(() => router.reviews.open() === 0);
    });
  }
});
