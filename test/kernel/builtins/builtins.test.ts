/**
 * The kernel's built-in features as internal plugins (src/kernel/builtins/):
 * registered ahead of user plugins only when on, left out of the plugin
 * list, and seen by user hooks as before.
 */
import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueryPlan, SwitchyardPlugin } from '../../../src/index.js';
import type { RequestTraceJSON } from '../../../src/kernel/router/request-trace.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { eventually, onCleanup, setupSubscriptions, SUBSCRIPTION } from '../../subscriptions/fixtures.js';
import { librarySubgraph } from '../library-subgraphs.js';

const PLAN = { 'x-switchyard-include-query-plan': 'true' };
const TRACE = { 'x-switchyard-include-trace': 'true' };

let library: TestSubgraph;
beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
});
afterAll(async () => {
  await library?.close();
});

type HostView = { host: { stageHooks: Record<string, Array<{ plugin: string }>> } };

describe('built-in features as internal plugins', () => {
  it('hook in ahead of user plugins, only while plans may be shown, and stay out of the plugin list', async () => {
    const user: SwitchyardPlugin = { name: 'user', setup: () => ({ hooks: { onRequest() {}, onPlan() {}, onFetch() {}, onRespond() {} } }) };
    // The other built-ins off (see below): only the plan's.
    const others = { limits: { max_fields: 0 }, engine: { enable_single_flight: false }, traffic_shaping: { all: { retry: { enabled: false } } } };
    const shown = await startTestRouter({ subgraphs: [library], plugins: [user], config: others });
    const hooks = (shown.router as unknown as HostView).host.stageHooks;
    expect(hooks.request!.map((h) => h.plugin)).toEqual(['switchyard/request-trace', 'switchyard/query-plan', 'user']);
    expect(hooks.plan!.map((h) => h.plugin)).toEqual(['switchyard/request-trace', 'switchyard/query-plan', 'user']);
    expect(hooks.fetch!.map((h) => h.plugin)).toEqual(['switchyard/request-trace', 'user']);
    expect(hooks.respond!.map((h) => h.plugin)).toEqual(['switchyard/query-plan', 'user']);
    expect(hooks.parse).toEqual([]);
    expect(shown.router.plugins).toEqual(['user']);
    await shown.close();

    const hidden = await startTestRouter({ subgraphs: [library], plugins: [user], config: { ...others, introspection: { enabled: false } } });
    const none = (hidden.router as unknown as HostView).host.stageHooks;
    expect(
      Object.values(none)
        .flat()
        .map((h) => h.plugin),
    ).toEqual(['user', 'user', 'user', 'user']);
    const response = await hidden.query({ query: '{ books { id } }', headers: { ...PLAN, ...TRACE } });
    expect(response.body.extensions).toBeUndefined();
    await hidden.close();
  });

  it('shows the plan to user respond hooks, and the plan a plugin answered with', async () => {
    const seen: unknown[] = [];
    let substitute: QueryPlan | undefined;
    const planner: SwitchyardPlugin = {
      name: 'planner',
      setup: () => ({
        hooks: {
          onPlan(event) {
            if (substitute) event.respondWith(substitute);
            else return (after) => void (substitute = after.output);
          },
          onRespond(event) {
            seen.push(event.input.body.extensions?.queryPlan);
          },
        },
      }),
    };
    const router = await startTestRouter({ subgraphs: [library], plugins: [planner] });
    const first = await router.query({ query: '{ books { id } }', headers: PLAN });
    expect(first.body.data).toBeDefined();
    expect(first.body.extensions!.queryPlan).toMatchObject({ kind: 'QueryPlan' });
    expect(seen[0]).toEqual(first.body.extensions!.queryPlan);
    // The plugin answers the plan stage now: the answer shows its plan, and the trace says no cache was involved.
    const second = await router.query({ query: '{ books { title } }', headers: { ...PLAN, ...TRACE } });
    expect(second.body.extensions!.queryPlan).toEqual(first.body.extensions!.queryPlan);
    expect((second.body.extensions!.trace as RequestTraceJSON).plan).toMatchObject({ cacheHit: null });
    await router.close();
  });

  it('honours only the exact header value, and shows no plan for a request that failed before planning', async () => {
    const router = await startTestRouter({ subgraphs: [library] });
    for (const value of ['TRUE', '1', 'yes', '']) {
      const response = await router.query({ query: '{ books { id } }', headers: { 'x-switchyard-include-query-plan': value, 'x-switchyard-include-trace': value } });
      expect(response.status).toBe(200);
      expect(response.body.extensions).toBeUndefined();
    }
    const invalid = await router.query({ query: '{ nope }', headers: { ...PLAN, ...TRACE } });
    expect(invalid.status).toBe(400);
    expect(invalid.body.extensions!.queryPlan).toBeUndefined();
    expect((invalid.body.extensions!.trace as RequestTraceJSON).plan).toBeNull();
    await router.close();
  });
});

describe('built-ins and subscriptions', () => {
  it('leave a subscription streaming when it asks for the plan and the trace: its events carry neither', async () => {
    const setup = await setupSubscriptions();
    const client = createClient({ url: `${setup.url}/graphql`, retryAttempts: 0, headers: { ...PLAN, ...TRACE } });
    onCleanup(() => client.dispose());
    const events: unknown[] = [];
    const state = { completed: false, error: undefined as unknown };
    client.subscribe(
      { query: SUBSCRIPTION },
      { next: (value) => void events.push(value), error: (error) => void (state.error = error), complete: () => void (state.completed = true) },
    );
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push({ id: 'r2', body: 'Wobbly', upc: 'p2' });
    await eventually(() => events.length === 2);
    expect(events).toEqual([
      { data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: { upc: 'p1', name: 'Table', price: 100 } } } },
      { data: { reviewAdded: { id: 'r2', body: 'Wobbly', product: { upc: 'p2', name: 'Chair', price: 50 } } } },
    ]);
    setup.reviews.push('end');
    await eventually(() => state.completed);
    expect(state.error).toBeUndefined();
  });
});
