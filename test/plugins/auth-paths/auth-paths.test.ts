/**
 * Authentication and authorization on every path an operation takes:
 * persisted operations, a router set up from router.config.yaml, Connect,
 * directives on interfaces and enums, runtime types inside fragments, and
 * claims forwarded to subgraphs as headers.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimHeaderValue, useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { useConnect } from '../../../plugins/connect/index.js';
import { usePersistedOperations } from '../../../plugins/persisted-operations/index.js';
import { migrateCosmoConfig } from '../../../src/cli/cosmo-config-migration.js';
import { composeSubgraphs } from '../../../src/compose/index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import type { SwitchyardPlugin } from '../../../src/index.js';
import { graphDrivenPlugins } from '../../../src/cli/builtin-plugins.js';
import { loadRouterSetup } from '../../../src/setup/index.js';
import { openOperationsStore, sha256Hex } from '../../../src/operations/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { graphqlInput } from '../../operations/support/operations.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';
import { connectPost, freePort, writeContract } from '../connect/fixtures.js';

const SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key", "@authenticated", "@requiresScopes"])

  type Query {
    item(id: ID!): Item
    animals: [Animal!]!
    level: Level
    secret: String! @authenticated
  }

  type Item @key(fields: "id") {
    id: ID!
    name: String
    price: Int @requiresScopes(scopes: [["read:price"]])
  }

  interface Animal {
    name: String
    tag: String
  }

  type Dog implements Animal {
    name: String
    tag: String @authenticated
    bone: String @authenticated
  }

  type Cat implements Animal {
    name: String
    tag: String
    bone: String
  }

  enum Level @requiresScopes(scopes: [["read:level"]]) {
    LOW
    HIGH
  }
`;

const items = [{ id: '1', name: 'Table', price: 10 }];
const animals = [
  { __typename: 'Dog', name: 'Rex', tag: 'd-1', bone: 'big' },
  { __typename: 'Cat', name: 'Tom', tag: 'c-1', bone: 'none' },
];

let shop: TestSubgraph;
let key: SigningKey;
let jwks: JwksServer;
const scratch: string[] = [];

beforeAll(async () => {
  shop = await startSubgraph({
    name: 'shop',
    typeDefs: SDL,
    resolvers: {
      Query: {
        item: (_: unknown, { id }: { id: string }) => items.find((item) => item.id === id),
        animals: () => animals,
        level: () => 'HIGH',
        secret: () => 's3cr3t',
      },
      Item: { __resolveReference: (ref: { id: string }) => items.find((item) => item.id === ref.id) },
      Animal: { __resolveType: (animal: { __typename: string }) => animal.__typename },
    },
  });
  key = await signingKey('k1', 'RS256');
  jwks = await startJwksServer([key]);
});

afterAll(async () => {
  await Promise.all([shop?.close(), jwks?.close(), ...scratch.map((dir) => rm(dir, { recursive: true, force: true }))]);
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-auth-'));
  scratch.push(dir);
  return dir;
}

function authPlugins(authorization: Parameters<typeof useAuthorization>[0] = {}, forward_claims?: Record<string, string>): SwitchyardPlugin[] {
  return [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, ...(forward_claims ? { forward_claims } : {}) }), useAuthorization(authorization)];
}

const token = (claims: Record<string, unknown> = {}) => sign(key, { claims });
const unauthorized = (path: Array<string | number>) => ({ message: expect.stringMatching(/^Unauthorized to access /), path, extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } });
const sent = () => shop.calls.map((call) => call.query).join('\n');

describe('directives on interfaces, enums and implementations', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await startTestRouter({ subgraphs: [shop], plugins: authPlugins() });
  });
  afterAll(() => router?.close());

  // Federation refuses the directives on interfaces and interface fields in a subgraph
  // ("cannot be applied on interfaces"): an interface is protected through its
  // implementations, as the last test of this block shows.

  it('@requiresScopes on an enum protects fields returning it', async () => {
    expect((await router.query({ query: '{ level }', headers: bearer(await token()) })).body).toEqual({ data: { level: null }, errors: [unauthorized(['level'])] });
    expect((await router.query({ query: '{ level }', headers: bearer(await token({ scope: 'read:level' })) })).body).toEqual({ data: { level: 'HIGH' } });
  });

  it('a field removed inside a fragment on one implementation is nulled only on objects of that type', async () => {
    shop.reset();
    const response = await router.query('{ animals { name ... on Dog { bone } ... on Cat { bone } } }');
    expect(response.body).toEqual({
      data: {
        animals: [
          { name: 'Rex', bone: null },
          { name: 'Tom', bone: 'none' },
        ],
      },
      errors: [unauthorized(['animals', 0, 'bone'])],
    });
    expect(sent()).toMatch(/on Cat\s*\{\s*bone/);
    expect(sent()).not.toMatch(/on Dog\s*\{\s*bone/);
    // The same through a named fragment, and nested in a fragment on the interface.
    const named = await router.query('{ animals { ...D n: name } } fragment D on Animal { ... on Dog { b: bone } ... on Cat { b: bone } }');
    expect(named.body).toEqual({
      data: {
        animals: [
          { b: null, n: 'Rex' },
          { b: 'none', n: 'Tom' },
        ],
      },
      errors: [unauthorized(['animals', 0, 'b'])],
    });
    // With a token the Dog's field is fetched.
    expect((await router.query({ query: '{ animals { ... on Dog { bone } } }', headers: bearer(await token()) })).body).toEqual({ data: { animals: [{ bone: 'big' }, {}] } });
  });

  it('a field selected on the interface is judged by the strictest implementation', async () => {
    const response = await router.query('{ animals { name tag } }');
    expect(response.body).toEqual({
      data: {
        animals: [
          { name: 'Rex', tag: null },
          { name: 'Tom', tag: null },
        ],
      },
      errors: [unauthorized(['animals', 0, 'tag']), unauthorized(['animals', 1, 'tag'])],
    });
    expect((await router.query({ query: '{ animals { tag } }', headers: bearer(await token()) })).body).toEqual({ data: { animals: [{ tag: 'd-1' }, { tag: 'c-1' }] } });
  });
});

describe('persisted operations', () => {
  it('a registered operation run by its hash is authorized as its text is', async () => {
    const dir = await tempDir();
    const text = 'query Item($id: ID!) { item(id: $id) { name price } }';
    const store = await openOperationsStore({ provider: 'file', path: dir });
    await store.push('default', 'web', [graphqlInput(text)]);
    const router = await startTestRouter({
      subgraphs: [shop],
      plugins: [...authPlugins(), usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir } })],
    });
    try {
      const request = { extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(text) } }, variables: { id: '1' } };
      const client = { 'graphql-client-name': 'web' };
      shop.reset();
      const anonymous = await router.query({ ...request, headers: client });
      expect(anonymous.body).toEqual({ data: { item: { name: 'Table', price: null } }, errors: [unauthorized(['item', 'price'])] });
      expect(sent()).not.toMatch(/price/);
      const scoped = await router.query({ ...request, headers: { ...client, ...bearer(await token({ scope: 'read:price' })) } });
      expect(scoped.body).toEqual({ data: { item: { name: 'Table', price: 10 } } });
      const invalid = await router.query({ ...request, headers: { ...client, authorization: 'Bearer not-a-token' } });
      expect(invalid.status).toBe(401);
      expect(invalid.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    } finally {
      await router.close();
    }
  });
});

describe('router.config.yaml', () => {
  it('switchyard router enforces the directives with no authentication or authorization section: every caller is anonymous (fail closed, as Cosmo)', async () => {
    const dir = await tempDir();
    const path = join(dir, 'router.config.yaml');
    await writeFile(path, 'version: "1"\n');
    const setup = await loadRouterSetup({ configPath: path, env: {} });
    // What switchyard router serves with: the configured plugins (none), then those it adds to every router.
    const plugins = [...setup.plugins, ...(await graphDrivenPlugins(setup.plugins))];
    expect(plugins.map((plugin) => plugin.name)).toEqual(['authorization', 'grpc']);
    const router = await startTestRouter({ subgraphs: [shop], plugins });
    try {
      expect((await router.query('{ secret }')).body).toEqual({ data: null, errors: [unauthorized(['secret'])] });
      expect((await router.query('{ item(id: "1") { name price } }')).body).toEqual({ data: { item: { name: 'Table', price: null } }, errors: [unauthorized(['item', 'price'])] });
    } finally {
      await router.close();
    }
  });

  it('switches both plugins on from their sections, with the options written there', async () => {
    const dir = await tempDir();
    const path = join(dir, 'router.config.yaml');
    await writeFile(
      path,
      `version: "1"
authentication:
  jwt:
    jwks:
      - url: ${jwks.url}
        algorithms: [RS256]
  forward_claims:
    sub: X-User-Id
authorization:
  reject_operation_if_unauthorized: true
`,
    );
    const setup = await loadRouterSetup({ configPath: path, env: {} });
    expect(setup.plugins.map((plugin) => plugin.name)).toEqual(['authentication', 'authorization']);
    const router = await startTestRouter({ subgraphs: [shop], plugins: setup.plugins });
    try {
      shop.reset();
      const refused = await router.query('{ item(id: "1") { name price } }');
      expect(refused.status).toBe(403);
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED_FIELD_OR_TYPE');
      expect(shop.calls).toHaveLength(0);
      const allowed = await router.query({ query: '{ item(id: "1") { name price } }', headers: bearer(await token({ scope: 'read:price' })) });
      expect(allowed.body).toEqual({ data: { item: { name: 'Table', price: 10 } } });
      expect(shop.calls.map((call) => call.headers['x-user-id'])).toEqual(['user-1']);
      expect((await router.query({ query: '{ item(id: "1") { name } }', headers: { authorization: 'Bearer x.y.z' } })).status).toBe(401);
    } finally {
      await router.close();
    }
  });

  it("ignore_introspection from the file or the environment lets introspection through without a token; Cosmo's key carries over", async () => {
    const dir = await tempDir();
    const path = join(dir, 'router.config.yaml');
    await writeFile(path, `version: "1"\nauthentication:\n  jwt:\n    jwks: [{ url: ${jwks.url} }]\nauthorization:\n  require_authentication: true\n`);
    for (const setup of [
      await loadRouterSetup({ configPath: path, env: { AUTHENTICATION_IGNORE_INTROSPECTION: 'true' } }),
      await (async () => {
        await writeFile(
          path,
          `version: "1"\nauthentication:\n  ignore_introspection: true\n  jwt:\n    jwks: [{ url: ${jwks.url} }]\nauthorization:\n  require_authentication: true\n`,
        );
        return loadRouterSetup({ configPath: path, env: {} });
      })(),
    ]) {
      const router = await startTestRouter({ subgraphs: [shop], plugins: setup.plugins });
      try {
        expect((await router.query('{ __schema { queryType { name } } }')).body).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
        expect((await router.query('{ __typename item(id: "1") { name } }')).status).toBe(401);
      } finally {
        await router.close();
      }
    }
    await writeFile(path, `version: "1"\nauthentication:\n  ignore_introspection: 1\n  jwt:\n    jwks: [{ url: ${jwks.url} }]\n`);
    await expect(loadRouterSetup({ configPath: path, env: {} })).rejects.toThrow(/authentication\.ignore_introspection/);
    const migrated = migrateCosmoConfig({
      version: '1',
      authentication: { ignore_introspection: true, jwt: { jwks: [{ url: jwks.url }] } },
      authorization: { require_authentication: true },
    });
    expect(migrated.notCarried).toEqual([]);
    expect(migrated.config.authentication).toEqual({ ignore_introspection: true, jwt: { jwks: [{ url: jwks.url }] } });
  });

  it.each(['Authorization', 'Expect', 'keep-alive'])('refuses a claim sent as a reserved header (%s)', async (header) => {
    const dir = await tempDir();
    const path = join(dir, 'router.config.yaml');
    await writeFile(path, `version: "1"\nauthentication:\n  jwt:\n    jwks: [{ url: ${jwks.url} }]\n  forward_claims: { sub: ${header} }\n`);
    await expect(loadRouterSetup({ configPath: path, env: {} })).rejects.toThrow(/cannot carry a claim/);
  });
});

describe('claims forwarded to subgraphs', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await startTestRouter({
      subgraphs: [shop],
      plugins: authPlugins({}, { sub: 'x-user-id', tenant: 'x-tenant', roles: 'x-roles', nested: 'x-nested' }),
      // The client's own x-user-id would be propagated by this rule; the plugin must drop it.
      config: { headers: { all: { request: [{ op: 'propagate', matching: '^x-' }] } } },
    });
  });
  afterAll(() => router?.close());

  it('sends the claims of a valid token as headers on every subgraph request', async () => {
    shop.reset();
    const jwt = await token({ sub: 'ada', tenant: 7, roles: ['admin', 'ops'], nested: { a: 1 } });
    await router.query({ query: '{ item(id: "1") { name } animals { name } }', headers: { ...bearer(jwt), 'x-user-id': 'mallory' } });
    expect(shop.calls.length).toBeGreaterThan(0);
    for (const call of shop.calls) {
      expect(call.headers['x-user-id']).toBe('ada');
      expect(call.headers['x-tenant']).toBe('7');
      expect(call.headers['x-roles']).toBe('admin,ops');
      expect(call.headers['x-nested']).toBeUndefined();
    }
  });

  it('sends none without a token, and drops a client header of the same name', async () => {
    shop.reset();
    await router.query({ query: '{ item(id: "1") { name } }', headers: { 'x-user-id': 'mallory', 'x-other': 'kept' } });
    expect(shop.calls).toHaveLength(1);
    expect(shop.calls[0]!.headers['x-user-id']).toBeUndefined();
    expect(shop.calls[0]!.headers['x-tenant']).toBeUndefined();
    expect(shop.calls[0]!.headers['x-other']).toBe('kept');
  });

  it('turns claims into header values, leaving out what cannot be one', () => {
    expect([claimHeaderValue('a b'), claimHeaderValue(42), claimHeaderValue(false), claimHeaderValue(['x', 1])]).toEqual(['a b', '42', 'false', 'x,1']);
    for (const refused of [undefined, null, '', 'a\r\nx-admin: 1', 'Zoë', '李', { a: 1 }, [], [{ a: 1 }]]) expect(claimHeaderValue(refused)).toBeUndefined();
  });

  it('a claim that is not ASCII is not sent, and the request still runs', async () => {
    shop.reset();
    const response = await router.query({ query: '{ item(id: "1") { name } }', headers: bearer(await token({ sub: '李雷' })) });
    expect(response.body).toEqual({ data: { item: { name: 'Table' } } });
    expect(shop.calls[0]!.headers['x-user-id']).toBeUndefined();
  });

  it('does not share an in-flight subgraph request between two users', async () => {
    shop.reset();
    const [a, b] = await Promise.all([token({ sub: 'a' }), token({ sub: 'b' })]);
    await Promise.all([router.query({ query: '{ item(id: "1") { name } }', headers: bearer(a) }), router.query({ query: '{ item(id: "1") { name } }', headers: bearer(b) })]);
    expect(shop.calls.map((call) => call.headers['x-user-id']).sort()).toEqual(['a', 'b']);
  });
});

describe('Connect', () => {
  let services: string;
  const started: TestRouter[] = [];

  beforeAll(async () => {
    services = await tempDir();
    const apiSchema = readSupergraph(composeSubgraphs([{ name: 'shop', url: shop.url, sdl: SDL }]).supergraphSdl).apiSchema;
    await writeContract(
      join(services, 'shop', 'v1'),
      { 'GetItem.graphql': 'query GetItem($id: ID!) { item(id: $id) { name price } }', 'Secret.graphql': 'query Secret { secret }' },
      apiSchema,
    );
  });
  afterAll(async () => {
    await Promise.all(started.map((router) => router.close()));
  });

  async function connectRouter(authorization: Parameters<typeof useAuthorization>[0]): Promise<string> {
    const port = await freePort();
    started.push(
      await startTestRouter({
        subgraphs: [shop],
        plugins: [...authPlugins(authorization), useConnect({ enabled: true, server: { listen_addr: `127.0.0.1:${port}` }, services: { path: services } })],
      }),
    );
    return `http://127.0.0.1:${port}`;
  }

  const METHOD = '/shop.v1.ShopService/GetItem';

  it('reject mode: an invalid token is unauthenticated (401), an unauthorized field permission_denied (403)', async () => {
    const url = await connectRouter({ reject_operation_if_unauthorized: true });
    const invalid = await connectPost(url, METHOD, { id: '1' }, { authorization: 'Bearer not-a-token' });
    expect({ status: invalid.status, code: (invalid.body as { code?: string }).code }).toEqual({ status: 401, code: 'unauthenticated' });
    shop.reset();
    const denied = await connectPost(url, METHOD, { id: '1' }, bearer(await token()));
    expect({ status: denied.status, code: (denied.body as { code?: string }).code }).toEqual({ status: 403, code: 'permission_denied' });
    expect(shop.calls).toHaveLength(0);
    const allowed = await connectPost(url, METHOD, { id: '1' }, bearer(await token({ scope: 'read:price' })));
    expect({ status: allowed.status, body: allowed.body }).toEqual({ status: 200, body: { item: { name: 'Table', price: 10 } } });
  });

  it('default mode: the field is nulled; the partial data fails the call as in Cosmo, data and error in its headers', async () => {
    const url = await connectRouter({});
    const partial = await connectPost(url, METHOD, { id: '1' });
    expect({ status: partial.status, code: (partial.body as { code?: string }).code }).toEqual({ status: 500, code: 'unknown' });
    expect(JSON.parse(partial.headers.get('graphql-partial-data') ?? 'null')).toEqual({ item: { name: 'Table', price: null } });
    const errors = JSON.parse(partial.headers.get('graphql-errors') ?? '[]') as Array<{ path?: unknown; extensions?: { code?: string } }>;
    expect(errors).toEqual([expect.objectContaining({ path: ['item', 'price'], extensions: expect.objectContaining({ code: 'UNAUTHORIZED_FIELD_OR_TYPE' }) })]);
    // A refused non-null root field leaves no data at all: the call fails as a whole.
    const secret = await connectPost(url, '/shop.v1.ShopService/Secret', {});
    expect({ status: secret.status, code: (secret.body as { code?: string }).code }).toEqual({ status: 403, code: 'permission_denied' });
    const allowed = await connectPost(url, '/shop.v1.ShopService/Secret', {}, bearer(await token()));
    expect({ status: allowed.status, body: allowed.body }).toEqual({ status: 200, body: { secret: 's3cr3t' } });
  });
});
