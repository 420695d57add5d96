import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CacheGraph, memoryCache, SHARED_KEY, useCacheGraph } from './fixtures.js';
import { startInvalidatingRouter, type InvalidatingRouter } from './invalidation-suite.js';

let graph: CacheGraph;
let target: InvalidatingRouter;
let noTypes: InvalidatingRouter;

useCacheGraph((started) => (graph = started));

beforeAll(async () => {
  target = await startInvalidatingRouter(graph, memoryCache);
  noTypes = await startInvalidatingRouter(graph, { ...memoryCache, invalidation: { type: false, cache_tag: false } });
});

afterAll(async () => {
  await target?.router.close();
  await noTypes?.router.close();
});

interface Sent {
  readonly method?: string;
  readonly path?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
}

/** Sends a raw request to the endpoint; resolves with status, selected headers and parsed body. */
async function send(endpoint: string, { method = 'POST', path, headers = {}, body }: Sent) {
  const url = path === undefined ? endpoint : new URL(path, endpoint).href;
  const response = await fetch(url, { method, headers, body });
  return { status: response.status, allow: response.headers.get('allow'), type: response.headers.get('content-type'), body: await response.json() };
}

const authorized = { authorization: SHARED_KEY, 'content-type': 'application/json' };

describe('the invalidation endpoint', () => {
  it('answers 202 with the count for a valid request, 0 for an empty array', async () => {
    expect(await send(target.endpoint, { headers: authorized, body: '[]' })).toEqual({
      status: 202,
      allow: null,
      type: 'application/json; charset=utf-8',
      body: { count: 0 },
    });
  });

  it('answers 404 for another path, before looking at anything else', async () => {
    expect(await send(target.endpoint, { path: '/other', method: 'GET' })).toMatchObject({ status: 404, body: { errors: [{ message: 'Not found' }] } });
  });

  it('answers 401 without the Authorization header', async () => {
    expect(await send(target.endpoint, { headers: { 'content-type': 'application/json' }, body: '[]' })).toMatchObject({
      status: 401,
      body: { errors: [{ message: 'Missing authorization header' }] },
    });
  });

  it('answers 401 for a wrong key, and for the right key with a Bearer prefix', async () => {
    for (const authorization of [`${SHARED_KEY}x`, 'short', `Bearer ${SHARED_KEY}`]) {
      expect(await send(target.endpoint, { headers: { ...authorized, authorization }, body: '[]' })).toMatchObject({
        status: 401,
        body: { errors: [{ message: 'Invalid authorization header' }] },
      });
    }
  });

  it('answers 405 with Allow: POST for another method', async () => {
    expect(await send(target.endpoint, { method: 'GET', headers: { authorization: SHARED_KEY } })).toEqual({
      status: 405,
      allow: 'POST',
      type: 'application/json; charset=utf-8',
      body: { errors: [{ message: 'Method GET not allowed; send POST' }] },
    });
  });

  it('answers 415 for a body that is not application/json', async () => {
    expect(await send(target.endpoint, { headers: { ...authorized, 'content-type': 'text/plain' }, body: '[]' })).toMatchObject({
      status: 415,
      body: { errors: [{ message: 'Content-Type must be application/json' }] },
    });
    const withCharset = await send(target.endpoint, { headers: { ...authorized, 'content-type': 'application/json; charset=utf-8' }, body: '[]' });
    expect(withCharset.status).toBe(202);
  });

  it('answers 413 for a body over 1 MB', async () => {
    const big = JSON.stringify([{ kind: 'subgraph', subgraph: 'x'.repeat(1_000_001) }]);
    expect(await send(target.endpoint, { headers: authorized, body: big })).toMatchObject({
      status: 413,
      body: { errors: [{ message: 'Request body larger than 1000000 bytes' }] },
    });
  });

  it('answers 400 for malformed JSON and for a body that is not an array', async () => {
    const malformed = await send(target.endpoint, { headers: authorized, body: '[{"kind":' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toEqual({ errors: [{ message: expect.stringMatching(/^Malformed JSON: /) }] });
    expect(await send(target.endpoint, { headers: authorized, body: '{"kind":"subgraph","subgraph":"reviews"}' })).toMatchObject({
      status: 400,
      body: { errors: [{ message: 'The body must be a JSON array of invalidation elements' }] },
    });
  });

  it('answers 400 naming every bad element by index and kind', async () => {
    const elements = [
      'reviews',
      {},
      { kind: 'everything' },
      { kind: 'subgraph' },
      { kind: 'subgraph', subgraph: 'reviews', type: 'Product' },
      { kind: 'type', type: 'Product' },
      { kind: 'cache_tag', cache_tag: 'x' },
      { kind: 'cache_tag', subgraphs: [], cache_tag: 'x' },
      { kind: 'cache_tag', subgraphs: ['reviews', 'legacy'] },
      { kind: 'subgraph', subgraph: 'reviews' },
    ];
    expect(await send(target.endpoint, { headers: authorized, body: JSON.stringify(elements) })).toMatchObject({
      status: 400,
      body: {
        errors: [
          { index: 0, kind: 'unknown', message: 'an element must be a JSON object with a "kind"' },
          { index: 1, kind: 'unknown', message: '"kind" is required: one of subgraph, type, cache_tag' },
          { index: 2, kind: 'everything', message: 'unknown kind "everything"; expected one of subgraph, type, cache_tag' },
          { index: 3, kind: 'subgraph', message: '"subgraph" is required for kind subgraph: a subgraph name' },
          { index: 4, kind: 'subgraph', message: 'unknown field "type" for kind subgraph (it takes subgraph)' },
          { index: 5, kind: 'type', message: '"subgraph" is required for kind type: a subgraph name' },
          { index: 6, kind: 'cache_tag', message: '"subgraphs" is required for kind cache_tag: a non-empty list of subgraph names' },
          { index: 7, kind: 'cache_tag', message: '"subgraphs" is required for kind cache_tag: a non-empty list of subgraph names' },
          { index: 8, kind: 'cache_tag', message: '"cache_tag" is required for kind cache_tag: a tag' },
          { index: 8, kind: 'cache_tag', message: 'unknown subgraph "legacy"; the graph has products, reviews' },
        ],
      },
    });
  });

  it('lists the first 100 errors and counts the rest, however many elements are bad', async () => {
    // 400,000 bad elements in 800 KB: every error listed would make a 40 MB answer.
    const response = await fetch(target.endpoint, { method: 'POST', headers: authorized, body: JSON.stringify(Array(400_000).fill(1)) });
    const text = await response.text();
    expect(response.status).toBe(400);
    expect(text.length).toBeLessThan(20_000);
    const body = JSON.parse(text) as { errors: Array<{ index: number }>; errors_not_listed: number };
    expect(body.errors).toHaveLength(100);
    expect(body.errors[99]).toEqual({ index: 99, kind: 'unknown', message: 'an element must be a JSON object with a "kind"' });
    expect(body.errors_not_listed).toBe(399_900);
    // Up to 100 errors, the answer is as before.
    const few = await send(target.endpoint, { headers: authorized, body: JSON.stringify(Array(100).fill(1)) });
    expect(Object.keys(few.body)).toEqual(['errors']);
  });

  it('carries out a type element naming a type its subgraph lacks, and warns so the misspelling is noticed', async () => {
    const warning = 'Invalidation names types their subgraph does not have in the graph being served: check their spelling';
    const before = target.lines.length;
    expect(await target.invalidate([{ kind: 'type', subgraph: 'reviews', type: 'Product' }])).toEqual({ status: 202, body: { count: 0 } });
    expect(target.lines.slice(before).some((line) => line.msg === warning)).toBe(false);
    const elements = [
      { kind: 'type', subgraph: 'reviews', type: 'Prodcut' },
      { kind: 'type', subgraph: 'products', type: 'Review' },
      { kind: 'type', subgraph: 'reviews', type: 'Review' },
    ];
    expect(await target.invalidate(elements)).toEqual({ status: 202, body: { count: 0 } });
    expect(target.lines.slice(before).filter((line) => line.msg === warning)).toEqual([
      expect.objectContaining({ level: 'warn', plugin: 'response-cache', types: ['reviews.Prodcut', 'products.Review'], count: 2 }),
    ]);
  });

  it('refuses kinds whose index is switched off', async () => {
    const elements = [
      { kind: 'type', subgraph: 'reviews', type: 'Product' },
      { kind: 'cache_tag', subgraphs: ['reviews'], cache_tag: 'x' },
      { kind: 'subgraph', subgraph: 'reviews' },
    ];
    expect(await send(noTypes.endpoint, { headers: authorized, body: JSON.stringify(elements) })).toMatchObject({
      status: 400,
      body: {
        errors: [
          { index: 0, kind: 'type', message: 'invalidation by type is switched off (response_cache.invalidation.type: false)' },
          { index: 1, kind: 'cache_tag', message: 'invalidation by cache_tag is switched off (response_cache.invalidation.cache_tag: false)' },
        ],
      },
    });
  });

  it('is not part of the router listener', async () => {
    const response = await target.router.fetch('/invalidation', { method: 'POST', headers: authorized, body: '[]' });
    expect(response.status).toBe(404);
  });
});
