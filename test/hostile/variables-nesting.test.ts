/**
 * Variable values nested deeper than documents may be: a recursive input
 * type (`input I { b: [I!] }`) lets a ~10 KB JSON value overflow
 * graphql-js's recursive coercion. Every entry point that coerces variables
 * (POST, GET, batches, APQ, `router.execute` as Connect uses it, graphql-ws,
 * the legacy subprotocol, SSE, multipart) answers 400 `BAD_USER_INPUT`,
 * never a 500, and no subgraph is called.
 */
import { createHash } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useAutomaticPersistedQueries } from '../../plugins/automatic-persisted-queries/index.js';
import { MAX_NESTING } from '../../src/kernel/router/document-scan.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

const LINK = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`;

const QUERY = 'query Echo($i: I) { echo(input: $i) }';
const SUBSCRIPTION = 'subscription Ticks($i: I) { ticks(input: $i) }';

/** `{"b":[` × pairs around `inner`: each pair nests two levels (an object and a list). */
function nested(pairs: number, inner: unknown = {}): unknown {
  return JSON.parse(`${'{"b":['.repeat(pairs)}${JSON.stringify(inner)}${']}'.repeat(pairs)}`);
}

/** Exactly MAX_NESTING levels: 127 pairs around `{"b":[]}` (two more). */
const AT_BOUND = nested((MAX_NESTING - 2) / 2, { b: [] });
/** One level more: 128 pairs around `{}`. */
const PAST_BOUND = nested(MAX_NESTING / 2);
/** Deep enough to overflow graphql-js's recursive coercion (about 750 pairs do in a router). */
const OVERFLOWING = nested(1000);

const REFUSAL = `Variable "$i" nests lists and objects more than ${MAX_NESTING} levels deep; the router accepts at most ${MAX_NESTING}.`;

let subgraph: TestSubgraph;
let router: TestRouter;
let base: string;

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'echo',
    typeDefs: `${LINK}
      input I { b: [I!] a: String }
      type Query { echo(input: I): String }
      type Subscription { ticks(input: I): Int }`,
    resolvers: { Query: { echo: () => 'ok' } },
  });
  router = await startTestRouter({
    subgraphs: [subgraph],
    listen: true,
    config: { limits: { max_batch_size: 4 } },
    plugins: [useAutomaticPersistedQueries({ enabled: true })],
  });
  base = router.url!;
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

interface Answer {
  readonly status: number;
  readonly body: { data?: unknown; errors?: Array<{ message: string; extensions?: { code?: string } }> };
}

/** A JSON POST to `/graphql` (`body` as text when a value is too deep for JSON.stringify). */
async function post(body: unknown, accept = 'application/graphql-response+json'): Promise<Answer> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept }, body: text });
  return { status: response.status, body: (await response.json()) as Answer['body'] };
}

function refusal(answer: Answer): { status: number; code: string | undefined; message: string | undefined } {
  return { status: answer.status, code: answer.body.errors?.[0]?.extensions?.code, message: answer.body.errors?.[0]?.message };
}

const REFUSED = { status: 400, code: 'BAD_USER_INPUT', message: REFUSAL };

describe('variable values past the nesting bound', () => {
  it('answers a value nested exactly to the bound, and refuses one level more with 400 before any subgraph call', async () => {
    expect(await post({ query: QUERY, variables: { i: AT_BOUND } })).toEqual({ status: 200, body: { data: { echo: 'ok' } } });
    const calls = subgraph.calls.length;
    expect(refusal(await post({ query: QUERY, variables: { i: PAST_BOUND } }))).toEqual(REFUSED);
    expect(subgraph.calls.length).toBe(calls);
  });

  it('refuses a value deep enough to overflow coercion with 400, not 500, and keeps serving', async () => {
    expect(refusal(await post({ query: QUERY, variables: { i: OVERFLOWING } }))).toEqual(REFUSED);
    expect(await post({ query: QUERY, variables: { i: { b: [{ a: 'x' }] } } })).toEqual({ status: 200, body: { data: { echo: 'ok' } } });
  });

  it('counts nesting anywhere in the value, not only along the first branch', async () => {
    const wide = { b: [{ a: 'x' }, nested(200) as object, { b: [{}] }] };
    expect(refusal(await post({ query: QUERY, variables: { i: wide } }))).toEqual(REFUSED);
  });

  it('ignores a deep value under a name the operation does not declare, as coercion does', async () => {
    const unused = `${'['.repeat(50_000)}${']'.repeat(50_000)}`;
    const body = `{"query":${JSON.stringify(QUERY)},"variables":{"i":{"a":"x"},"unused":${unused}}}`;
    expect(await post(body)).toEqual({ status: 200, body: { data: { echo: 'ok' } } });
  });

  it('refuses it in a GET request', async () => {
    const params = new URLSearchParams({ query: QUERY, variables: JSON.stringify({ i: PAST_BOUND }) });
    const response = await fetch(`${base}/graphql?${params}`, { headers: { accept: 'application/graphql-response+json' } });
    expect(refusal({ status: response.status, body: (await response.json()) as Answer['body'] })).toEqual(REFUSED);
  });

  it('refuses that entry of a batch and answers the others', async () => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify([
        { query: QUERY, variables: { i: { a: 'x' } } },
        { query: QUERY, variables: { i: OVERFLOWING } },
      ]),
    });
    const [first, second] = (await response.json()) as Array<Answer['body']>;
    expect(first).toEqual({ data: { echo: 'ok' } });
    expect(second?.errors?.[0]).toMatchObject({ message: REFUSAL, extensions: { code: 'BAD_USER_INPUT' } });
  });

  it('refuses it for an automatic persisted query sent by hash', async () => {
    const sha256Hash = createHash('sha256').update(QUERY).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    expect((await post({ query: QUERY, variables: { i: { a: 'x' } }, extensions })).status).toBe(200);
    expect(refusal(await post({ variables: { i: OVERFLOWING }, extensions }))).toEqual(REFUSED);
  });

  it('refuses it through router.execute (the Connect entry), cyclic values from code included', async () => {
    const executed = await router.router.execute({ query: QUERY, variables: { i: OVERFLOWING } });
    expect(refusal(executed as Answer)).toEqual(REFUSED);
    const cyclic: { b: unknown[] } = { b: [] };
    cyclic.b.push(cyclic);
    expect(refusal((await router.router.execute({ query: QUERY, variables: { i: cyclic } })) as Answer)).toEqual(REFUSED);
  });

  it('answers 400, not 500, when coercion hands back an error that is not a GraphQL error', async () => {
    // graphql-js returns what its coercion threw among its errors; a getter that throws on coercion's read (the scan reads first) is one way from code.
    let reads = 0;
    const value = {
      get a(): string {
        if (++reads > 1) throw new TypeError('the value cannot be read twice');
        return 'x';
      },
    };
    const executed = (await router.router.execute({ query: QUERY, variables: { i: value } })) as Answer;
    expect(refusal(executed)).toEqual({ status: 400, code: 'BAD_USER_INPUT', message: 'Variables could not be coerced: the value cannot be read twice' });
  });

  it.each([
    ['text/event-stream', 'SSE'],
    ['multipart/mixed;subscriptionSpec="1.0", application/json', 'multipart'],
  ])('refuses a subscription over %s (%s) with 400', async (accept) => {
    expect(refusal(await post({ query: SUBSCRIPTION, variables: { i: OVERFLOWING } }, accept))).toEqual(REFUSED);
  });

  it('refuses a subscription over graphql-ws with the error message, and the socket stays usable', async () => {
    const client = createClient({ url: `${base.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: true });
    try {
      const run = (payload: { query: string; variables: Record<string, unknown> }) =>
        new Promise<unknown>((resolve) => {
          const results: unknown[] = [];
          client.subscribe(payload, { next: (value) => void results.push(value), error: resolve, complete: () => resolve(results) });
        });
      const refused = (await run({ query: SUBSCRIPTION, variables: { i: OVERFLOWING } })) as Array<{ message: string; extensions?: { code?: string } }>;
      expect(refused[0]).toMatchObject({ message: REFUSAL, extensions: { code: 'BAD_USER_INPUT' } });
      expect(await run({ query: QUERY, variables: { i: { a: 'x' } } })).toEqual([{ data: { echo: 'ok' } }]);
    } finally {
      await client.dispose();
    }
  });

  it('refuses a subscription over the legacy graphql-ws subprotocol with a result of errors', async () => {
    const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-ws');
    try {
      const received: Array<{ type: string; id?: string; payload?: unknown }> = [];
      const waitFor = (type: string) =>
        new Promise<{ type: string; id?: string; payload?: unknown }>((resolve) => {
          const found = received.find((message) => message.type === type);
          if (found) return resolve(found);
          const listen = (data: WebSocket.RawData) => {
            const message = JSON.parse(String(data)) as { type: string };
            if (message.type === type) {
              socket.off('message', listen);
              resolve(message);
            }
          };
          socket.on('message', listen);
        });
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
      const acknowledged = waitFor('connection_ack');
      socket.send(JSON.stringify({ type: 'connection_init', payload: {} }));
      await acknowledged;
      const refused = waitFor('data');
      socket.send(JSON.stringify({ type: 'start', id: '1', payload: { query: SUBSCRIPTION, variables: { i: OVERFLOWING } } }));
      expect(await refused).toMatchObject({ id: '1', payload: { errors: [{ message: REFUSAL, extensions: { code: 'BAD_USER_INPUT' } }] } });
    } finally {
      socket.terminate();
    }
  });
});
