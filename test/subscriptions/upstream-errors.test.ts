/**
 * The errors a subgraph sends when it fails a subscription (an SSE answer
 * that is not a stream; a WebSocket `error` message) reach the client only
 * as `subgraph_error_propagation` lets them, as a query's subgraph errors
 * do: off, the client sees none of them; on, each is filtered (bad paths and
 * locations dropped, only allowed extension fields kept).
 *
 * One subgraph server for the file answers every subscription with the same
 * hostile errors: over HTTP `400 application/json`, over WebSocket an
 * `error` message in graphql-transport-ws or the legacy graphql-ws.
 */
import type { RawData, WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SubscriptionSettings } from '../../src/kernel/graph/execution-config.js';
import { startWebSocketServer, type WebSocketTestServer } from '../support/loopback-server.js';
import { collect, REVIEWS_SDL, type ReviewsSubgraph, SUBSCRIPTION, setupSubscriptions, wsClient } from './fixtures.js';

const SECRET = 'db password=hunter2 at 10.0.0.5';

/** What the subgraph answers with: one error of malformed and private fields, one well-formed error. */
const HOSTILE_ERRORS = [
  {
    message: SECRET,
    path: [-1, 1.5, 'x'],
    locations: [{ line: -5, column: 'a' }],
    extensions: { code: 'DB_DOWN', stack: 'Error at /srv/app.js:10', secret: 'token' },
    internal: 'leak',
  },
  { message: 'review feed unavailable', path: ['reviewAdded'], locations: [{ line: 1, column: 16 }] },
];

let server: WebSocketTestServer;

beforeAll(async () => {
  server = await startWebSocketServer({
    ws: { handleProtocols: (offered) => [...offered][0] ?? false },
    onRequest: (req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errors: HOSTILE_ERRORS }));
    },
  });
  server.wss.on('connection', (socket: WebSocket) => socket.on('message', (data) => answerWebSocket(socket, data)));
});

afterAll(() => server.close());

/** Acknowledges the connection, then fails the operation with the hostile errors (legacy: one error, as subscriptions-transport-ws sends). */
function answerWebSocket(socket: WebSocket, data: RawData): void {
  const message = JSON.parse(String(data)) as { type: string; id?: string };
  const legacy = socket.protocol === 'graphql-ws';
  if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
  else if (message.type === 'subscribe' && !legacy) socket.send(JSON.stringify({ type: 'error', id: message.id, payload: HOSTILE_ERRORS }));
  else if (message.type === 'start' && legacy) socket.send(JSON.stringify({ type: 'error', id: message.id, payload: HOSTILE_ERRORS[0] }));
}

/** The file's server as the reviews subgraph; it outlives each test's router. */
function hostileReviews(): Promise<ReviewsSubgraph> {
  return Promise.resolve({ name: 'reviews', typeDefs: REVIEWS_SDL, url: server.url, open: () => 0, requests: [], push: () => undefined, close: async () => undefined });
}

type ClientError = Array<{ message: string; extensions: Record<string, unknown> }>;

/** The one error the client's subscription fails with. */
async function failureWith(subscription: Omit<SubscriptionSettings, 'url'>, propagation: Record<string, unknown>) {
  const router = await setupSubscriptions({
    reviews: hostileReviews,
    subscription: (url) => ({ url, ...subscription }),
    config: { subgraph_error_propagation: propagation },
  });
  const sub = collect(wsClient(router), { query: SUBSCRIPTION });
  await sub.until(() => sub.error !== undefined);
  const errors = sub.error as ClientError;
  expect(errors).toHaveLength(1);
  expect(errors[0]!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
  return errors[0]!;
}

const SSE = { protocol: 'sse', websocketSubprotocol: 'auto' } as const;

describe('an SSE subgraph answering 400 with GraphQL errors', () => {
  it('with subgraph_error_propagation disabled, the client gets none of them', async () => {
    const error = await failureWith(SSE, { enabled: false });
    expect(error.message).toMatch(/answered 400/);
    expect(error.extensions).not.toHaveProperty('errors');
    expect(JSON.stringify(error)).not.toContain('hunter2');
  });

  it('by default, passes on each one filtered as a query subgraph error is', async () => {
    const error = await failureWith(SSE, {});
    expect(error.extensions.errors).toEqual([
      { message: SECRET, extensions: { code: 'DB_DOWN' } },
      { message: 'review feed unavailable', path: ['reviewAdded'] },
    ]);
  });

  it('under wrapped mode, follows the section options: locations kept when asked, allowed fields, service name, default code', async () => {
    const error = await failureWith(
      { protocol: 'sse_post', websocketSubprotocol: 'auto' },
      { mode: 'wrapped', omit_locations: false, allowed_fields: ['internal'], attach_service_name: true, default_extension_code: 'DOWNSTREAM_SERVICE_ERROR' },
    );
    expect(error.extensions.errors).toEqual([
      { message: SECRET, extensions: { code: 'DB_DOWN', serviceName: 'reviews' }, internal: 'leak' },
      {
        message: 'review feed unavailable',
        path: ['reviewAdded'],
        locations: [{ line: 1, column: 16 }],
        extensions: { code: 'DOWNSTREAM_SERVICE_ERROR', serviceName: 'reviews' },
      },
    ]);
  });
});

// Enabled once upstream-ws.ts and upstream-legacy-ws.ts pass their errors through forwardedUpstreamErrors (upstream-errors.ts).
describe('a WebSocket subgraph failing the operation with an error message', () => {
  for (const websocketSubprotocol of ['graphql-transport-ws', 'graphql-ws'] as const) {
    it(`(${websocketSubprotocol}) with subgraph_error_propagation disabled, the client gets none of them, in the message or the extensions`, async () => {
      const error = await failureWith({ protocol: 'ws', websocketSubprotocol }, { enabled: false });
      expect(error.extensions).not.toHaveProperty('errors');
      expect(JSON.stringify(error)).not.toContain('hunter2');
    });

    it(`(${websocketSubprotocol}) by default, passes them on filtered`, async () => {
      const error = await failureWith({ protocol: 'ws', websocketSubprotocol }, {});
      expect((error.extensions.errors as unknown[])[0]).toEqual({ message: SECRET, extensions: { code: 'DB_DOWN' } });
    });

    it(`(${websocketSubprotocol}) under wrapped mode with omit_extensions, the client gets none of their text, as for a query`, async () => {
      const error = await failureWith({ protocol: 'ws', websocketSubprotocol }, { mode: 'wrapped', omit_extensions: true });
      expect(error.extensions).not.toHaveProperty('errors');
      expect(JSON.stringify(error)).not.toContain('hunter2');
      expect(JSON.stringify(error)).not.toContain('review feed unavailable');
    });
  }
});
