/**
 * A number JSON cannot carry: `1e400` parses as Infinity and would be
 * written to the subgraph as null. Int and Float refuse it through
 * graphql-js; a custom scalar takes any value, so the router refuses it
 * itself, before any subgraph call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

let subgraph: TestSubgraph;
let router: TestRouter;

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'echo',
    typeDefs: `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      scalar JSON
      type Query { echo(v: JSON): JSON }`,
    resolvers: { Query: { echo: (_: unknown, { v }: { v: unknown }) => v } } as never,
  });
  router = await startTestRouter({ subgraphs: [subgraph] });
});

afterAll(async () => {
  await router?.close();
  await subgraph?.close();
});

async function post(body: string): Promise<{ status: number; body: unknown }> {
  const response = await router.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: response.status, body: await response.json() };
}

describe('numbers in variables that JSON cannot carry', () => {
  it('refuses 1e400 anywhere in a custom scalar value with 400 BAD_USER_INPUT, calling no subgraph', async () => {
    subgraph.reset();
    for (const value of ['1e400', '-1e400', '[1, {"a": [2, 1e999]}]']) {
      const answer = await post(`{"query": "query($v: JSON) { echo(v: $v) }", "variables": {"v": ${value}}}`);
      expect(answer).toEqual({
        status: 200,
        body: { errors: [{ message: 'Variable "$v" holds a number too large for JSON to carry (beyond ±1.8e308).', extensions: { code: 'BAD_USER_INPUT' } }] },
      });
    }
    expect(subgraph.calls).toHaveLength(0);
  });

  it('passes the largest finite numbers through', async () => {
    expect(await post('{"query": "query($v: JSON) { echo(v: $v) }", "variables": {"v": [1.7976931348623157e308, -5e-324]}}')).toEqual({
      status: 200,
      body: { data: { echo: [1.7976931348623157e308, -5e-324] } },
    });
  });
});
