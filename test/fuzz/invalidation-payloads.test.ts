import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestRouter } from '../../src/testing/index.js';
import { capturingLogger, memoryCache, SHARED_KEY, startCacheGraph, type CacheGraph } from '../plugins/response-cache/fixtures.js';
import { expectPrototypeUntouched, pollutingKeys, POLLUTING_OBJECT } from './prototype.js';

let graph: CacheGraph;
let router: TestRouter;
let endpoint: string;
/** Every log line, at debug level: the shared key must never be among them. */
let logs: ReturnType<typeof capturingLogger>;

beforeAll(async () => {
  graph = await startCacheGraph();
  logs = capturingLogger('debug');
  router = await graph.router({
    cache: { ...memoryCache, invalidation: { endpoint: { enabled: true, listen_addr: '127.0.0.1:0', shared_key: SHARED_KEY } } },
    logger: logs.logger,
  });
  const listening = logs.lines.find((line) => line.msg === 'Invalidation endpoint listening');
  endpoint = `http://${String(listening?.listen_addr)}${String(listening?.path)}`;
});

afterAll(async () => {
  await router?.close();
  await graph?.close();
});

/** Posts a raw body with the right key and content type. */
async function post(body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(endpoint, { method: 'POST', headers: { authorization: SHARED_KEY, 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: await response.json() };
}

/** The answer must be 202 with a count, or 400 with errors: per element (index in range) for an array, else one message. */
function expectWellFormed(answer: { status: number; body: unknown }, elements: number | undefined): void {
  if (answer.status === 202) {
    expect(answer.body).toEqual({ count: expect.any(Number) });
    expect((answer.body as { count: number }).count).toBeGreaterThanOrEqual(0);
    return;
  }
  expect(answer.status).toBe(400);
  const errors = (answer.body as { errors: Array<Record<string, unknown>> }).errors;
  expect(errors.length).toBeGreaterThan(0);
  for (const error of errors) {
    expect(typeof error.message).toBe('string');
    if (elements === undefined || !('index' in error)) continue;
    expect(error).toEqual({ index: expect.any(Number), kind: expect.any(String), message: expect.any(String) });
    expect(error.index).toBeGreaterThanOrEqual(0);
    expect(error.index).toBeLessThan(elements);
  }
}

const field = fc.oneof(fc.constantFrom('kind', 'subgraph', 'type', 'subgraphs', 'cache_tag'), pollutingKeys, fc.string({ maxLength: 8 }));
const value = fc.oneof(
  fc.constantFrom('subgraph', 'type', 'cache_tag', 'products', 'reviews', 'Product', 'nope', '', '__proto__'),
  fc.array(fc.constantFrom('products', 'reviews', 'nope', '__proto__'), { maxLength: 3 }),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constant(JSON.parse(POLLUTING_OBJECT) as unknown),
);
/** An element as JSON text: keys written literally, so `__proto__` stays an own key as a client would send it. */
const element = fc.array(fc.tuple(field, value), { maxLength: 5 }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);
const valid = fc.oneof(
  fc.constantFrom('products', 'reviews').map((subgraph) => JSON.stringify({ kind: 'subgraph', subgraph })),
  fc.constantFrom('products', 'reviews').map((subgraph) => JSON.stringify({ kind: 'type', subgraph, type: 'Product' })),
  fc
    .string({ maxLength: 20 })
    .filter((tag) => tag !== '')
    .map((tag) => JSON.stringify({ kind: 'cache_tag', subgraphs: ['products'], cache_tag: tag })),
);

describe('fuzzing the invalidation endpoint', () => {
  it('answers arrays of arbitrary elements with 202 and a count or 400 naming each bad element, never polluting prototypes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            element,
            valid,
            fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
          ),
          { maxLength: 6 },
        ),
        async (items) => {
          expectWellFormed(await post(`[${items.join(',')}]`), items.length);
          expectPrototypeUntouched();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('accepts every array of valid elements', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(valid, { maxLength: 5 }), async (items) => {
        const answer = await post(`[${items.join(',')}]`);
        expect(answer.status).toBe(202);
      }),
      { numRuns: 50 },
    );
  });

  it('answers any other body with a 400 and one message', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc
            .jsonValue({ maxDepth: 3 })
            .filter((v) => !Array.isArray(v))
            .map((v) => JSON.stringify(v)),
          fc.string({ unit: 'binary', maxLength: 200 }).filter((text) => !text.trimStart().startsWith('[')),
          fc.constant(POLLUTING_OBJECT),
        ),
        async (body) => {
          const answer = await post(body);
          expect(answer.status).toBe(400);
          expect(answer.body).toEqual({ errors: [{ message: expect.any(String) }] });
          expectPrototypeUntouched();
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses every Authorization value but the key itself', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .oneof(
            fc.string({ minLength: 1, maxLength: 80 }),
            fc.nat({ max: SHARED_KEY.length - 1 }).map((n) => `${SHARED_KEY.slice(0, n)}x${SHARED_KEY.slice(n + 1)}`),
          )
          .filter((key) => key.trim() !== '' && key.trim() === key && key !== SHARED_KEY),
        async (authorization) => {
          expect((await post('[]', { authorization })).status).toBe(401);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('still caches and invalidates afterwards, and never logged the shared key', async () => {
    graph.reset();
    const query = '{ product(upc: "p1") { name } }';
    expect((await router.query(query)).body).toEqual({ data: { product: { name: 'Table' } } });
    await router.query(query);
    expect(graph.products.calls).toHaveLength(1);
    expect(await post(JSON.stringify([{ kind: 'subgraph', subgraph: 'products' }]))).toEqual({ status: 202, body: { count: 1 } });
    await router.query(query);
    expect(graph.products.calls).toHaveLength(2);
    expect(logs.lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(logs.lines)).not.toContain(SHARED_KEY);
  });
});
