/**
 * `X-Switchyard-Include-Trace: true` -> `extensions.trace`: what the
 * playground's plan-and-trace panel draws. Real subgraphs on loopback
 * (products -> reviews -> users), the response cache in front of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../plugins/response-cache/index.js';
import type { RequestTraceJSON } from '../../src/kernel/router/request-trace.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { productsSubgraph, reviewsSubgraph, TOP_PRODUCTS, TOP_PRODUCTS_DATA, usersSubgraph } from '../plugins/telemetry/fixtures.js';

const TRACE = { 'x-switchyard-include-trace': 'true' };

let subgraphs: TestSubgraph[] = [];
let usersFail = false;
/** The users subgraph answers with an error whose message holds a secret. */
let usersLeak = false;
const SECRET_ERROR = JSON.stringify({
  data: { _entities: [null, null] },
  errors: [{ message: 'DB password=hunter2 at 10.0.0.5', path: ['_entities', 0, 'username'], extensions: { code: 'INTERNAL', stack: 'at db.ts:1' } }],
});

beforeAll(async () => {
  const cacheable = { reply: () => ({ headers: { 'cache-control': 'max-age=60' } }) };
  subgraphs = await Promise.all([
    startSubgraph(productsSubgraph({ ...cacheable, delayMs: 20 })),
    startSubgraph(reviewsSubgraph({ ...cacheable, delayMs: 10 })),
    startSubgraph(
      usersSubgraph({
        reply: () => (usersFail ? { status: 503, body: 'down' } : usersLeak ? { body: SECRET_ERROR } : { headers: { 'cache-control': 'max-age=60' } }),
      }),
    ),
  ]);
});

afterAll(async () => {
  await Promise.all(subgraphs.map((s) => s.close()));
});

async function withRouter(
  options: Parameters<typeof startTestRouter>[0] extends infer O ? Omit<O & object, 'subgraphs'> : never,
  body: (router: TestRouter) => Promise<void>,
): Promise<void> {
  const router = await startTestRouter({ subgraphs, ...options });
  try {
    await body(router);
  } finally {
    await router.close();
  }
}

function traceOf(body: { extensions?: Record<string, unknown> }): RequestTraceJSON {
  return body.extensions!.trace as RequestTraceJSON;
}

describe('extensions.trace', () => {
  it('times planning and each subgraph call, in order, with the plan cache seen on the second run', async () => {
    await withRouter({}, async (router) => {
      const first = await router.query({ query: TOP_PRODUCTS, headers: { ...TRACE, 'x-switchyard-include-query-plan': 'true' } });
      expect(first.status).toBe(200);
      expect(first.body.data).toEqual(TOP_PRODUCTS_DATA);
      const trace = traceOf(first.body);
      expect(trace.plan).toMatchObject({ cacheHit: false });
      expect(trace.fetches.map((f) => [f.subgraph, f.kind, f.sent, f.entities])).toEqual([
        ['products', 'root', true, undefined],
        ['reviews', 'entity', true, { requested: 2, sent: 2 }],
        ['users', 'entity', true, { requested: 2, sent: 2 }],
      ]);
      // The ids are those of the plan's fetch nodes.
      const plan = JSON.stringify(first.body.extensions!.queryPlan);
      for (const fetch of trace.fetches) expect(plan).toContain(`"id":${fetch.fetchId},"subgraph":"${fetch.subgraph}"`);
      // Sequential calls: each starts once the one before ended, and the subgraph's delay shows in the duration.
      for (let i = 1; i < trace.fetches.length; i++) {
        const before = trace.fetches[i - 1]!;
        expect(trace.fetches[i]!.startMs).toBeGreaterThanOrEqual(before.startMs + before.durationMs);
      }
      expect(trace.fetches[0]!.durationMs).toBeGreaterThanOrEqual(19);
      expect(trace.plan!.startMs + trace.plan!.durationMs).toBeLessThanOrEqual(trace.fetches[0]!.startMs);
      const last = trace.fetches.at(-1)!;
      expect(trace.durationMs).toBeGreaterThanOrEqual(last.startMs + last.durationMs);

      const second = await router.query({ query: TOP_PRODUCTS, headers: TRACE });
      expect(traceOf(second.body).plan).toMatchObject({ cacheHit: true });
      // Only what was asked for: no plan without its header.
      expect(Object.keys(second.body.extensions!)).toEqual(['trace']);
    });
  });

  it('says which fetches the response cache answered without sending them', async () => {
    await withRouter({ plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })] }, async (router) => {
      const miss = traceOf((await router.query({ query: TOP_PRODUCTS, headers: TRACE })).body);
      expect(miss.fetches.map((f) => f.sent)).toEqual([true, true, true]);
      const hit = traceOf((await router.query({ query: TOP_PRODUCTS, headers: TRACE })).body);
      expect(hit.fetches.map((f) => [f.subgraph, f.sent])).toEqual([
        ['products', false],
        ['reviews', false],
        ['users', false],
      ]);
      expect(hit.fetches[1]!.entities).toEqual({ requested: 2, sent: 0 });
    });
  });

  it('records a failed call with its error code and message', async () => {
    await withRouter({}, async (router) => {
      usersFail = true;
      try {
        const response = await router.query({ query: TOP_PRODUCTS, headers: TRACE });
        expect(response.status).toBe(200);
        expect(response.body.errors).toBeDefined();
        const users = traceOf(response.body).fetches.find((f) => f.subgraph === 'users')!;
        expect(users.failure).toBe('SUBGRAPH_REQUEST_FAILED');
        expect(users.errors![0]).toMatch(/503/);
        // The subgraph was asked (it answered 503): the panel must not say the router answered in its place.
        expect(users.sent).toBe(true);
      } finally {
        usersFail = false;
      }
    });
  });

  it("shows a subgraph's error messages only as far as subgraph_error_propagation shows them in the response", async () => {
    const usersErrorsIn = async (router: TestRouter) => {
      const response = await router.query({ query: TOP_PRODUCTS, headers: TRACE });
      const { extensions, ...rest } = response.body;
      return { response: JSON.stringify(rest), trace: traceOf(response.body).fetches.find((f) => f.subgraph === 'users')!.errors };
    };
    usersLeak = true;
    try {
      await withRouter({}, async (router) => {
        const { response, trace } = await usersErrorsIn(router);
        expect(response).toContain('hunter2');
        expect(trace).toEqual(['DB password=hunter2 at 10.0.0.5']);
      });
      await withRouter({ config: { subgraph_error_propagation: { mode: 'wrapped' } } }, async (router) => {
        expect((await usersErrorsIn(router)).trace).toEqual(['DB password=hunter2 at 10.0.0.5']);
      });
      await withRouter({ config: { subgraph_error_propagation: { enabled: false } } }, async (router) => {
        const { response, trace } = await usersErrorsIn(router);
        expect(response).not.toContain('hunter2');
        // The trace says what the response says: the fetch failed, nothing of the subgraph's text.
        expect(trace).toEqual(["Failed to fetch from Subgraph 'users'."]);
      });
    } finally {
      usersLeak = false;
    }
  });

  it('traces requests that end before planning, with no plan and no fetch', async () => {
    await withRouter({}, async (router) => {
      const response = await router.query({ query: '{ topProducts { nope } }', headers: TRACE });
      expect(response.status).toBe(400);
      expect(traceOf(response.body)).toMatchObject({ plan: null, fetches: [] });
    });
  });

  it('is absent without the header, with another value, and where query_plans.enabled is false', async () => {
    await withRouter({}, async (router) => {
      expect((await router.query({ query: TOP_PRODUCTS })).body.extensions).toBeUndefined();
      expect((await router.query({ query: TOP_PRODUCTS, headers: { 'x-switchyard-include-trace': 'yes' } })).body.extensions).toBeUndefined();
    });
    await withRouter({ config: { query_plans: { enabled: false } } }, async (router) => {
      const response = await router.query({ query: TOP_PRODUCTS, headers: TRACE });
      expect(response.body.data).toEqual(TOP_PRODUCTS_DATA);
      expect(response.body.extensions).toBeUndefined();
    });
    // Introspection off turns plans (and so traces) off unless query_plans says otherwise.
    await withRouter({ config: { introspection: { enabled: false } } }, async (router) => {
      expect((await router.query({ query: TOP_PRODUCTS, headers: TRACE })).body.extensions).toBeUndefined();
    });
  });
});
