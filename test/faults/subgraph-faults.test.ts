import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../kernel/library-subgraphs.js';
import { startFaultySubgraph, type Fault, type FaultySubgraph } from './fault-subgraph.js';

let library: TestSubgraph;
let healthyPeople: TestSubgraph;
let people: FaultySubgraph;
let router: TestRouter;

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  healthyPeople = await startSubgraph(peopleSubgraph());
  people = await startFaultySubgraph(healthyPeople.url);
  router = await startTestRouter({
    subgraphs: [library, { name: 'people', url: people.url, typeDefs: healthyPeople.typeDefs }],
    listen: true,
    config: { traffic_shaping: { subgraphs: { people: { request_timeout: '300ms', max_response_body: '1MiB', retry: { enabled: false } } } } },
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([people?.close(), library?.close(), healthyPeople?.close()]);
});

const QUERY = '{ book(id: "b2") { title author { name } } }';
const HEALTHY = { data: { book: { title: 'Emma', author: { name: 'Jane Austen' } } } };
const PARTIAL = { book: { title: 'Emma', author: { name: null } } };

/** Runs `count` requests, `concurrency` at a time; returns every response. */
async function load(count: number, concurrency = 8) {
  const responses: Array<Awaited<ReturnType<TestRouter['query']>>> = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next++;
        responses.push(await router.query(QUERY));
      }
    }),
  );
  return responses;
}

const cases: Array<{ name: string; fault: Fault; code: string }> = [
  { name: 'hangs', fault: { kind: 'hang' }, code: 'SUBGRAPH_TIMEOUT' },
  { name: 'answers slower than its timeout', fault: { kind: 'slow', ms: 1000 }, code: 'SUBGRAPH_TIMEOUT' },
  { name: 'closes the connection mid-body', fault: { kind: 'cut-mid-body' }, code: 'SUBGRAPH_REQUEST_FAILED' },
  { name: 'answers 500', fault: { kind: 'status', status: 500 }, code: 'SUBGRAPH_REQUEST_FAILED' },
  { name: 'answers 502', fault: { kind: 'status', status: 502 }, code: 'SUBGRAPH_REQUEST_FAILED' },
  { name: 'answers 503', fault: { kind: 'status', status: 503 }, code: 'SUBGRAPH_REQUEST_FAILED' },
  { name: 'answers invalid JSON', fault: { kind: 'invalid-json' }, code: 'SUBGRAPH_INVALID_RESPONSE' },
];

describe('a subgraph that fails under load', () => {
  for (const { name, fault, code } of cases) {
    it(`${name}: every request gets the other subgraph's data and ${code}, then the router recovers by itself`, async () => {
      people.fault = fault;
      const responses = await load(24);
      for (const response of responses) {
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual(PARTIAL);
        expect(response.body.errors?.[0]?.extensions).toEqual({ code, serviceName: 'people' });
      }
      people.fault = { kind: 'none' };
      for (const response of await load(8)) expect(response.body).toEqual(HEALTHY);
    });
  }

  it('refuses an enormous body without buffering it all, and keeps memory bounded', async () => {
    global.gc?.();
    const before = process.memoryUsage().rss;
    people.fault = { kind: 'huge-body', bytes: 80 * 1024 * 1024 };
    const response = await router.query(QUERY);
    expect(response.body.data).toEqual(PARTIAL);
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'people' });
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    people.fault = { kind: 'none' };
    expect((await router.query(QUERY)).body).toEqual(HEALTHY);
  });
});
