/**
 * Subgraph errors that carry what clients must not see (stack traces,
 * internal extensions, locations into the subgraph's document, extra
 * top-level fields), through real subgraph servers: with the defaults a
 * client sees `message`, `path` (its own) and `extensions.code` only; each
 * `subgraph_error_propagation` option changes that as docs/configuration.md
 * says; `wrapped` and disabled propagation give one error per fetch.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CoreConfigInput, GraphQLResponseBody } from '../../src/index.js';
import { subgraphErrorPolicy, DEFAULT_SUBGRAPH_ERROR_POLICY } from '../../src/kernel/execute/subgraph-errors.js';
import { coreConfigSchema } from '../../src/kernel/config/core-schema.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { catalogService, inventorySubgraph } from '../plugins/grpc/catalog-fixture.js';
import { startGraph } from '../plugins/grpc/grpc-graph.js';
import { useLibraryAndPeople } from '../kernel/library-hooks.js';

const LINK = `extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])`;

/** An error as a careless subgraph sends it. */
function hostileError(path: Array<string | number>, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    message: 'the ledger is down',
    path,
    locations: [{ line: 3, column: 7 }],
    extensions: {
      code: 'LEDGER_DOWN',
      stacktrace: ['Error: connect ECONNREFUSED 10.1.2.3:5432', '    at Pool.connect (/srv/app/node_modules/pg/lib/pool.js:45:11)'],
      exception: { sql: 'SELECT * FROM accounts WHERE token = $1' },
      internal: { host: 'db-primary.internal' },
      serviceName: 'spoofed',
    },
    debugInfo: { sessionToken: 'tok_live_secret' },
    timestamp: '2024-05-01T10:00:00Z',
    ...overrides,
  };
}

/** Strings that must never reach a client with the defaults. */
const LEAKS = ['ECONNREFUSED', 'pool.js', 'SELECT', 'db-primary', 'tok_live_secret', 'spoofed', 'stacktrace', 'locations', 'timestamp'];

/** What the subgraphs answer when a test sets it (raw bodies); undefined: the real resolvers answer. */
const answers: { accounts?: unknown; billing?: unknown } = {};

let accounts: TestSubgraph;
let billing: TestSubgraph;
const routers: TestRouter[] = [];

beforeAll(async () => {
  accounts = await startSubgraph({
    name: 'accounts',
    typeDefs: `${LINK}
      type Query { me: User secret: String other: String }
      type User @key(fields: "id") { id: ID! name: String }`,
    resolvers: { Query: { me: () => ({ id: 'u1', name: 'Ada' }), secret: () => 's', other: () => 'o' } },
    reply: () => (answers.accounts === undefined ? undefined : { body: JSON.stringify(answers.accounts) }),
  });
  billing = await startSubgraph({
    name: 'billing',
    typeDefs: `${LINK}
      type User @key(fields: "id") { id: ID! plan: String }`,
    resolvers: { User: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, plan: 'pro' }) } },
    reply: () => (answers.billing === undefined ? undefined : { body: JSON.stringify(answers.billing) }),
  });
});

afterEach(async () => {
  delete answers.accounts;
  delete answers.billing;
  await Promise.all(routers.splice(0).map((router) => router.close()));
});

afterAll(async () => {
  await Promise.all([accounts?.close(), billing?.close()]);
});

async function query(
  text: string,
  propagation?: NonNullable<CoreConfigInput['subgraph_error_propagation']>,
  config: Omit<CoreConfigInput, 'version'> = {},
): Promise<GraphQLResponseBody> {
  const router = await startTestRouter({ subgraphs: [accounts, billing], config: { ...config, subgraph_error_propagation: propagation } });
  routers.push(router);
  const response = await router.query(text);
  expect(response.status).toBe(200);
  return response.body;
}

/** A root answer of `accounts` with these errors. */
function rootErrors(...errors: unknown[]): void {
  answers.accounts = { data: { secret: null, other: null, me: { __typename: 'User', id: 'u1', name: 'Ada' } }, errors };
}

/** An entity answer of `billing` (one User) with these errors. */
function entityErrors(...errors: unknown[]): void {
  answers.billing = { data: { _entities: [{ __typename: 'User', id: 'u1', plan: null }] }, errors };
}

describe('with the defaults', () => {
  it('forwards message, path and extensions.code of a root field error, nothing else', async () => {
    rootErrors(hostileError(['secret']));
    const body = await query('{ secret }');
    expect(body).toEqual({ data: { secret: null }, errors: [{ message: 'the ledger is down', path: ['secret'], extensions: { code: 'LEDGER_DOWN' } }] });
    const text = JSON.stringify(body);
    for (const leak of LEAKS) expect(text).not.toContain(leak);
  });

  it('moves an entity error to the client path and strips it the same way', async () => {
    entityErrors(hostileError(['_entities', 0, 'plan']));
    const body = await query('{ me { name plan } }');
    expect(body).toEqual({
      data: { me: { name: 'Ada', plan: null } },
      errors: [{ message: 'the ledger is down', path: ['me', 'plan'], extensions: { code: 'LEDGER_DOWN' } }],
    });
    const text = JSON.stringify(body);
    for (const leak of [...LEAKS, '_entities']) expect(text).not.toContain(leak);
  });

  it('leaves extensions out when the error has no code, and drops a malformed path', async () => {
    rootErrors({ message: 'no code here', path: ['secret'], extensions: { trace: 'x' } }, { message: 'odd path', path: [{ evil: true }] });
    expect((await query('{ secret }')).errors).toEqual([{ message: 'no code here', path: ['secret'] }, { message: 'odd path' }]);
  });

  it('drops paths with negative or fractional indexes, or absurdly long ones', async () => {
    rootErrors(
      { message: 'negative', path: ['secret', -1] },
      { message: 'fraction', path: ['secret', 1.5] },
      { message: 'huge', path: ['secret', 1e300] },
      { message: 'long', path: Array.from({ length: 100_000 }, () => 'secret') },
      { message: 'fine', path: ['secret', 0] },
    );
    expect((await query('{ secret }')).errors).toEqual([
      { message: 'negative' },
      { message: 'fraction' },
      { message: 'huge' },
      { message: 'long' },
      { message: 'fine', path: ['secret', 0] },
    ]);
  });

  it('survives entity error paths that are not lists', async () => {
    entityErrors({ message: 'odd', path: { 0: '_entities', 1: 0, length: 2 } }, { message: 'odder', path: '_entities' });
    expect((await query('{ me { plan } }')).errors).toEqual([{ message: 'odd' }, { message: 'odder' }]);
  });

  it('never forwards the answer-level extensions of a subgraph', async () => {
    answers.accounts = { data: { secret: 's' }, extensions: { debug: { sql: 'SELECT 1' } } };
    expect(await query('{ secret }')).toEqual({ data: { secret: 's' } });
  });

  it('keeps the errors the router makes itself (a subgraph that does not answer) as they were', async () => {
    answers.billing = 'not GraphQL';
    const body = await query('{ me { plan } }');
    expect(body.errors).toEqual([
      { message: 'Subgraph "billing" sent a response that is not GraphQL JSON.', path: ['me'], extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'billing' } },
    ]);
  });
});

describe('each option', () => {
  it('omit_locations: false forwards locations (only their line and column)', async () => {
    rootErrors(hostileError(['secret'], { locations: [{ line: 3, column: 7, source: 'query { secret }' }] }));
    const [error] = (await query('{ secret }', { omit_locations: false })).errors!;
    expect(error).toEqual({ message: 'the ledger is down', path: ['secret'], locations: [{ line: 3, column: 7 }], extensions: { code: 'LEDGER_DOWN' } });
  });

  it('omit_extensions: true drops every extensions field, code included', async () => {
    rootErrors(hostileError(['secret']));
    expect((await query('{ secret }', { omit_extensions: true })).errors).toEqual([{ message: 'the ledger is down', path: ['secret'] }]);
  });

  it('omit_extensions: true leaves no extensions, the router-added service name and code included, as Cosmo', async () => {
    rootErrors({ message: 'plain', path: ['secret'] });
    entityErrors(hostileError(['_entities', 0, 'plan']));
    const added = { attach_service_name: true, default_extension_code: 'DOWNSTREAM_SERVICE_ERROR', omit_extensions: true } as const;
    expect((await query('{ secret me { plan } }', added)).errors).toEqual([
      { message: 'plain', path: ['secret'] },
      { message: 'the ledger is down', path: ['me', 'plan'] },
    ]);
    // Wrapped (Cosmo's advice for hiding what subgraphs say): the fetch's error alone, without the subgraph's errors.
    const wrapped = await query('{ secret me { plan } }', { ...added, mode: 'wrapped' });
    expect(wrapped.errors).toEqual([{ message: "Failed to fetch from Subgraph 'accounts'." }, { message: "Failed to fetch from Subgraph 'billing' at Path 'me'." }]);
    expect(JSON.stringify(wrapped)).not.toContain('ledger');
  });

  it('attach_service_name: true adds the subgraph name, replacing one the subgraph claimed', async () => {
    rootErrors(hostileError(['secret']));
    entityErrors(hostileError(['_entities', 0, 'plan']));
    const body = await query('{ secret me { plan } }', { attach_service_name: true, allowed_extension_fields: ['code', 'serviceName'] });
    expect(body.errors).toEqual([
      { message: 'the ledger is down', path: ['secret'], extensions: { code: 'LEDGER_DOWN', serviceName: 'accounts' } },
      { message: 'the ledger is down', path: ['me', 'plan'], extensions: { code: 'LEDGER_DOWN', serviceName: 'billing' } },
    ]);
  });

  it('default_extension_code gives a code to errors without one and leaves other codes alone', async () => {
    rootErrors({ message: 'plain', path: ['secret'] }, hostileError(['other']));
    expect((await query('{ secret other }', { default_extension_code: 'DOWNSTREAM_SERVICE_ERROR' })).errors).toEqual([
      { message: 'plain', path: ['secret'], extensions: { code: 'DOWNSTREAM_SERVICE_ERROR' } },
      { message: 'the ledger is down', path: ['other'], extensions: { code: 'LEDGER_DOWN' } },
    ]);
  });

  it('allowed_extension_fields forwards the listed fields only', async () => {
    rootErrors(hostileError(['secret']));
    expect((await query('{ secret }', { allowed_extension_fields: ['internal'] })).errors).toEqual([
      { message: 'the ledger is down', path: ['secret'], extensions: { internal: { host: 'db-primary.internal' } } },
    ]);
  });

  it('allow_all_extension_fields forwards every extensions field', async () => {
    const error = hostileError(['secret']);
    rootErrors(error);
    expect((await query('{ secret }', { allow_all_extension_fields: true })).errors).toEqual([{ message: 'the ledger is down', path: ['secret'], extensions: error.extensions }]);
  });

  it('allowed_fields forwards the listed top-level fields, never others', async () => {
    rootErrors(hostileError(['secret']));
    expect((await query('{ secret }', { allowed_fields: ['timestamp', 'absent'] })).errors).toEqual([
      { message: 'the ledger is down', path: ['secret'], extensions: { code: 'LEDGER_DOWN' }, timestamp: '2024-05-01T10:00:00Z' },
    ]);
  });

  it('rewrite_paths: false keeps the path the subgraph sent', async () => {
    entityErrors(hostileError(['_entities', 0, 'plan']));
    expect((await query('{ me { plan } }', { rewrite_paths: false })).errors).toEqual([
      { message: 'the ledger is down', path: ['_entities', 0, 'plan'], extensions: { code: 'LEDGER_DOWN' } },
    ]);
  });

  it('copies a __proto__ field as a plain field, never as a prototype', async () => {
    answers.accounts = JSON.parse(
      '{"data":{"secret":null},"errors":[{"message":"m","path":["secret"],"__proto__":{"polluted":1},"extensions":{"code":"C","__proto__":{"polluted":2}}}]}',
    );
    const [error] = (await query('{ secret }', { allow_all_extension_fields: true, allowed_fields: ['__proto__'] })).errors!;
    expect(Object.hasOwn(error!, '__proto__')).toBe(true);
    expect(Object.hasOwn(error!.extensions!, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('wrapped mode', () => {
  it('gives one error per failed fetch, the filtered subgraph errors in extensions.errors', async () => {
    rootErrors(hostileError(['secret']), hostileError(['other'], { message: 'also down', extensions: { code: 'ALSO' } }));
    entityErrors(hostileError(['_entities', 0, 'plan']));
    const body = await query('{ secret other me { plan } }', { mode: 'wrapped' });
    expect(body.data).toEqual({ secret: null, other: null, me: { plan: null } });
    expect(body.errors).toEqual([
      {
        message: "Failed to fetch from Subgraph 'accounts'.",
        extensions: {
          errors: [
            { message: 'the ledger is down', path: ['secret'], extensions: { code: 'LEDGER_DOWN' } },
            { message: 'also down', path: ['other'], extensions: { code: 'ALSO' } },
          ],
        },
      },
      {
        // An entity fetch's wrapper names where its objects sit, as Cosmo's does.
        message: "Failed to fetch from Subgraph 'billing' at Path 'me'.",
        extensions: { errors: [{ message: 'the ledger is down', path: ['me', 'plan'], extensions: { code: 'LEDGER_DOWN' } }] },
      },
    ]);
    for (const leak of LEAKS) expect(JSON.stringify(body)).not.toContain(leak);
  });

  it('puts the service name and the default code on the wrapper', async () => {
    rootErrors({ message: 'plain', path: ['secret'] });
    const body = await query('{ secret }', { mode: 'wrapped', attach_service_name: true, default_extension_code: 'DOWNSTREAM_SERVICE_ERROR' });
    expect(body.errors).toEqual([
      {
        message: "Failed to fetch from Subgraph 'accounts'.",
        extensions: {
          errors: [{ message: 'plain', path: ['secret'], extensions: { code: 'DOWNSTREAM_SERVICE_ERROR' } }],
          code: 'DOWNSTREAM_SERVICE_ERROR',
          serviceName: 'accounts',
        },
      },
    ]);
  });

  it('adds nothing when the subgraph sent no errors', async () => {
    expect(await query('{ secret me { plan } }', { mode: 'wrapped' })).toEqual({ data: { secret: 's', me: { plan: 'pro' } } });
  });
});

describe('a wrapped entity fetch that looks objects up at two paths', () => {
  it('names no path in its error (each nested error keeps its own)', async () => {
    const people = await startSubgraph({
      name: 'people',
      typeDefs: `${LINK} type Query { me: User other: User } type User @key(fields: "id") { id: ID! }`,
      resolvers: { Query: { me: () => ({ id: 'u1' }), other: () => ({ id: 'u2' }) } },
    });
    const plans = await startSubgraph({
      name: 'plans',
      typeDefs: `${LINK} type User @key(fields: "id") { id: ID! plan: String }`,
      resolvers: { User: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, plan: 'pro' }) } },
      reply: () => ({
        body: JSON.stringify({
          data: {
            _entities: [
              { id: 'u1', plan: 'pro' },
              { id: 'u2', plan: null },
            ],
          },
          errors: [{ message: 'u2 down', path: ['_entities', 1, 'plan'] }],
        }),
      }),
    });
    const router = await startTestRouter({ subgraphs: [people, plans], config: { subgraph_error_propagation: { mode: 'wrapped' } } });
    try {
      const body = (await router.query('{ me { plan } other { plan } }')).body;
      expect(body.errors).toEqual([{ message: "Failed to fetch from Subgraph 'plans'.", extensions: { errors: [{ message: 'u2 down', path: ['other', 'plan'] }] } }]);
    } finally {
      await router.close();
      await people.close();
      await plans.close();
    }
  });
});

describe('merged entity fetches (engine.enable_multi_fetch)', () => {
  // Authors selected two ways stay two fetches in the plan (fetch merging needs one selection per type).
  const books = '{ books { ratings author { name secret } } other: books { author { secret } } }';
  const clientPaths = [
    ['books', 0, 'author', 'secret'],
    ['books', 1, 'author', 'secret'],
    ['books', 2, 'author', 'secret'],
    ['books', 2, 'ratings'],
    ['other', 0, 'author', 'secret'],
    ['other', 1, 'author', 'secret'],
    ['other', 2, 'author', 'secret'],
  ];
  let library: TestSubgraph;
  let people: TestSubgraph;
  useLibraryAndPeople((started) => ({ library, people } = started));

  async function merged(propagation: NonNullable<CoreConfigInput['subgraph_error_propagation']>, multiFetch = true): Promise<GraphQLResponseBody> {
    const router = await startTestRouter({ subgraphs: [library, people], config: { engine: { enable_multi_fetch: multiFetch }, subgraph_error_propagation: propagation } });
    routers.push(router);
    people.reset();
    const body = (await router.query(books)).body;
    // The plan batches the two same-wave fetches itself: one call with or without multi-fetch.
    expect(people.calls).toHaveLength(1);
    return body;
  }

  const pathsOf = (errors: readonly { path?: unknown }[] | undefined) => (errors ?? []).map((e) => JSON.stringify(e.path)).sort();

  it('puts each error of the one answer at the client path of its part', async () => {
    expect(pathsOf((await merged({})).errors)).toEqual(clientPaths.map((p) => JSON.stringify(p)).sort());
  });

  it('wraps the errors of the one request in one error, with multi-fetch on or off', async () => {
    const one = (await merged({ mode: 'wrapped' })).errors!;
    // The wrapper has no path: the router adds its own error at the non-null field it had to null, as for any such null.
    expect(one.map((e) => e.message)).toEqual(["Failed to fetch from Subgraph 'people'.", 'Cannot return null for non-nullable field Book.ratings.']);
    expect(one[1]!.path).toEqual(['books', 2, 'ratings']);
    expect(pathsOf(one[0]!.extensions!.errors as Array<{ path?: unknown }>)).toEqual(clientPaths.map((p) => JSON.stringify(p)).sort());
    const planBatched = (await merged({ mode: 'wrapped' }, false)).errors!;
    expect(planBatched.filter((e) => e.path === undefined).map((e) => e.message)).toEqual(["Failed to fetch from Subgraph 'people'."]);
  });
});

describe('disabled propagation', () => {
  it('gives one generic error per failed fetch, without the subgraph messages', async () => {
    rootErrors(hostileError(['secret']), hostileError(['other']));
    entityErrors(hostileError(['_entities', 0, 'plan']));
    const body = await query('{ secret other me { plan } }', { enabled: false });
    expect(body).toEqual({
      data: { secret: null, other: null, me: { plan: null } },
      errors: [{ message: "Failed to fetch from Subgraph 'accounts'." }, { message: "Failed to fetch from Subgraph 'billing' at Path 'me'." }],
    });
  });

  it('still names the subgraph and gives the default code when asked to', async () => {
    rootErrors(hostileError(['secret']));
    expect((await query('{ secret }', { enabled: false, attach_service_name: true, default_extension_code: 'DOWNSTREAM_SERVICE_ERROR' })).errors).toEqual([
      { message: "Failed to fetch from Subgraph 'accounts'.", extensions: { code: 'DOWNSTREAM_SERVICE_ERROR', serviceName: 'accounts' } },
    ]);
  });

  it('keeps the router-made errors of a fetch that failed', async () => {
    answers.billing = 'not GraphQL';
    const body = await query('{ me { plan } }', { enabled: false });
    expect(body.errors).toEqual([expect.objectContaining({ extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'billing' } })]);
  });
});

describe('the compiled policy', () => {
  it('is compiled once per config object', () => {
    const config = coreConfigSchema.parse({ version: '1', subgraph_error_propagation: { mode: 'wrapped' } }).subgraph_error_propagation;
    expect(subgraphErrorPolicy(config)).toBe(subgraphErrorPolicy(config));
    expect(subgraphErrorPolicy(undefined)).toBe(DEFAULT_SUBGRAPH_ERROR_POLICY);
  });
});

describe('gRPC subgraphs', () => {
  it("filter the service's own error statuses like any subgraph error, and keep the router's own", async () => {
    const mutation = `mutation { setPrice(id: "p9", price: 1) { price } }`;
    const defaults = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph] });
    try {
      expect((await defaults.query(mutation)).body).toEqual({ data: null, errors: [{ message: 'product p9 not found', path: ['setPrice'], extensions: { code: 'NOT_FOUND' } }] });
    } finally {
      await defaults.close();
    }
    const opened = await startGraph({
      grpc: [catalogService()],
      http: [inventorySubgraph],
      config: { subgraph_error_propagation: { attach_service_name: true, allowed_extension_fields: ['code', 'grpc'] } },
    });
    try {
      expect((await opened.query(mutation)).body.errors).toEqual([
        {
          message: 'product p9 not found',
          path: ['setPrice'],
          extensions: { code: 'NOT_FOUND', grpc: { code: 5, status: 'NOT_FOUND', method: 'MutationSetPrice' }, serviceName: 'catalog' },
        },
      ]);
    } finally {
      await opened.close();
    }
    const disabled = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph], config: { subgraph_error_propagation: { enabled: false } } });
    try {
      // The generic error has no path, so the router reports the non-null field it had to null, as for any null without an error.
      expect((await disabled.query(mutation)).body.errors).toEqual([
        { message: "Failed to fetch from Subgraph 'catalog'." },
        { message: 'Cannot return null for non-nullable field Mutation.setPrice.', path: ['setPrice'] },
      ]);
      await disabled.grpc.catalog!.close();
      // The service is gone: the router's own error, with the subgraph's name, whatever the policy.
      expect((await disabled.query('{ product(id: "p1") { name } }')).body.errors).toEqual([
        {
          message: 'Request to subgraph "catalog" failed: gRPC QueryProduct: UNAVAILABLE.',
          path: ['product'],
          extensions: { code: 'SUBGRAPH_REQUEST_FAILED', grpc: { code: 14, status: 'UNAVAILABLE', method: 'QueryProduct' }, serviceName: 'catalog' },
        },
      ]);
    } finally {
      await disabled.close();
    }
  });
});
