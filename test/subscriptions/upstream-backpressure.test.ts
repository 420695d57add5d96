/**
 * A subgraph that sends events faster than the router delivers them (each
 * event needs a products entity fetch, held up here): the router stops
 * reading the subgraph once a client's queue holds
 * `subscriptions.max_queued_bytes`, so the data waits in the subgraph's own
 * send buffer (TCP backpressure) instead of the router's memory, and the
 * client still receives every event, in order, once the router catches up.
 */
import { createServer, type ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { SubscriptionSettings } from '../../src/kernel/graph/execution-config.js';
import type { SwitchyardPlugin } from '../../src/kernel/pipeline/plugin.js';
import { closeUnused } from '../../src/kernel/subscriptions/upstream-ws.js';
import { listenOnLoopback, type LoopbackServer, startWebSocketServer } from '../support/loopback-server.js';
import { collect, eventually, onCleanup, reviewsAt, type ReviewsSubgraph, setupSubscriptions, SUBSCRIPTION, wsClient } from './fixtures.js';

/** 400 events of 50 KB (20 MB): several times what loopback socket buffers hold. */
const EVENTS = 400;
const BODY = 'x'.repeat(50_000);
const TOTAL_BYTES = EVENTS * BODY.length;

const reviewAdded = (i: number) => ({ data: { reviewAdded: { id: String(i), body: BODY, product: { upc: 'p1' } } } });

/** A subgraph that sends every event at once when subscribed; `unsent()` is what still waits in its send buffer. */
interface FloodingSubgraph extends ReviewsSubgraph {
  unsent(): number | undefined;
}

/** The legacy `graphql-ws` subprotocol, spoken by hand so that the flood is written in one go. */
async function floodingWebSocketSubgraph(): Promise<FloodingSubgraph> {
  const ws = await startWebSocketServer();
  let flooded: WebSocket | undefined;
  ws.wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as { type: string; id?: string };
      if (message.type === 'connection_init') socket.send(JSON.stringify({ type: 'connection_ack' }));
      if (message.type !== 'start') return;
      flooded = socket;
      for (let i = 0; i < EVENTS; i++) socket.send(JSON.stringify({ type: 'data', id: message.id, payload: reviewAdded(i) }));
    });
  });
  return floodingSubgraph(ws, () => flooded?.bufferedAmount);
}

/** GraphQL over SSE: the events written as fast as the router's connection takes them (`unsent` counts those not yet handed to it). */
async function floodingSseSubgraph(): Promise<FloodingSubgraph> {
  let flooded: ServerResponse | undefined;
  let written = 0;
  const http = await listenOnLoopback(
    createServer((_req, res) => {
      flooded = res;
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const writeMore = (): void => {
        while (written < EVENTS) {
          const taken = res.write(`event: next\ndata: ${JSON.stringify(reviewAdded(written++))}\n\n`);
          if (!taken) {
            res.once('drain', writeMore);
            return;
          }
        }
      };
      writeMore();
    }),
  );
  return floodingSubgraph(
    http,
    () => (flooded ? (EVENTS - written) * BODY.length + (flooded.socket?.writableLength ?? 0) : undefined),
    () => flooded?.destroy(),
  );
}

/** `listening` as the reviews subgraph; `stop` runs before it closes. */
function floodingSubgraph(listening: LoopbackServer, unsent: () => number | undefined, stop = (): void => undefined): FloodingSubgraph {
  return {
    ...reviewsAt(`http://127.0.0.1:${listening.port}/graphql`),
    requests: [],
    push: () => undefined,
    open: () => 0,
    unsent,
    async close() {
      stop();
      await listening.close();
    },
  };
}

/** Holds every products call until `release()`: the router cannot deliver events meanwhile. */
function heldProducts(): { plugin: SwitchyardPlugin; release: () => void } {
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const plugin: SwitchyardPlugin = {
    name: 'held-products',
    setup: () => ({
      hooks: {
        onFetch: async (event) => {
          if (event.input.subgraph === 'products') await released;
        },
      },
    }),
  };
  return { plugin, release };
}

/** Polls `read` until it returns the same value for 300 ms (the transfer settled). */
async function settled(read: () => number): Promise<number> {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const value = read();
    if (value !== last) {
      last = value;
      since = Date.now();
    } else if (Date.now() - since >= 300) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a subgraph sending faster than the router delivers', () => {
  it.each([
    {
      transport: 'WebSocket (legacy graphql-ws)',
      start: floodingWebSocketSubgraph,
      settings: (url: string): SubscriptionSettings => ({ url, protocol: 'ws', websocketSubprotocol: 'graphql-ws' }),
    },
    { transport: 'SSE', start: floodingSseSubgraph, settings: (url: string): SubscriptionSettings => ({ url, protocol: 'sse', websocketSubprotocol: 'auto' }) },
  ])('over $transport is held back in its own send buffer, and the client still gets every event in order', async ({ start, settings }) => {
    let subgraph: FloodingSubgraph | undefined;
    const held = heldProducts();
    const setup = await setupSubscriptions({
      reviews: async () => (subgraph = await start()),
      subscription: settings,
      plugins: [held.plugin],
      config: { subscriptions: { max_queued_bytes: '64KiB' } },
    });
    const sub = collect(wsClient(setup), { query: SUBSCRIPTION });
    await eventually(() => subgraph!.unsent() !== undefined);
    // Without backpressure the router reads all 20 MB into its own memory and the subgraph's buffer empties.
    const unsent = await settled(() => subgraph!.unsent() ?? 0);
    expect(unsent).toBeGreaterThan(TOTAL_BYTES / 2);
    expect(sub.events).toHaveLength(0);
    held.release();
    await eventually(() => sub.events.length === EVENTS, 30_000);
    const ids = sub.events.map((event) => (event as { data: { reviewAdded: { id: string } } }).data.reviewAdded.id);
    expect(ids).toEqual(Array.from({ length: EVENTS }, (_, i) => String(i)));
    expect(sub.error).toBeUndefined();
    expect(subgraph!.unsent()).toBe(0);
  });
});

describe('closeUnused (the client left while the subgraph was dialled)', () => {
  it('survives an invalid frame the subgraph sends during the close', async () => {
    const ws = await startWebSocketServer();
    onCleanup(() => ws.close());
    // The subgraph answers the upgrade; when the router's close frame arrives it sends a frame with reserved bits set (invalid).
    ws.wss.on('connection', (_upgraded, req) => req.socket.prependOnceListener('data', () => req.socket.write(Buffer.from([0xf1, 0x00]))));
    const socket = new WebSocket(`ws://127.0.0.1:${ws.port}/graphql`);
    await new Promise((resolve) => socket.once('open', resolve));
    const errors: Error[] = [];
    const closed = new Promise((resolve) => socket.once('close', resolve));
    closeUnused(socket, (error) => errors.push(error));
    await closed;
    expect(errors.map((error) => error.message)).toEqual([expect.stringMatching(/RSV2 and RSV3 must be clear/)]);
  });
});
