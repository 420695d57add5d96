/**
 * A subscription that selects a field under a progressive `@override`
 * (`percent(50)`) draws the label once, when it starts: a graph reload plans
 * it again with the same draw, so an unchanged graph moves no field to
 * another subgraph and ends no subscription.
 */
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';
import { useServer } from 'graphql-ws/use/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createLogger, createRouter, type Router } from '../../src/index.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { startWebSocketServer, type WebSocketTestServer } from '../support/loopback-server.js';
import { collect, eventually, wsClient } from './fixtures.js';

const LINK = (version: string, ...directives: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/${version}", import: [${directives.map((d) => `"@${d}"`).join(', ')}])`;
const LEGACY_SDL = `${LINK('v2.7', 'key')} type Query { items: [Item!]! } type Subscription { itemChanged: Item! } type Item @key(fields: "id") { id: ID! full: String }`;
const NEXT_SDL = `${LINK('v2.7', 'key', 'override')} type Item @key(fields: "id") { id: ID! full: String @override(from: "legacy", label: "percent(50)") }`;

/** Wakes every open `itemChanged` subscription with one event. */
const listeners = new Set<() => void>();
let legacy: WebSocketTestServer;
let disposeServer: () => Promise<void>;
let next: TestSubgraph;
let router: Router;
let url: string;
let source: { supergraphSdl: string; subgraphs: ReturnType<typeof composeSubgraphs>['subgraphs']; origin: string };

beforeAll(async () => {
  const schema = buildSubgraphSchema({
    typeDefs: parse(LEGACY_SDL),
    resolvers: {
      Query: { items: () => [{ id: 'i1' }] },
      Item: { __resolveReference: (ref: { id: string }) => ref, full: () => 'legacy' },
      Subscription: {
        itemChanged: {
          subscribe: (): AsyncIterableIterator<unknown> => {
            let pending = 0;
            let wake: (() => void) | undefined;
            let ended = false;
            const listener = (): void => {
              pending++;
              wake?.();
            };
            listeners.add(listener);
            return {
              async next() {
                while (!ended && pending === 0) await new Promise<void>((resolve) => (wake = resolve));
                if (ended) return { done: true, value: undefined };
                pending--;
                return { done: false, value: { itemChanged: { id: 'i1' } } };
              },
              async return() {
                ended = true;
                listeners.delete(listener);
                wake?.();
                return { done: true, value: undefined };
              },
              [Symbol.asyncIterator]() {
                return this;
              },
            };
          },
        },
      },
    } as never,
  });
  legacy = await startWebSocketServer();
  const disposable = useServer({ schema }, legacy.wss);
  disposeServer = async () => {
    await disposable.dispose();
    await legacy.close();
  };
  next = await startSubgraph({ name: 'next', typeDefs: NEXT_SDL, resolvers: { Item: { __resolveReference: (ref: { id: string }) => ref, full: () => 'next' } } as never });
  const composed = composeSubgraphs([
    { name: 'legacy', url: legacy.url, sdl: LEGACY_SDL, subscription: { url: legacy.url, protocol: 'ws', websocketSubprotocol: 'graphql-transport-ws' } },
    { name: 'next', url: next.url, sdl: NEXT_SDL },
  ]);
  source = { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' };
  router = await createRouter({ config: { execution_config: { file: { watch: false } } }, graph: source, logger: createLogger({ level: 'silent' }) });
  ({ url } = await router.listen('127.0.0.1:0'));
});

afterAll(async () => {
  await router.close();
  await disposeServer();
  await next.close();
});

describe('a subscription under a percent(50) override', () => {
  it('keeps the draw it started with across a graph reload', async () => {
    const client = wsClient({ url } as never);
    // Equal subgraph operations share one subgraph subscription: at most two here, one per draw.
    const subs = Array.from({ length: 16 }, () => collect(client, { query: 'subscription { itemChanged { id full } }' }));
    const fullOf = (event: unknown) => (event as { data: { itemChanged: { full: string } } }).data.itemChanged.full;
    /** Sends events until every subscription has `count` (or failed). */
    const eventsUntil = async (count: number) => {
      await eventually(() => {
        for (const wake of listeners) wake();
        return subs.every((sub) => sub.events.length >= count || sub.error !== undefined);
      });
    };
    await eventsUntil(1);
    const first = subs.map((sub) => fullOf(sub.events[0]));
    // Both ways were drawn (each missing once in 2^15).
    expect(new Set(first)).toEqual(new Set(['legacy', 'next']));
    await router.loadGraph(source);
    const seen = subs.map((sub) => sub.events.length);
    await eventsUntil(Math.max(...seen) + 1);
    expect(subs.map((sub) => sub.error)).toEqual(subs.map(() => undefined));
    // Each still answers from the subgraph it drew before the reload.
    expect(subs.map((sub) => fullOf(sub.events.at(-1)))).toEqual(first);
    for (const sub of subs) sub.dispose();
  });
});
