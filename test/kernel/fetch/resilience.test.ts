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

describe("a plugin transport's plain errors", () => {
  /** A router whose `graphql` subgraphs go through a plugin transport failing with `failure` on every call. */
  async function routerFailingWith(failure: () => Error) {
    let calls = 0;
    const library = await startSubgraph(librarySubgraph());
    const plugin = {
      name: 'failing-transport',
      setup: () => ({
        transports: {
          graphql: () => async () => {
            calls++;
            throw failure();
          },
        },
      }),
    };
    const router = await startTestRouter({
      subgraphs: [library],
      plugins: [plugin],
      config: { traffic_shaping: { all: { retry: { max_attempts: 2 }, circuit_breaker: { enabled: true, failure_threshold: 2, cooldown: '10s' } } } },
    });
    open.push(router, library);
    return { router, calls: () => calls };
  }

  it('count for retries and the circuit breaker when they carry a network failure code', async () => {
    const { router, calls } = await routerFailingWith(() => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    expect((await router.query('{ books { id } }')).body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    // Retried once: two failures open the circuit.
    expect(calls()).toBe(2);
    expect((await router.query('{ books { id } }')).body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_CIRCUIT_OPEN');
    expect(calls()).toBe(2);
  });

  it('count for neither without one: nothing says the subgraph is at fault', async () => {
    const { router, calls } = await routerFailingWith(() => new Error('the transport refused a header'));
    for (let i = 0; i < 3; i++) expect((await router.query('{ books { id } }')).body.errors?.[0]?.extensions?.code).toBe('SUBGRAPH_REQUEST_FAILED');
    expect(calls()).toBe(3);
  });
});
