/**
 * A WebSocket subgraph that accepts the connection but never acknowledges
 * `connection_init` (a slow or refusing graphql-ws server): when the client
 * leaves, the router still closes its connection to the subgraph at once
 * (graphql-ws's client would wait for the ack forever), and a subgraph that
 * then closes the connection itself (as graphql-ws's server does when
 * `onConnect` refuses, 4403) does not end the router's process with an
 * unhandled rejection.
 */
import type { WebSocket } from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startWebSocketServer, type WebSocketTestServer } from '../support/loopback-server.js';
import { collect, eventually, REVIEWS_SDL, SUBSCRIPTION, SUBSCRIPTION_P1, setupSubscriptions, wsClient } from './fixtures.js';

let server: WebSocketTestServer;
/** The subgraph's sockets, open or closed, with the messages each received. */
const sockets: Array<{ socket: WebSocket; messages: string[] }> = [];
/** What the subgraph does with a socket whose router went quiet: nothing, or close it with 4403. */
let onInit: (socket: WebSocket) => void = () => undefined;

const rejections: unknown[] = [];
const onRejection = (reason: unknown): void => void rejections.push(reason);

beforeAll(async () => {
  server = await startWebSocketServer({ ws: { handleProtocols: (offered) => [...offered][0] ?? false } });
  server.wss.on('connection', (socket) => {
    const entry = { socket, messages: [] as string[] };
    sockets.push(entry);
    socket.on('message', (data) => {
      entry.messages.push(String(data));
      // connection_init is never answered.
      if (String(data).includes('connection_init')) onInit(socket);
    });
  });
  process.on('unhandledRejection', onRejection);
});

afterAll(async () => {
  process.off('unhandledRejection', onRejection);
  await server.close();
});

afterEach(() => {
  sockets.splice(0);
  rejections.splice(0);
  onInit = () => undefined;
});

const start = () =>
  setupSubscriptions({
    reviews: async () => ({ name: 'reviews', typeDefs: REVIEWS_SDL, url: server.url, open: () => 0, requests: [], push: () => undefined, close: async () => undefined }),
    subscription: (url) => ({ url, protocol: 'ws', websocketSubprotocol: 'graphql-transport-ws' }),
  });

const open = () => sockets.filter(({ socket }) => socket.readyState === socket.OPEN).length;

describe('a WebSocket subgraph that never sends connection_ack', () => {
  it('has its connection closed by the router as soon as the client leaves', async () => {
    const router = await start();
    // Two operations, so two subgraph connections (equal ones would share one).
    const subs = [SUBSCRIPTION, SUBSCRIPTION_P1].map((query) => collect(wsClient(router), { query }));
    await eventually(() => sockets.filter(({ messages }) => messages.some((m) => m.includes('connection_init'))).length === 2);
    expect(open()).toBe(2);
    for (const sub of subs) sub.dispose();
    await eventually(() => open() === 0, 3000);
    expect(rejections).toEqual([]);
  });

  it('closing the connection itself after the client left does not reject unhandled (the process would end)', async () => {
    const router = await start();
    // The subgraph refuses as graphql-ws's server does, a moment after the client has gone.
    onInit = (socket) => setTimeout(() => socket.close(4403, 'Forbidden'), 300);
    const sub = collect(wsClient(router), { query: SUBSCRIPTION });
    await eventually(() => sockets.length === 1 && sockets[0]!.messages.length > 0);
    sub.dispose();
    await eventually(() => open() === 0, 3000);
    // Unhandled rejections are reported on a later turn.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(rejections).toEqual([]);
    // The router still answers.
    const again = collect(wsClient(router), { query: SUBSCRIPTION });
    await eventually(() => sockets.length === 2 && sockets[1]!.messages.length > 0);
    again.dispose();
  });
});
