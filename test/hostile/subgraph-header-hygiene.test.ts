/**
 * A broad propagate rule (`matching: ".*"`, common in Cosmo configs) must
 * not copy a client's connection-level headers to subgraphs, and a request
 * the router cannot make must not count against a subgraph's circuit
 * breaker. Before, `Expect: 100-continue` (curl sends it for bodies over
 * 1 KiB) was forwarded, the router's HTTP client refused it, every call
 * failed with SUBGRAPH_REQUEST_FAILED, and six such requests opened the
 * circuit for every other client.
 *
 * One real router on 127.0.0.1 in front of one real HTTP subgraph; clients
 * are plain node:http requests with exactly the headers given.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SwitchyardPlugin } from '../../src/kernel/pipeline/plugin.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';
import { errorCode, postGraphql, type Answer } from './support/clients.js';

const QUERY = { query: '{ books { id } }' };
const BOOKS = { data: { books: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }] } };
/** More failing requests than the breaker's threshold (5). */
const MORE_THAN_THRESHOLD = 7;

/** Sets a header the router's HTTP client refuses, on a request whose client asks for it: a router-side failure. */
const unsendable: SwitchyardPlugin = {
  name: 'unsendable-header',
  setup: () => ({
    hooks: {
      onFetch(event) {
        if (event.input.headers['x-test-unsendable'] === '1') event.setInput({ ...event.input, headers: { ...event.input.headers, expect: '100-continue' } });
      },
    },
  }),
};

let library: TestSubgraph;
let router: TestRouter;
let base = '';

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph({ reply: (call) => (call.headers['x-test-token'] === 'bad' ? { status: 401, body: 'bad token' } : undefined) }));
  router = await startTestRouter({
    subgraphs: [library],
    plugins: [unsendable],
    listen: true,
    config: {
      headers: {
        all: {
          request: [
            { op: 'propagate', matching: '.*' },
            // Rules naming never-forwarded headers send nothing.
            { op: 'set', name: 'Content-Length', value: '999' },
            { op: 'propagate', named: 'x-test-length', rename: 'content-length' },
            { op: 'propagate', named: 'transfer-encoding', default: 'chunked' },
          ],
        },
      },
      traffic_shaping: { all: { circuit_breaker: { enabled: true, failure_threshold: 5, cooldown: '1m' } } },
    },
  });
  base = router.url ?? '';
});
afterAll(async () => {
  await router?.close();
  await library?.close();
});
beforeEach(() => library.reset());

function body(answer: Answer): unknown {
  return JSON.parse(answer.text);
}

/** An ordinary request from another client: the subgraph's circuit is closed when it gets data. */
async function ordinaryRequestGetsData(): Promise<void> {
  const answer = await postGraphql(base, QUERY);
  expect(answer.status).toBe(200);
  expect(body(answer)).toEqual(BOOKS);
}

describe('headers a broad propagate rule never sends', () => {
  it('a client sending Expect: 100-continue gets its data; the subgraph sees no Expect', async () => {
    const answer = await postGraphql(base, QUERY, { expect: '100-continue' });
    expect(answer.status).toBe(200);
    expect(body(answer)).toEqual(BOOKS);
    expect(library.calls).toHaveLength(1);
    expect(library.calls[0]?.headers.expect).toBeUndefined();
  });

  it('many Expect requests leave the circuit closed for everyone', async () => {
    for (let i = 0; i < MORE_THAN_THRESHOLD; i++) expect(body(await postGraphql(base, QUERY, { expect: '100-continue' }))).toEqual(BOOKS);
    await ordinaryRequestGetsData();
  });

  it('connection-level and body headers stay with the client; its other headers reach the subgraph', async () => {
    const answer = await postGraphql(base, QUERY, {
      connection: 'keep-alive, x-test-hop',
      'x-test-hop': 'only for the first hop',
      'keep-alive': 'timeout=5',
      'proxy-connection': 'keep-alive',
      'proxy-authorization': 'Basic cHJveHk6c2VjcmV0',
      te: 'trailers',
      trailer: 'x-test-checksum',
      'content-encoding': 'identity',
      'accept-charset': 'utf-8',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
      'alt-svc': 'h3=":443"',
      vary: 'origin',
      'grpc-timeout': '1S',
      'x-test-length': '999',
      'x-tenant-id': 't1',
      authorization: 'Bearer abc',
    });
    expect(body(answer)).toEqual(BOOKS);
    const sent = library.calls[0]?.headers ?? {};
    for (const name of [
      'x-test-hop',
      'keep-alive',
      'proxy-connection',
      'proxy-authorization',
      'te',
      'trailer',
      'content-encoding',
      'accept-charset',
      'sec-websocket-key',
      'transfer-encoding',
      'alt-svc',
      'vary',
      'grpc-timeout',
    ]) {
      expect(sent[name], name).toBeUndefined();
    }
    expect(sent['content-length']).not.toBe('999');
    expect(sent.connection).not.toContain('x-test-hop');
    expect(sent).toMatchObject({ 'x-tenant-id': 't1', authorization: 'Bearer abc', 'x-test-length': '999' });
  });
});

describe('what counts against the circuit breaker', () => {
  it('a request the router cannot make is not a subgraph failure', async () => {
    for (let i = 0; i < MORE_THAN_THRESHOLD; i++) {
      const answer = await postGraphql(base, QUERY, { 'x-test-unsendable': '1' });
      expect(answer.status).toBe(200);
      expect(errorCode(answer)).toBe('SUBGRAPH_REQUEST_FAILED');
    }
    // Nothing left the router, and nothing was retried.
    expect(library.calls).toHaveLength(0);
    await ordinaryRequestGetsData();
  });

  it("a subgraph's 4xx for one client's request is not a subgraph failure", async () => {
    for (let i = 0; i < MORE_THAN_THRESHOLD; i++) {
      expect(errorCode(await postGraphql(base, QUERY, { 'x-test-token': 'bad' }))).toBe('SUBGRAPH_REQUEST_FAILED');
    }
    await ordinaryRequestGetsData();
  });
});
