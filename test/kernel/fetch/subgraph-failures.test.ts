import { afterEach, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from '../library-subgraphs.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

async function graphWithPeople(people: Parameters<typeof peopleSubgraph>[0], config?: Parameters<typeof startTestRouter>[0]['config']) {
  const library = await startSubgraph(librarySubgraph());
  const broken: TestSubgraph = await startSubgraph(peopleSubgraph(people));
  const router: TestRouter = await startTestRouter({ subgraphs: [library, broken], config });
  open.push(router, library, broken);
  return { library, people: broken, router };
}

const query = '{ book(id: "b1") { title author { name } } }';

describe('when a subgraph fails', () => {
  it('answers with partial data and SUBGRAPH_REQUEST_FAILED when the subgraph is down', async () => {
    const { router, people } = await graphWithPeople({});
    await people.close();
    const response = await router.query(query);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ book: { title: 'Dune', author: { name: null } } });
    expect(response.body.errors).toEqual([expect.objectContaining({ path: ['book', 'author'], extensions: { code: 'SUBGRAPH_REQUEST_FAILED', serviceName: 'people' } })]);
  });

  it('reports SUBGRAPH_REQUEST_FAILED for an HTTP 500 without a GraphQL body', async () => {
    const { router } = await graphWithPeople({ reply: () => ({ status: 500, body: 'oops' }) });
    const response = await router.query(query);
    expect(response.body.data).toEqual({ book: { title: 'Dune', author: { name: null } } });
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'SUBGRAPH_REQUEST_FAILED', serviceName: 'people' });
    expect(response.body.errors?.[0]?.message).toContain('HTTP 500');
  });

  it('reports SUBGRAPH_INVALID_RESPONSE for a body that is not JSON', async () => {
    const { router } = await graphWithPeople({ reply: () => ({ body: '<html>not json</html>' }) });
    const response = await router.query(query);
    expect(response.body.data).toEqual({ book: { title: 'Dune', author: { name: null } } });
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'people' });
  });

  it('reports SUBGRAPH_INVALID_RESPONSE when _entities has the wrong length, merging nothing', async () => {
    const { router } = await graphWithPeople({ reply: () => ({ body: JSON.stringify({ data: { _entities: [{ name: 'x' }, { name: 'y' }] } }) }) });
    const response = await router.query(query);
    expect(response.body.data).toEqual({ book: { title: 'Dune', author: { name: null } } });
    expect(response.body.errors?.[0]).toEqual(expect.objectContaining({ path: ['book', 'author'], extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'people' } }));
  });

  it('gives up after the configured timeout with SUBGRAPH_TIMEOUT', async () => {
    const { router } = await graphWithPeople({ delayMs: 2000 }, { traffic_shaping: { subgraphs: { people: { request_timeout: '150ms' } } } });
    const started = Date.now();
    const response = await router.query(query);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(response.body.data).toEqual({ book: { title: 'Dune', author: { name: null } } });
    expect(response.body.errors?.[0]?.extensions).toEqual({ code: 'SUBGRAPH_TIMEOUT', serviceName: 'people' });
  });

  it('keeps serving after a failure once the subgraph answers again', async () => {
    let fail = true;
    const { router } = await graphWithPeople({ reply: () => (fail ? { status: 503, body: '' } : undefined) });
    expect((await router.query(query)).body.errors).toBeDefined();
    fail = false;
    expect((await router.query(query)).body).toEqual({ data: { book: { title: 'Dune', author: { name: 'Frank Herbert' } } } });
  });
});
