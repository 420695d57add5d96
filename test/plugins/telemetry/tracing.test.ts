import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { useTelemetry, type TelemetryOptions } from '../../../plugins/telemetry/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { productsSubgraph, reviewsSubgraph, TOP_PRODUCTS, TOP_PRODUCTS_DATA, usersSubgraph } from './fixtures.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;
const ERROR = 2;

let products: TestSubgraph;
let reviews: TestSubgraph;
let users: TestSubgraph;
let receiver: OtlpReceiver;

beforeAll(async () => {
  [products, reviews, users, receiver] = await Promise.all([
    startSubgraph(productsSubgraph()),
    startSubgraph(reviewsSubgraph()),
    startSubgraph(usersSubgraph()),
    startOtlpReceiver(),
  ]);
});

afterAll(async () => {
  await Promise.all([products.close(), reviews.close(), users.close(), receiver.close()]);
});

beforeEach(() => {
  receiver.reset();
  receiver.mode = 'ok';
  for (const subgraph of [products, reviews, users]) subgraph.reset();
});

type TracingOptions = NonNullable<Exclude<TelemetryOptions, undefined>['tracing']>;

function tracing(extra: TracingOptions = {}, endpoint = receiver.endpoint): TelemetryOptions {
  return { service_name: 'router-under-test', tracing: { enabled: true, exporters: [{ endpoint, batch_timeout: '20ms' }], ...extra } };
}

function startRouter(
  options: TelemetryOptions,
  subgraphs: TestSubgraph[] = [products, reviews, users],
  more: Parameters<typeof startTestRouter>[0]['plugins'] = [],
): Promise<TestRouter> {
  return startTestRouter({ subgraphs, plugins: [useTelemetry(options), ...(more ?? [])] });
}

function traceparent(traceId: string, parentId: string, sampled = true): string {
  return `00-${traceId}-${parentId}-${sampled ? '01' : '00'}`;
}

function newIds(): { traceId: string; parentId: string } {
  return { traceId: randomBytes(16).toString('hex'), parentId: randomBytes(8).toString('hex') };
}

function byName(spans: readonly ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((s) => s.name === name);
  expect(found, `one span named ${name} in ${spans.map((s) => s.name).join(', ')}`).toHaveLength(1);
  return found[0]!;
}

describe('telemetry: traces', () => {
  it('exports the span tree of an operation crossing three subgraphs, continuing the client trace', async () => {
    const router = await startRouter(tracing());
    const { traceId, parentId } = newIds();
    try {
      const response = await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(traceId, parentId), 'graphql-client-name': 'web' } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: TOP_PRODUCTS_DATA });

      const spans = (await receiver.waitForSpans((all) => all.filter((s) => s.traceId === traceId).length >= 8)).filter((s) => s.traceId === traceId);
      expect(spans.map((s) => s.name).sort()).toEqual(['execute', 'fetch products', 'fetch reviews', 'fetch users', 'parse', 'plan', 'query TopProducts', 'validate'].sort());
      const server = byName(spans, 'query TopProducts');
      expect(server.kind).toBe(SERVER);
      expect(server.parentSpanId).toBe(parentId);
      expect(server.resource['service.name']).toBe('router-under-test');
      expect(server.scope).toBe('switchyard');
      expect(server.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.response.status_code': 200,
        'http.route': '/graphql',
        'graphql.operation.name': 'TopProducts',
        'graphql.operation.type': 'query',
        'switchyard.operation.hash': createHash('sha256').update(TOP_PRODUCTS).digest('hex'),
        'switchyard.client.name': 'web',
      });
      expect(server.attributes['graphql.document']).toBeUndefined();
      expect(server.status.code).not.toBe(ERROR);

      for (const name of ['parse', 'validate', 'plan', 'execute']) {
        const child = byName(spans, name);
        expect(child.kind).toBe(INTERNAL);
        expect(child.parentSpanId).toBe(server.spanId);
        expect(child.startNs >= server.startNs && child.endNs <= server.endNs).toBe(true);
      }
      const execute = byName(spans, 'execute');
      const fetches = [products, reviews, users].map((subgraph) => {
        const span = byName(spans, `fetch ${subgraph.name}`);
        expect(span.kind).toBe(CLIENT);
        expect(span.parentSpanId).toBe(execute.spanId);
        expect(span.attributes).toMatchObject({
          'switchyard.subgraph.name': subgraph.name,
          'url.full': subgraph.url,
          'server.address': '127.0.0.1',
          'server.port': Number(new URL(subgraph.url).port),
          'http.request.method': 'POST',
        });
        // The subgraph saw the fetch span as its parent, in the client's trace.
        expect(subgraph.calls).toHaveLength(1);
        expect(subgraph.calls[0]!.headers.traceparent).toBe(traceparent(traceId, span.spanId));
        return span;
      });
      // products -> reviews -> users: each call starts after the one before ended.
      expect(fetches[1]!.startNs >= fetches[0]!.endNs).toBe(true);
      expect(fetches[2]!.startNs >= fetches[1]!.endNs).toBe(true);
      expect(fetches[1]!.attributes).toMatchObject({ 'switchyard.fetch.kind': 'entity', 'switchyard.fetch.entities': 2 });
    } finally {
      await router.close();
    }
  });

  it('sends tracestate on and adds graphql.document only when asked', async () => {
    const router = await startRouter(tracing({ include_document: true }));
    const { traceId, parentId } = newIds();
    try {
      await router.query({ query: '{ topProducts { upc } }', headers: { traceparent: traceparent(traceId, parentId), tracestate: 'vendor=abc' } });
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === traceId && s.kind === SERVER));
      const server = spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
      expect(server.name).toBe('query');
      expect(server.attributes['graphql.document']).toBe('{ topProducts { upc } }');
      expect(products.calls[0]!.headers.tracestate).toBe('vendor=abc');
    } finally {
      await router.close();
    }
  });

  it('sampling 1 starts a new sampled trace when the client sends none', async () => {
    const router = await startRouter(tracing({ sampling_rate: 1 }));
    try {
      await router.query(TOP_PRODUCTS);
      const sent = products.calls[0]!.headers.traceparent;
      expect(sent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
      const traceId = sent!.split('-')[1]!;
      const spans = await receiver.waitForSpans((all) => all.filter((s) => s.traceId === traceId).length >= 8);
      const server = spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
      expect(server.parentSpanId).toBe('');
      expect(reviews.calls[0]!.headers.traceparent!.split('-')[1]).toBe(traceId);
      expect(users.calls[0]!.headers.traceparent!.split('-')[1]).toBe(traceId);
    } finally {
      await router.close();
    }
  });

  it('sampling 0 records nothing and sends no trace context of its own, but follows a sampled client (parent-based)', async () => {
    const router = await startRouter(tracing({ sampling_rate: 0 }));
    const sampled = newIds();
    const unsampled = newIds();
    try {
      for (let i = 0; i < 5; i++) expect((await router.query(TOP_PRODUCTS)).body).toEqual({ data: TOP_PRODUCTS_DATA });
      expect(products.calls.every((call) => call.headers.traceparent === undefined)).toBe(true);

      // A client that did not sample: its decision travels on, nothing is recorded.
      products.reset();
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(unsampled.traceId, unsampled.parentId, false) } });
      expect(products.calls[0]!.headers.traceparent).toMatch(new RegExp(`^00-${unsampled.traceId}-[0-9a-f]{16}-00$`));

      // A client that sampled: the router follows it.
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(sampled.traceId, sampled.parentId) } });
    } finally {
      await router.close(); // flushes what is queued
    }
    expect(receiver.spans.length).toBeGreaterThan(0);
    expect(new Set(receiver.spans.map((s) => s.traceId))).toEqual(new Set([sampled.traceId]));
  });

  it('says on the operation and plan spans whether the plan came from the plan cache, also after an unsampled first run', async () => {
    const router = await startRouter(tracing({ sampling_rate: 0 }));
    const [second, namesFirst, namesAgain] = [newIds(), newIds(), newIds()];
    try {
      // Not sampled, but it plans (and fills the plan cache) all the same.
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(newIds().traceId, newIds().parentId, false) } });
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(second.traceId, second.parentId) } });
      const NAMES = '{ topProducts { name } }';
      await router.query({ query: NAMES, headers: { traceparent: traceparent(namesFirst.traceId, namesFirst.parentId) } });
      await router.query({ query: NAMES, headers: { traceparent: traceparent(namesAgain.traceId, namesAgain.parentId) } });
    } finally {
      await router.close();
    }
    const planCacheHit = (ids: { traceId: string }) => {
      const spans = receiver.spans.filter((s) => s.traceId === ids.traceId);
      return [spans.find((s) => s.kind === SERVER)!.attributes['switchyard.plan_cache_hit'], byName(spans, 'plan').attributes['switchyard.plan_cache_hit']];
    };
    expect(planCacheHit(second)).toEqual([true, true]);
    expect(planCacheHit(namesFirst)).toEqual([false, false]);
    expect(planCacheHit(namesAgain)).toEqual([true, true]);
  });

  it('ignores the client trace when parent_based_sampler is false', async () => {
    const router = await startRouter(tracing({ sampling_rate: 0, parent_based_sampler: false }));
    const { traceId, parentId } = newIds();
    try {
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(traceId, parentId) } });
    } finally {
      await router.close();
    }
    expect(receiver.spans).toHaveLength(0);
  });

  it('records a failing subgraph on its fetch span, with the exception, and still answers with partial data', async () => {
    const broken = await startSubgraph(usersSubgraph({ reply: () => ({ status: 502, body: 'bad gateway' }) }));
    const router = await startRouter(tracing(), [products, reviews, broken]);
    const { traceId, parentId } = newIds();
    try {
      const response = await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(traceId, parentId) } });
      expect(response.status).toBe(200);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
      const spans = (await receiver.waitForSpans((all) => all.filter((s) => s.traceId === traceId).length >= 8)).filter((s) => s.traceId === traceId);
      const failed = byName(spans, 'fetch users');
      expect(failed.status.code).toBe(ERROR);
      expect(failed.status.message).toMatch(/HTTP 502/);
      expect(failed.attributes).toMatchObject({ 'error.type': 'SUBGRAPH_REQUEST_FAILED', 'http.response.status_code': 502 });
      expect(failed.events.find((e) => e.name === 'exception')?.attributes['exception.message']).toMatch(/HTTP 502/);
      expect(byName(spans, 'fetch products').status.code).not.toBe(ERROR);
      expect(byName(spans, 'fetch reviews').status.code).not.toBe(ERROR);
    } finally {
      await router.close();
      await broken.close();
    }
  });

  it('marks a fetch whose subgraph answered GraphQL errors, and a parse error on the parse span', async () => {
    const erring = await startSubgraph(
      usersSubgraph({
        resolvers: {
          User: {
            __resolveReference: () => {
              throw new Error('users are asleep');
            },
          },
        },
      }),
    );
    const router = await startRouter(tracing(), [products, reviews, erring]);
    const first = newIds();
    const second = newIds();
    try {
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(first.traceId, first.parentId) } });
      const parsed = await router.query({ query: '{ topProducts {', headers: { traceparent: traceparent(second.traceId, second.parentId) } });
      expect(parsed.status).toBe(400);
      const spans = await receiver.waitForSpans(
        (all) => all.some((s) => s.traceId === second.traceId && s.kind === SERVER) && all.filter((s) => s.traceId === first.traceId).length >= 8,
      );
      const fetchUsers = byName(
        spans.filter((s) => s.traceId === first.traceId),
        'fetch users',
      );
      expect(fetchUsers.status.code).toBe(ERROR);
      expect(fetchUsers.events.some((e) => e.name === 'exception' && String(e.attributes['exception.message']).includes('users are asleep'))).toBe(true);

      const failedParse = spans.filter((s) => s.traceId === second.traceId);
      const parse = byName(failedParse, 'parse');
      expect(parse.status.code).toBe(ERROR);
      expect(parse.events.some((e) => e.name === 'exception')).toBe(true);
      const server = failedParse.find((s) => s.kind === SERVER)!;
      expect(server.name).toBe('POST /graphql');
      expect(server.attributes['http.response.status_code']).toBe(400);
      expect(failedParse.some((s) => s.name === 'plan')).toBe(false);
    } finally {
      await router.close();
      await erring.close();
    }
  });

  it('tells cache hits and misses apart on fetch spans and the operation span', async () => {
    const cacheable = { reply: () => ({ headers: { 'cache-control': 'max-age=60' } }) };
    const cached3 = await Promise.all([startSubgraph(productsSubgraph(cacheable)), startSubgraph(reviewsSubgraph(cacheable)), startSubgraph(usersSubgraph(cacheable))]);
    const router = await startRouter(tracing(), cached3, [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })]);
    const miss = newIds();
    const hit = newIds();
    try {
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(miss.traceId, miss.parentId) } });
      await router.query({ query: TOP_PRODUCTS, headers: { traceparent: traceparent(hit.traceId, hit.parentId) } });
      const spans = await receiver.waitForSpans((all) => all.filter((s) => s.traceId === hit.traceId).length >= 8 && all.filter((s) => s.traceId === miss.traceId).length >= 8);
      const missed = spans.filter((s) => s.traceId === miss.traceId);
      const cached = spans.filter((s) => s.traceId === hit.traceId);
      expect(byName(missed, 'fetch products').attributes['switchyard.response_cache.status']).toBe('miss');
      const hitFetch = byName(cached, 'fetch products');
      expect(hitFetch.attributes).toMatchObject({ 'switchyard.response_cache.status': 'hit', 'switchyard.fetch.answered_by': 'response-cache' });
      expect(cached.find((s) => s.kind === SERVER)!.attributes).toMatchObject({ 'switchyard.response_cache.hits': 3, 'switchyard.response_cache.misses': 0 });
      expect(missed.find((s) => s.kind === SERVER)!.attributes).toMatchObject({ 'switchyard.response_cache.hits': 0, 'switchyard.response_cache.misses': 3 });
      expect(cached3[0]!.calls).toHaveLength(1);
    } finally {
      await router.close();
      await Promise.all(cached3.map((s) => s.close()));
    }
  });

  it('records persisted-operation lookups on the operation span', async () => {
    const router = await startRouter(tracing());
    const { traceId, parentId } = newIds();
    try {
      const response = await router.query({
        extensions: { persistedQuery: { version: 1, sha256Hash: 'a'.repeat(64) } },
        headers: { traceparent: traceparent(traceId, parentId) },
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === traceId && s.kind === SERVER));
      const server = spans.find((s) => s.traceId === traceId && s.kind === SERVER)!;
      const lookup = server.events.find((e) => e.name === 'persisted_operation.lookup');
      expect(lookup?.attributes).toEqual({ 'switchyard.persisted_operation.id': 'a'.repeat(64), 'switchyard.persisted_operation.found': false });
    } finally {
      await router.close();
    }
  });
});
