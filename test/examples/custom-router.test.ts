/**
 * examples/custom-router, as its README walks through it: the router composed
 * in code with a plugin of its own, an envelop plugin from npm and a built-in
 * plugin, over the demo's subgraphs on 127.0.0.1.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCustomRouter, type CustomRouterExample } from '../../examples/custom-router/start.js';
import { createLogger } from '../../src/index.js';

let example: CustomRouterExample;

beforeAll(async () => {
  example = await startCustomRouter({ listenAddr: '127.0.0.1:0', logger: createLogger({ level: 'warn' }) });
});

afterAll(async () => {
  await example?.close();
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(example.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, requestId: response.headers.get('x-request-id'), body: (await response.json()) as unknown };
}

function subgraphRequestIds(): Record<string, string[]> {
  return Object.fromEntries(example.subgraphs.map((s) => [s.name, s.calls.map((call) => call.headers['x-request-id'] ?? '(none)')]));
}

describe('the custom-router example', () => {
  it('runs its three plugins in the order it composed them', () => {
    expect(example.router.plugins).toEqual(['block-field-suggestions', 'automatic-persisted-queries', 'request-id']);
  });

  it("1. sends the client's request id to every subgraph call and back, or makes one up", async () => {
    for (const subgraph of example.subgraphs) subgraph.reset();
    const query = '{ topProducts(first: 1) { name reviews { body } } }';
    expect(await post({ query }, { 'x-request-id': 'checkout-42' })).toEqual({
      status: 200,
      requestId: 'checkout-42',
      body: { data: { topProducts: [{ name: 'Table', reviews: [{ body: 'Love it!' }, { body: 'Prefer something else.' }] }] } },
    });
    expect(subgraphRequestIds()).toEqual({ accounts: [], products: ['checkout-42'], reviews: ['checkout-42'], inventory: [] });

    for (const subgraph of example.subgraphs) subgraph.reset();
    const made = await post({ query }, { 'x-request-id': 'not a plain id' });
    expect(made.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(subgraphRequestIds()).toEqual({ accounts: [], products: [made.requestId], reviews: [made.requestId], inventory: [] });
    expect((await post({ query })).requestId).not.toBe(made.requestId);
  });

  it('2. hides field suggestions in validation errors (the envelop plugin from npm)', async () => {
    expect(await post({ query: '{ topProducts { nam } }' })).toEqual({
      status: 200,
      requestId: expect.any(String),
      body: {
        errors: [
          {
            message: 'Cannot query field "nam" on type "Product". [Suggestion hidden]',
            locations: [{ line: 1, column: 17 }],
            extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
          },
        ],
      },
    });
  });

  it('3. answers an unknown hash with PERSISTED_QUERY_NOT_FOUND, then runs it by hash once it was sent with its text', async () => {
    const query = '{ topProducts(first: 1) { name } }';
    const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') };
    const unknown = await post({ extensions: { persistedQuery } }, { 'x-request-id': 'apq-1' });
    expect(unknown).toEqual({
      status: 200,
      requestId: 'apq-1',
      body: { errors: [{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] },
    });
    const answer = { data: { topProducts: [{ name: 'Table' }] } };
    expect((await post({ query, extensions: { persistedQuery } })).body).toEqual(answer);
    expect((await post({ extensions: { persistedQuery } })).body).toEqual(answer);
  });

  it("gives no request id to an answer APQ sends outright, before request-id's hook (the README's note on order)", async () => {
    const persistedQuery = { version: 1, sha256Hash: createHash('sha256').update('{ me { id } }').digest('hex') };
    expect(await post({ query: '{ topProducts { name } }', extensions: { persistedQuery } }, { 'x-request-id': 'apq-2' })).toEqual({
      status: 400,
      requestId: null,
      body: { errors: [{ message: 'The sha256Hash does not match the SHA-256 of the query text.', extensions: { code: 'PERSISTED_QUERY_HASH_MISMATCH' } }] },
    });
  });
});
