/**
 * Integers past 2^53 in a client's JSON variables. JSON.parse rounds
 * 12345678901234567891 to 12345678901234567000: an ID sent as a number
 * reached the subgraph as another id, and two ids that round alike shared
 * one response-cache entry (one user's answer served for another's id). IDs
 * now keep their digits (as the string ID coercion gives), Floats keep the
 * rounded number, and any other value that lost digits is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useCacheTags } from '../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../plugins/response-cache/index.js';
import { definePlugin, z } from '../../src/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

/** Two 64-bit ids that JSON.parse reads as the same double. */
const ID_A = '12345678901234567891';
const ID_B = '12345678901234567892';

/** A plugin that rewrites the variables as docs/plugins.md shows: a copy with one more (here, only when asked by a header). */
const useTenant = definePlugin({
  name: 'tenant',
  options: z.strictObject({}),
  setup: () => ({
    hooks: {
      onRequest(event) {
        if (event.input.headers['x-tenant'] === undefined) return;
        event.setInput({ ...event.input, variables: { ...event.input.variables, tenant: event.input.headers['x-tenant'] } });
      },
    },
  }),
});

let subgraph: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  expect(Number(ID_A)).toBe(Number(ID_B));
  subgraph = await startSubgraph({
    name: 'users',
    typeDefs: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      scalar JSON
      input Filter { ids: [ID!], owner: ID, weight: Float }
      type User { id: ID! name: String! }
      type Query {
        user(id: ID!): User
        usersOf(filters: [Filter!]!): [User!]!
        echoAll(v: [JSON]): JSON
        users(filter: Filter!): [User!]!
        echo(v: JSON): JSON
        count(n: Int): Int
        ratio(f: Float): Float
      }`,
    resolvers: {
      Query: {
        user: (_: unknown, { id }: { id: string }) => ({ id, name: `user ${id}` }),
        users: (_: unknown, { filter }: { filter: { ids?: string[]; owner?: string } }) =>
          [...(filter.ids ?? []), ...(filter.owner ? [filter.owner] : [])].map((id) => ({ id, name: `user ${id}` })),
        echo: (_: unknown, { v }: { v: unknown }) => v,
        echoAll: (_: unknown, { v }: { v: unknown }) => v,
        usersOf: (_: unknown, { filters }: { filters: { ids?: string[] }[] }) => filters.flatMap((f) => f.ids ?? []).map((id) => ({ id, name: `user ${id}` })),
        count: (_: unknown, { n }: { n: number }) => n,
        ratio: (_: unknown, { f }: { f: number }) => f,
      },
    } as never,
    reply: () => ({ headers: { 'cache-control': 'max-age=60' } }),
  });
  router = await startTestRouter({
    subgraphs: [subgraph],
    listen: true,
    plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } }), useTenant({})],
  });
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

async function post(body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const response = await router.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: await response.json() };
}

/** Resolves once `done` holds (checked every 10 ms). */
function until(done: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => (done() ? resolve() : void setTimeout(check, 10));
    check();
  });
}

const USER = 'query($id: ID!) { user(id: $id) { id name } }';

describe('an ID sent as a JSON number past 2^53', () => {
  it('reaches the subgraph with its exact digits, and two ids that round alike get their own answers (and cache entries)', async () => {
    subgraph.reset();
    for (const id of [ID_A, ID_B, ID_A]) {
      const answer = await post(`{"query": ${JSON.stringify(USER)}, "variables": {"id": ${id}}}`);
      expect(answer, id).toEqual({ status: 200, body: { data: { user: { id, name: `user ${id}` } } } });
    }
    expect(subgraph.calls.map((call) => call.variables)).toEqual([{ id: ID_A }, { id: ID_B }]);
  });

  it('keeps the digits inside input objects and lists, over GET as over POST', async () => {
    subgraph.reset();
    const query = 'query($f: Filter!) { users(filter: $f) { id } }';
    const variables = `{"f": {"ids": [${ID_A}, 7, ${ID_B}], "owner": -${ID_A}, "weight": ${ID_A}}}`;
    const expected = { data: { users: [{ id: ID_A }, { id: '7' }, { id: ID_B }, { id: `-${ID_A}` }] } };
    expect(await post(`{"query": ${JSON.stringify(query)}, "variables": ${variables}}`)).toEqual({ status: 200, body: expected });
    // A Float is approximate: the rounded number goes on.
    expect(subgraph.calls.map((call) => call.variables)).toEqual([{ f: { ids: [ID_A, 7, ID_B], owner: `-${ID_A}`, weight: Number(ID_A) } }]);
    // The same variables over GET: the same subgraph call, so the answer the response cache kept for it.
    const get = await router.fetch(`/graphql?${new URLSearchParams({ query, variables })}`);
    expect({ status: get.status, body: await get.json() }).toEqual({ status: 200, body: expected });
    const other = await router.fetch(`/graphql?${new URLSearchParams({ query, variables: variables.replaceAll(ID_A, '12345678901234567893') })}`);
    expect(await other.json()).toEqual({ data: { users: [{ id: '12345678901234567893' }, { id: '7' }, { id: ID_B }, { id: '-12345678901234567893' }] } });
    expect(subgraph.calls).toHaveLength(2);
  });

  it('keeps the digits of an operation sent over GraphQL over WebSocket (the text as a client in another language writes it)', async () => {
    subgraph.reset();
    const id = '12345678901234567895';
    const socket = new WebSocket(router.url!.replace(/^http/, 'ws') + '/graphql', 'graphql-transport-ws');
    const messages: { type: string; payload?: unknown }[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send('{"type":"connection_init"}');
    await until(() => messages.some((m) => m.type === 'connection_ack'));
    socket.send(`{"type":"subscribe","id":"1","payload":{"query":${JSON.stringify(USER)},"variables":{"id":${id}}}}`);
    await until(() => messages.some((m) => m.type === 'complete' || m.type === 'error'));
    socket.close();
    expect(messages.find((m) => m.type === 'next')?.payload).toEqual({ data: { user: { id, name: `user ${id}` } } });
    expect(subgraph.calls.map((call) => call.variables)).toEqual([{ id }]);
  });

  it('keeps the digits when a request hook replaced the variables with a copy (a plugin adding one)', async () => {
    subgraph.reset();
    const id = '12345678901234567897';
    const answer = await post(`{"query": ${JSON.stringify(USER)}, "variables": {"id": ${id}}}`, { 'x-tenant': 'acme' });
    expect(answer).toEqual({ status: 200, body: { data: { user: { id, name: `user ${id}` } } } });
    expect(subgraph.calls.map((call) => call.variables)).toEqual([{ id }]);
  });

  it('keeps the digits of a single object sent where a list of input objects is declared (coerced as a list of one)', async () => {
    subgraph.reset();
    const id = '12345678901234567898';
    const answer = await post(`{"query": "query($f: [Filter!]!) { many: usersOf(filters: $f) { id } }", "variables": {"f": {"ids": [${id}]}}}`);
    expect(answer).toEqual({ status: 200, body: { data: { many: [{ id }] } } });
  });

  it('gives an ID written with 22 digits its digits, not the "1e+21" the double would print', async () => {
    const id = '1000000000000000000000';
    expect(await post(`{"query": ${JSON.stringify(USER)}, "variables": {"id": ${id}}}`)).toEqual({ status: 200, body: { data: { user: { id, name: `user ${id}` } } } });
  });

  it('leaves numbers that keep their digits as they are (2^53 itself, 16-digit ones, ids sent as strings)', async () => {
    subgraph.reset();
    for (const id of ['9007199254740992', '1234567890123456', '"98765432109876543210"', '100000000000000000000']) {
      const answer = await post(`{"query": ${JSON.stringify(USER)}, "variables": {"id": ${id}}}`);
      expect(answer.status, id).toBe(200);
    }
    expect(subgraph.calls.map((call) => call.variables.id)).toEqual([9007199254740992, 1234567890123456, '98765432109876543210', 100000000000000000000]);
  });
});

describe('other values that lost digits', () => {
  it('are refused with BAD_USER_INPUT, calling no subgraph: a JSON scalar (at any depth, naming the exact integer) and an Int (refused by coercion)', async () => {
    subgraph.reset();
    const cases: [string, string][] = [
      ['query($v: JSON) { echo(v: $v) }', `{"v": ${ID_A}}`],
      ['query($v: JSON) { echo(v: $v) }', `{"v": {"a": [1, ${ID_B}]}}`],
      ['query($n: Int) { count(n: $n) }', `{"n": ${ID_A}}`],
    ];
    const messages = [];
    for (const [query, variables] of cases) {
      const answer = await post(`{"query": ${JSON.stringify(query)}, "variables": ${variables}}`);
      expect(answer.status, variables).toBe(200);
      const body = answer.body as { errors: { message: string; extensions: { code: string } }[]; data?: unknown };
      expect(body.data, variables).toBeUndefined();
      expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
      messages.push(body.errors[0]!.message);
    }
    expect(messages[0]).toBe(
      `Variable "$v" holds the integer ${ID_A}, which a JSON number cannot carry exactly past 2^53: the router would pass on other digits. Send it as a string.`,
    );
    expect(messages[1]).toContain(`holds the integer ${ID_B}`);
    expect(messages[2]).toContain('Int cannot represent non 32-bit signed integer value');
    expect(subgraph.calls).toHaveLength(0);
  });

  it("takes a number written as JavaScript writes the double (a JS client's 2 ** 60) anywhere: nothing was lost", async () => {
    const body = JSON.stringify({ query: 'query($v: JSON) { echo(v: $v) }', variables: { v: [{ big: 2 ** 60 }, -(2 ** 62)] } });
    expect(body).toContain('1152921504606847000');
    expect(await post(body)).toEqual({ status: 200, body: { data: { echo: [{ big: 2 ** 60 }, -(2 ** 62)] } } });
  });

  it('refuses a JSON scalar value that lost digits when sent where a list of them is declared', async () => {
    const answer = (await post(`{"query": "query($v: [JSON]) { echoAll(v: $v) }", "variables": {"v": {"a": ${ID_A}}}}`)).body as { errors?: { message: string }[] };
    expect(answer.errors?.[0]?.message).toContain(`holds the integer ${ID_A}`);
  });

  it('a Float takes the rounded number', async () => {
    expect(await post(`{"query": "query($f: Float) { ratio(f: $f) }", "variables": {"f": ${ID_A}}}`)).toEqual({ status: 200, body: { data: { ratio: Number(ID_A) } } });
  });

  it('a body with duplicate keys is read as JSON.parse reads it (the last one wins)', async () => {
    const answer = await post(`{"query": ${JSON.stringify(USER)}, "variables": {"id": 1, "id": "${ID_A}"}}`);
    expect(answer).toEqual({ status: 200, body: { data: { user: { id: ID_A, name: `user ${ID_A}` } } } });
  });
});
