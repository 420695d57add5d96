import { afterEach, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((o) => o.close()));
});

/** A library subgraph that answers 503 to its first `failures` calls. */
async function flakyLibrary(failures: number, config?: Parameters<typeof startTestRouter>[0]['config']) {
  let left = failures;
  const library = await startSubgraph(librarySubgraph({ reply: () => (left-- > 0 ? { status: 503, body: 'busy' } : undefined) }));
  const router = await startTestRouter({ subgraphs: [library], config });
  open.push(router, library);
  return { library, router };
}

describe('subgraph retries', () => {
  it('retries a query that got 503 and answers from the next attempt', async () => {
    const { library, router } = await flakyLibrary(2);
    const response = await router.query('{ book(id: "b1") { title } }');
    expect(response.body).toEqual({ data: { book: { title: 'Dune' } } });
    expect(library.calls).toHaveLength(3);
  });

  it('gives up after max_attempts with the last error', async () => {
    const { library, router } = await flakyLibrary(10, { traffic_shaping: { all: { retry: { max_attempts: 2 } } } });
    const response = await router.query('{ book(id: "b1") { title } }');
    expect(response.body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    expect(library.calls).toHaveLength(2);
  });

  it('never retries a mutation', async () => {
    const { library, router } = await flakyLibrary(1);
    const response = await router.query('mutation { addBook(title: "Once") { id } }');
    expect(response.body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    expect(library.calls).toHaveLength(1);
  });

  it('can be switched off', async () => {
    const { library, router } = await flakyLibrary(1, { traffic_shaping: { all: { retry: { enabled: false } } } });
    expect((await router.query('{ books { id } }')).body.errors).toBeDefined();
    expect(library.calls).toHaveLength(1);
  });
});

describe('the circuit breaker', () => {
  it('opens after repeated failures, fails fast with SUBGRAPH_CIRCUIT_OPEN, and closes after the cooldown', async () => {
    const { library, router } = await flakyLibrary(3, {
      traffic_shaping: { all: { retry: { enabled: false }, circuit_breaker: { enabled: true, failure_threshold: 3, cooldown: '300ms' } } },
    });
    for (let i = 0; i < 3; i++) expect((await router.query('{ books { id } }')).body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    const fast = await router.query('{ books { id } }');
    expect(fast.body.errors?.[0]?.extensions).toEqual({ code: 'SUBGRAPH_CIRCUIT_OPEN', serviceName: 'library' });
    expect(library.calls).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await router.query('{ books { id } }')).body.data).toEqual({ books: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }] });
    expect(library.calls).toHaveLength(4);
  });
});
