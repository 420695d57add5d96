/**
 * An operation type the graph has no root type for (a mutation on a graph
 * without `Mutation`, a subscription without `Subscription`). graphql-js's
 * validate() lets it through (its execute() refuses it), so the router
 * refuses it itself with graphql-js's message, on every transport, and the
 * planner never plans it on `Query`: no subgraph sees it.
 */
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RouterError } from '../../src/kernel/errors.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { plannerFor } from '../kernel/plan/plan-helpers.js';

const TYPE_DEFS = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { liveCount: Int me: User }
  type User @key(fields: "id") { id: ID! }
`;

const NO_MUTATION = { message: 'Schema is not configured to execute mutation operation.', code: 'GRAPHQL_VALIDATION_FAILED' };
const NO_SUBSCRIPTION = { message: 'Schema is not configured to execute subscription operation.', code: 'GRAPHQL_VALIDATION_FAILED' };

let subgraph: TestSubgraph;
let router: TestRouter;
let base: string;

beforeAll(async () => {
  subgraph = await startSubgraph({ name: 'live', typeDefs: TYPE_DEFS, resolvers: { Query: { liveCount: () => 7, me: () => ({ id: 'u1' }) } } });
  router = await startTestRouter({ subgraphs: [subgraph], listen: true, config: { limits: { max_batch_size: 4 } } });
  base = router.url!;
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

interface Body {
  data?: unknown;
  errors?: Array<{ message: string; locations?: unknown; extensions?: { code?: string } }>;
}

async function send(path: string, init: RequestInit): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${base}${path}`, init);
  return { status: response.status, body: (await response.json()) as Body };
}

function post(query: string, accept = 'application/graphql-response+json') {
  return send('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: JSON.stringify({ query }) });
}

function firstError(answer: { status: number; body: Body }) {
  return { status: answer.status, message: answer.body.errors?.[0]?.message, code: answer.body.errors?.[0]?.extensions?.code };
}

describe('an operation type the graph has no root type for', () => {
  it('refuses a mutation selecting a Query field with 400, never sending it to the subgraph', async () => {
    const calls = subgraph.calls.length;
    const answer = await post('mutation { liveCount }');
    expect(firstError(answer)).toEqual({ status: 400, ...NO_MUTATION });
    expect(answer.body.errors?.[0]?.locations).toEqual([{ line: 1, column: 1 }]);
    expect(subgraph.calls.length).toBe(calls);
    // The same field as a query still runs.
    expect(await post('query { liveCount }')).toEqual({ status: 200, body: { data: { liveCount: 7 } } });
  });

  it('refuses a mutation of a field no type has with 400, not a planning failure', async () => {
    expect(firstError(await post('mutation { x }'))).toEqual({ status: 400, ...NO_MUTATION });
  });

  it('refuses it over GET with 400 (the operation is invalid before its method matters)', async () => {
    const params = new URLSearchParams({ query: 'mutation { liveCount }' });
    expect(firstError(await send(`/graphql?${params}`, { headers: { accept: 'application/graphql-response+json' } }))).toEqual({ status: 400, ...NO_MUTATION });
  });

  it('refuses that entry of a batch and answers the others', async () => {
    const answer = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify([{ query: '{ liveCount }' }, { query: 'mutation { liveCount }' }]),
    });
    const [first, second] = (await answer.json()) as Body[];
    expect(first).toEqual({ data: { liveCount: 7 } });
    expect(second?.errors?.[0]).toMatchObject({ message: NO_MUTATION.message, extensions: { code: NO_MUTATION.code } });
  });

  it('refuses it through router.execute (the Connect entry)', async () => {
    const answer = await router.router.execute({ query: 'mutation M { liveCount }' });
    expect(firstError(answer)).toEqual({ status: 400, ...NO_MUTATION });
  });

  it.each([
    ['text/event-stream', 'SSE'],
    ['multipart/mixed;subscriptionSpec="1.0", application/json', 'multipart'],
  ])('refuses a subscription over %s (%s) with 400 instead of opening an upstream WebSocket', async (accept) => {
    const calls = subgraph.calls.length;
    expect(firstError(await post('subscription { me { id } }', accept))).toEqual({ status: 400, ...NO_SUBSCRIPTION });
    expect(subgraph.calls.length).toBe(calls);
  });

  it('refuses a subscription and a mutation over graphql-ws with an error message', async () => {
    const client = createClient({ url: `${base.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    try {
      const run = (query: string) =>
        new Promise<unknown>((resolve) => {
          const results: unknown[] = [];
          client.subscribe({ query }, { next: (value) => void results.push(value), error: resolve, complete: () => resolve(results) });
        });
      expect(await run('subscription { me { id } }')).toMatchObject([{ message: NO_SUBSCRIPTION.message, extensions: { code: NO_SUBSCRIPTION.code } }]);
      expect(await run('mutation { liveCount }')).toMatchObject([{ message: NO_MUTATION.message, extensions: { code: NO_MUTATION.code } }]);
    } finally {
      await client.dispose();
    }
  });

  it('refuses a subscription over the legacy graphql-ws subprotocol with a result of errors, then complete', async () => {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-ws');
    try {
      const messages: Array<{ type: string; id?: string; payload?: unknown }> = [];
      const arrived = (type: string) =>
        new Promise<{ type: string; id?: string; payload?: unknown }>((resolve) => {
          const check = () => {
            const found = messages.find((message) => message.type === type);
            if (found) {
              socket.off('message', check);
              resolve(found);
            }
          };
          socket.on('message', check);
          check();
        });
      socket.on('message', (data) => messages.push(JSON.parse(String(data)) as { type: string }));
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
      await arrived('connection_ack');
      socket.send(JSON.stringify({ type: 'start', id: '1', payload: { query: 'subscription { me { id } }' } }));
      expect(await arrived('data')).toMatchObject({ id: '1', payload: { errors: [{ message: NO_SUBSCRIPTION.message, extensions: { code: NO_SUBSCRIPTION.code } }] } });
      expect(await arrived('complete')).toEqual({ type: 'complete', id: '1' });
    } finally {
      socket.terminate();
    }
  });

  it('has the planner refuse such an operation instead of planning it on Query', () => {
    const planner = plannerFor([{ name: 'live', typeDefs: TYPE_DEFS }]);
    for (const [query, message] of [
      ['mutation { liveCount }', NO_MUTATION.message],
      ['subscription { me { id } }', NO_SUBSCRIPTION.message],
    ] as const) {
      let thrown: unknown;
      try {
        planner.plan(query);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(RouterError);
      expect({ code: (thrown as RouterError).code, message: (thrown as RouterError).message }).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED', message });
    }
  });
});
