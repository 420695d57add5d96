/**
 * Unauthenticated clients sending many distinct large documents that touch
 * `@requiresScopes` / `@authenticated` fields: the authorization plugin's
 * memo of facts and filtered operations stays within its byte bound. It
 * once kept 2,000 entries keyed by the whole text, twice over, and a flood
 * of ~900 KB documents ran the router out of heap.
 */
import { Session } from 'node:inspector/promises';
import { parse } from 'graphql';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { FILTERED_BYTES, FILTERED_ENTRY_BYTES, FORMS_PER_DOCUMENT, OperationMemo, documentHeapBytes } from '../../../plugins/authorization/operation-memo.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key", "@authenticated", "@requiresScopes"])';
/** Documents in the flood: without a byte bound they kept some 2.7 MB each (over 200 MB), far past HEAP_BOUND. */
const DOCUMENTS = 80;
/** Text of each document: within limits.max_request_body (1 MB) once in JSON. */
const DOCUMENT_CHARS = 900_000;
/**
 * The heap may grow at most this much: the memo's 64 MiB estimate (a
 * one-byte string counted at two bytes a character, so about 35 of these
 * documents) plus the few the router's own caches keep here.
 */
const HEAP_BOUND = 80 * 1024 * 1024;

let graph: TestSubgraph;
let key: SigningKey;
let jwks: JwksServer;
let router: TestRouter;
let session: Session;

beforeAll(async () => {
  graph = await startSubgraph({
    name: 'vault',
    typeDefs: /* GraphQL */ `
      ${LINK}
      type Query {
        liveCount: Int
        secret: String @requiresScopes(scopes: [["read:secret"]])
        me: String @authenticated
      }
    `,
    resolvers: { Query: { liveCount: () => 7, secret: () => 'hidden', me: () => 'ada' } },
  });
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
  router = await startTestRouter({
    subgraphs: [graph],
    listen: true,
    // The router's own document and plan caches keep few documents here, so what stays is the plugin's.
    config: { engine: { execution_plan_cache_size: 4 } },
    plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization({})],
  });
  session = new Session();
  session.connect();
});

afterAll(async () => {
  session?.disconnect();
  await router?.close();
  await Promise.all([graph?.close(), jwks?.close()]);
});

/** Bytes the heap holds after a full collection. */
async function heapUsedAfterGc(): Promise<number> {
  await session.post('HeapProfiler.collectGarbage');
  const usage = (await session.post('Runtime.getHeapUsage')) as unknown as { usedSize: number };
  return usage.usedSize;
}

/** `{ secret liveCount me }`, made distinct by `i` and padded with spaces to DOCUMENT_CHARS. */
function paddedDocument(i: number): string {
  return `{ secret liveCount me }${' '.repeat(i + 1)}#`.padEnd(DOCUMENT_CHARS, ' ');
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

it('keeps its heap bounded across distinct ~900 KB documents from clients without a token, and still filters per grant', async () => {
  const warm = await router.query('{ secret liveCount me }');
  expect(warm.body.data).toEqual({ secret: null, liveCount: 7, me: null });
  const before = await heapUsedAfterGc();
  for (let i = 0; i < DOCUMENTS; i += 4) {
    const answers = await Promise.all([i, i + 1, i + 2, i + 3].map((n) => router.query(paddedDocument(n))));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.body.data).toEqual({ secret: null, liveCount: 7, me: null });
      expect(answer.body.errors?.map((error) => error.extensions?.code)).toEqual(['UNAUTHORIZED_FIELD_OR_TYPE', 'UNAUTHORIZED_FIELD_OR_TYPE']);
    }
  }
  const after = await heapUsedAfterGc();
  expect(after - before, `heap ${mb(before)} before, ${mb(after)} after ${DOCUMENTS} documents`).toBeLessThan(HEAP_BOUND);

  // The same document still gets a different filtered form for each grant.
  const document = paddedDocument(0);
  const scoped = await router.query({ query: document, headers: bearer(await sign(key, { claims: { scope: 'read:secret' } })) });
  expect(scoped.body).toEqual({ data: { secret: 'hidden', liveCount: 7, me: 'ada' } });
  const signedIn = await router.query({ query: document, headers: bearer(await sign(key)) });
  expect(signedIn.body.data).toEqual({ secret: null, liveCount: 7, me: 'ada' });
  const anonymous = await router.query(document);
  expect(anonymous.body.data).toEqual({ secret: null, liveCount: 7, me: null });
});

it('counts each kept document in full against the byte bound, keeps a bounded number of forms per document, and skips documents over the entry bound', () => {
  const memo = new OperationMemo();
  const documents = Array.from({ length: 24 }, (_, i) => parse(`{ secret liveCount }${' '.repeat(2_000_000)}# ${i}`));
  const each = documentHeapBytes(documents[0]!);
  expect(each).toBeGreaterThan(4_000_000);
  for (const document of documents) memo.formOf(document, 'grant', () => 'all');
  expect(memo.filteredBytes).toBeLessThanOrEqual(FILTERED_BYTES);
  expect(memo.filteredBytes).toBeGreaterThan(FILTERED_BYTES - 2 * each);

  // Forms of one document: the oldest goes once FORMS_PER_DOCUMENT are kept.
  const small = parse('{ secret liveCount }');
  let computed = 0;
  const form = (key: string) => memo.formOf(small, key, () => (computed++, 'all'));
  for (let i = 0; i <= FORMS_PER_DOCUMENT; i++) form(`grant ${i}`);
  form(`grant ${FORMS_PER_DOCUMENT}`);
  expect(computed).toBe(FORMS_PER_DOCUMENT + 1);
  form('grant 0');
  expect(computed).toBe(FORMS_PER_DOCUMENT + 2);

  // A document the router's document cache would not keep either is filtered each time, and not kept.
  const huge = parse(`{ secret }${' '.repeat(FILTERED_ENTRY_BYTES / 2)}`);
  const before = memo.filteredBytes;
  let hugeComputed = 0;
  memo.formOf(huge, 'grant', () => (hugeComputed++, 'all'));
  memo.formOf(huge, 'grant', () => (hugeComputed++, 'all'));
  expect(hugeComputed).toBe(2);
  expect(memo.filteredBytes).toBe(before);
});
