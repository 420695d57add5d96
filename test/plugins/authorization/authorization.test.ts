import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAutomaticPersistedQueries } from '../../../plugins/automatic-persisted-queries/index.js';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../authentication/jwks-fixtures.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.6", import: ["@key", "@authenticated", "@requiresScopes", "@policy"])';
const products = [
  { upc: '1', name: 'Table', price: 10, code: 'T-1' },
  { upc: '2', name: 'Chair', price: 5, code: 'C-2' },
];
const users = { u1: { id: 'u1', name: 'Ada', email: 'ada@example.com' } };

let productsGraph: TestSubgraph;
let reviewsGraph: TestSubgraph;
let accountsGraph: TestSubgraph;
let key: SigningKey;
let jwks: JwksServer;

beforeAll(async () => {
  productsGraph = await startSubgraph({
    name: 'products',
    typeDefs: /* GraphQL */ `
      ${LINK}
      type Query {
        products: [Product!]!
        product(upc: ID!): Product
      }
      type Product @key(fields: "upc") {
        upc: ID!
        name: String
        price: Int @requiresScopes(scopes: [["read:price"]])
        code: String! @authenticated
        supplier: String @policy(policies: [["internal"]])
      }
    `,
    resolvers: {
      Query: { products: () => products, product: (_: unknown, { upc }: { upc: string }) => products.find((p) => p.upc === upc) },
      Product: { __resolveReference: (ref: { upc: string }) => products.find((p) => p.upc === ref.upc), supplier: () => 'ACME' },
    },
  });
  reviewsGraph = await startSubgraph({
    name: 'reviews',
    typeDefs: /* GraphQL */ `
      ${LINK}
      type Product @key(fields: "upc") {
        upc: ID!
        reviews: [Review!]!
      }
      type Review {
        body: String
        author: User
      }
      type User @key(fields: "id", resolvable: false) {
        id: ID!
      }
    `,
    resolvers: { Product: { reviews: (p: { upc: string }) => [{ body: `nice ${p.upc}`, author: { id: 'u1' } }] } },
  });
  accountsGraph = await startSubgraph({
    name: 'accounts',
    typeDefs: /* GraphQL */ `
      ${LINK}
      type Query {
        me: User @authenticated
      }
      type User @key(fields: "id") @authenticated {
        id: ID!
        name: String
        email: String @requiresScopes(scopes: [["read:email", "read:profile"], ["admin"]])
      }
    `,
    resolvers: {
      Query: { me: () => users.u1 },
      User: { __resolveReference: (ref: { id: keyof typeof users }) => users[ref.id] },
    },
  });
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
});

afterAll(async () => {
  await Promise.all([productsGraph?.close(), reviewsGraph?.close(), accountsGraph?.close(), jwks?.close()]);
});

function reset(): void {
  productsGraph.reset();
  reviewsGraph.reset();
  accountsGraph.reset();
}

async function routerWith(authorization: Parameters<typeof useAuthorization>[0] = {}, extra: Parameters<typeof startTestRouter>[0]['plugins'] = []): Promise<TestRouter> {
  return startTestRouter({
    subgraphs: [productsGraph, reviewsGraph, accountsGraph],
    plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization(authorization), ...(extra ?? [])],
  });
}

const token = (scope?: string | string[]) => sign(key, { claims: scope === undefined ? {} : { scope } });
const unauthorized = (path: Array<string | number>) => ({ message: expect.stringMatching(/^Unauthorized to access /), path, extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } });
const sentQueries = (graph: TestSubgraph) => graph.calls.map((call) => call.query).join('\n');

const QUERY = '{ products { upc name price reviews { body author { name } } } }';

describe('authorization', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await routerWith();
  });
  afterAll(() => router?.close());

  it('without a token: restricted fields are never fetched and come back null with errors at their paths, across an entity jump', async () => {
    reset();
    const response = await router.query(QUERY);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      products: [
        { upc: '1', name: 'Table', price: null, reviews: [{ body: 'nice 1', author: null }] },
        { upc: '2', name: 'Chair', price: null, reviews: [{ body: 'nice 2', author: null }] },
      ],
    });
    expect(response.body.errors).toEqual(
      expect.arrayContaining([
        unauthorized(['products', 0, 'price']),
        unauthorized(['products', 1, 'price']),
        unauthorized(['products', 0, 'reviews', 0, 'author']),
        unauthorized(['products', 1, 'reviews', 0, 'author']),
      ]),
    );
    expect(response.body.errors).toHaveLength(4);
    expect(sentQueries(productsGraph)).not.toMatch(/price/);
    expect(sentQueries(reviewsGraph)).not.toMatch(/author/);
    expect(accountsGraph.calls).toHaveLength(0);
  });

  it('with a token and the scope: everything, through the same router (plans cached per filtered operation)', async () => {
    reset();
    const response = await router.query({ query: QUERY, headers: bearer(await token('read:price')) });
    expect(response.body).toEqual({
      data: {
        products: [
          { upc: '1', name: 'Table', price: 10, reviews: [{ body: 'nice 1', author: { name: 'Ada' } }] },
          { upc: '2', name: 'Chair', price: 5, reviews: [{ body: 'nice 2', author: { name: 'Ada' } }] },
        ],
      },
    });
    expect(accountsGraph.calls).toHaveLength(1);
    // And without one again: the unfiltered plan does not leak into the anonymous request.
    reset();
    expect((await router.query(QUERY)).body.errors).toHaveLength(4);
    expect(sentQueries(productsGraph)).not.toMatch(/price/);
  });

  it('scopes: OR of ANDs over the scope claim (string or array)', async () => {
    const cases: Array<[string | string[] | undefined, string | null]> = [
      [undefined, null],
      ['read:email', null],
      [['read:email', 'read:profile'], 'ada@example.com'],
      ['read:profile read:email', 'ada@example.com'],
      ['admin', 'ada@example.com'],
    ];
    for (const [scope, email] of cases) {
      const response = await router.query({ query: '{ me { name email } }', headers: bearer(await token(scope)) });
      expect(response.body.data).toEqual({ me: { name: 'Ada', email } });
      if (email === null) expect(response.body.errors).toEqual([unauthorized(['me', 'email'])]);
      else expect(response.body.errors).toBeUndefined();
    }
  });

  it('a removed non-null field nulls its parent; a selection left empty still answers', async () => {
    const response = await router.query('{ product(upc: "1") { name code } me { name } }');
    expect(response.body).toEqual({
      data: { product: null, me: null },
      errors: expect.arrayContaining([unauthorized(['product', 'code']), unauthorized(['me'])]),
    });
    const onlyRestricted = await router.query('{ product(upc: "2") { price } }');
    expect(onlyRestricted.body).toEqual({ data: { product: { price: null } }, errors: [unauthorized(['product', 'price'])] });
  });

  it('fragments and aliases keep their response keys', async () => {
    const response = await router.query('query { p: product(upc: "1") { ...F } } fragment F on Product { n: name cost: price }');
    expect(response.body).toEqual({ data: { p: { n: 'Table', cost: null } }, errors: [unauthorized(['p', 'cost'])] });
  });

  it('is applied through router.execute too, and introspection shows the schema but no data', async () => {
    const executed = await router.router.execute({ query: '{ product(upc: "1") { price } }' });
    expect(executed.body).toEqual({ data: { product: { price: null } }, errors: [unauthorized(['product', 'price'])] });
    const introspection = await router.query('{ __type(name: "Product") { fields { name } } }');
    expect(introspection.status).toBe(200);
  });

  it('@skip and @include: a skipped restricted field is neither fetched nor reported', async () => {
    const query = 'query Q($show: Boolean!) { product(upc: "1") { name price @include(if: $show) } }';
    expect((await router.query({ query, variables: { show: false } })).body).toEqual({ data: { product: { name: 'Table' } } });
    expect((await router.query({ query, variables: { show: true } })).body).toEqual({
      data: { product: { name: 'Table', price: null } },
      errors: [unauthorized(['product', 'price'])],
    });
  });

  it('APQ: the same checks on a persisted hash', async () => {
    const apq = await routerWith({}, [useAutomaticPersistedQueries({ enabled: true })]);
    try {
      const query = '{ product(upc: "2") { name price } }';
      const sha256Hash = createHash('sha256').update(query).digest('hex');
      const extensions = { persistedQuery: { version: 1, sha256Hash } };
      await apq.query({ query, extensions, headers: bearer(await token('read:price')) });
      const anonymous = await apq.query({ extensions });
      expect(anonymous.body).toEqual({ data: { product: { name: 'Chair', price: null } }, errors: [unauthorized(['product', 'price'])] });
    } finally {
      await apq.close();
    }
  });
});

describe('@policy', () => {
  it('asks the policy hook, per request, with the identity', async () => {
    const asked: string[] = [];
    const router = await routerWith({
      policy: (policy, { identity }) => {
        asked.push(policy);
        return identity?.claims.sub === 'staff';
      },
    });
    try {
      const query = '{ product(upc: "1") { supplier } }';
      const staff = await sign(key, { claims: { sub: 'staff' } });
      expect((await router.query({ query, headers: bearer(staff) })).body).toEqual({ data: { product: { supplier: 'ACME' } } });
      expect((await router.query({ query, headers: bearer(await token()) })).body).toEqual({
        data: { product: { supplier: null } },
        errors: [unauthorized(['product', 'supplier'])],
      });
      expect(asked).toEqual(['internal', 'internal']);
    } finally {
      await router.close();
    }
  });

  it('denies every policy without a hook', async () => {
    const router = await routerWith();
    try {
      const response = await router.query({ query: '{ product(upc: "1") { supplier } }', headers: bearer(await token('admin')) });
      expect(response.body.errors).toEqual([unauthorized(['product', 'supplier'])]);
    } finally {
      await router.close();
    }
  });
});

describe('reject_operation_if_unauthorized', () => {
  it('fails the whole operation with 403 and fetches nothing', async () => {
    const router = await routerWith({ reject_operation_if_unauthorized: true });
    try {
      reset();
      const response = await router.query(QUERY);
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ errors: [{ message: expect.stringMatching(/Product\.price/), extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } }] });
      expect(productsGraph.calls).toHaveLength(0);
      const allowed = await router.query({ query: QUERY, headers: bearer(await token('read:price')) });
      expect(allowed.status).toBe(200);
      expect(allowed.body.errors).toBeUndefined();
    } finally {
      await router.close();
    }
  });
});

describe("a team's own directive that is also called @authenticated", () => {
  it('is not enforced: only the directives of the Apollo specs are', async () => {
    const audit = await startSubgraph({
      name: 'audit',
      typeDefs: /* GraphQL */ `
        extend schema
          @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key", "@composeDirective", "@requiresScopes"])
          @link(url: "https://myorg.dev/audit/v1.0", import: ["@authenticated"])
          @composeDirective(name: "@authenticated")
        directive @authenticated(reason: String) on FIELD_DEFINITION
        type Query { me: String @authenticated(reason: "audit only") secret: String @requiresScopes(scopes: [["admin"]]) }
      `,
      resolvers: { Query: { me: () => 'alice', secret: () => 's3cr3t' } },
    });
    const router = await startTestRouter({ subgraphs: [audit], plugins: [useAuthorization()] });
    try {
      expect((await router.query('{ me secret }')).body).toEqual({
        data: { me: 'alice', secret: null },
        errors: [{ message: 'Unauthorized to access Query.secret: not authenticated.', path: ['secret'], extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } }],
      });
    } finally {
      await router.close();
      await audit.close();
    }
  });
});
