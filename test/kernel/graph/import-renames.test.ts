/**
 * A supergraph whose `@link(import: [{ name, as }])` renames the security
 * directives (`@requiresScopes` as `@scopes`, `@inaccessible` as `@hidden`...,
 * as Apollo's composition writes them) is enforced exactly like the same
 * supergraph with the spec names: same router, same real subgraph, over HTTP.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { createLogger } from '../../../src/kernel/logger.js';
import { createRouter, type Router } from '../../../src/kernel/router/router.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { bearer, sign, signingKey, startJwksServer, type JwksServer, type SigningKey } from '../../plugins/authentication/jwks-fixtures.js';

const SUBGRAPH_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key", "@inaccessible", "@authenticated", "@requiresScopes", "@policy"])
  type Query {
    pub: String
    priv: String @requiresScopes(scopes: [["read"]])
    who: String @authenticated
    pol: String @policy(policies: [["p"]])
    secret: String @inaccessible
    kind: Kind
    internal: Internal @inaccessible
  }
  enum Kind { A B @inaccessible C }
  type Internal @inaccessible { x: Int }
`;
const RENAMED = readFileSync(new URL('./fixtures/import-renamed-supergraph.graphql', import.meta.url), 'utf8');

let subgraph: TestSubgraph;
let key: SigningKey;
let jwks: JwksServer;
const routers: Router[] = [];

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'a',
    typeDefs: SUBGRAPH_SDL,
    resolvers: { Query: { pub: () => 'pub', priv: () => 'priv', who: () => 'who', pol: () => 'pol', secret: () => 'secret', kind: () => 'A' } },
  });
  key = await signingKey('k1', 'ES256');
  jwks = await startJwksServer([key]);
});

afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await Promise.all([subgraph?.close(), jwks?.close()]);
});

/** A router over `supergraphSdl`, listening on loopback; returns its /graphql URL. */
async function startRouter(supergraphSdl: string): Promise<string> {
  const router = await createRouter({
    config: { execution_config: { file: { watch: false } } },
    plugins: [
      useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }),
      useAuthorization({ policy: (policy, { identity }) => policy === 'p' && (identity?.scopes.has('p') ?? false) }),
    ],
    graph: { supergraphSdl, subgraphs: [{ kind: 'graphql', name: 'a', url: subgraph.url }], origin: 'test' },
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
  });
  routers.push(router);
  const { url } = await router.listen('127.0.0.1:0');
  return `${url}/graphql`;
}

async function post(url: string, query: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: { code?: string } }[] } };
}

const unauthorized = (field: string) => ({ message: expect.stringMatching(/^Unauthorized to access /), path: [field], extensions: { code: 'UNAUTHORIZED_FIELD_OR_TYPE' } });
const sentQueries = () => subgraph.calls.map((call) => call.query).join('\n');

describe.each([
  ['spec names', () => composeSubgraphs([{ name: 'a', url: 'http://127.0.0.1:1/graphql', sdl: SUBGRAPH_SDL }]).supergraphSdl],
  ['import renames (@scopes, @authn, @pol, @hidden)', () => RENAMED],
])('a supergraph with %s', (_, supergraph) => {
  let url: string;
  beforeAll(async () => {
    url = await startRouter(supergraph());
  });

  it('anonymous: @requiresScopes, @authenticated and @policy fields are refused and never fetched', async () => {
    subgraph.reset();
    const response = await post(url, '{ pub priv who pol }');
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({ pub: 'pub', priv: null, who: null, pol: null });
    expect(response.body.errors).toEqual(expect.arrayContaining([unauthorized('priv'), unauthorized('who'), unauthorized('pol')]));
    expect(response.body.errors).toHaveLength(3);
    expect(sentQueries()).not.toMatch(/priv|who|pol/);
  });

  it('a token without scopes: @authenticated only; the scope and the policy grant the rest', async () => {
    const plain = await post(url, '{ priv who pol }', bearer(await sign(key, {})));
    expect(plain.body.data).toEqual({ priv: null, who: 'who', pol: null });
    expect(plain.body.errors).toHaveLength(2);
    const granted = await post(url, '{ priv who pol }', bearer(await sign(key, { claims: { scope: 'read p' } })));
    expect(granted.body).toEqual({ data: { priv: 'priv', who: 'who', pol: 'pol' } });
  });

  it('@inaccessible fields and types cannot be queried', async () => {
    for (const query of ['{ secret }', '{ internal { x } }']) {
      const response = await post(url, query);
      expect(response.status).toBe(400);
      expect(response.body.errors?.[0]?.message).toMatch(/Cannot query field "(secret|internal)" on type "Query"/);
    }
    const enumValue = await post(url, '{ q: __type(name: "Kind") { enumValues { name } } }');
    expect(enumValue.body.data).toEqual({ q: { enumValues: [{ name: 'A' }, { name: 'C' }] } });
  });

  it('introspection shows no inaccessible field, type, enum value or renamed directive', async () => {
    const response = await post(url, '{ __schema { types { name } directives { name } } q: __type(name: "Query") { fields { name } } i: __type(name: "Internal") { name } }');
    const data = response.body.data as { __schema: { types: { name: string }[]; directives: { name: string }[] }; q: { fields: { name: string }[] }; i: unknown };
    expect(data.q.fields.map((f) => f.name)).toEqual(['pub', 'priv', 'who', 'pol', 'kind']);
    expect(data.i).toBeNull();
    expect(data.__schema.types.map((t) => t.name)).not.toContain('Internal');
    const directives = data.__schema.directives.map((d) => d.name);
    for (const name of ['hidden', 'scopes', 'authn', 'pol', 'inaccessible', 'requiresScopes']) expect(directives).not.toContain(name);
  });
});

describe('import renames that cannot be undone', () => {
  const invalid = (sdl: string) => {
    try {
      readSupergraph(sdl);
    } catch (error) {
      return error as { code?: string; message: string };
    }
    throw new Error('readSupergraph accepted the supergraph');
  };

  it('refuses a rename whose spec name is taken by another directive', () => {
    const clash = RENAMED.replaceAll('directive @authn on', 'directive @requiresScopes on FIELD_DEFINITION\n\ndirective @authn on');
    const error = invalid(clash);
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toMatch(/@link imports @requiresScopes as @scopes, but @requiresScopes is also used as a different directive/);
  });

  it('refuses two specs imported under the same name, and a directive renamed to a type', () => {
    const twice = RENAMED.replaceAll('{name: "@authenticated", as: "@authn"}', '{name: "@authenticated", as: "@scopes"}');
    expect(invalid(twice)).toMatchObject({ code: 'SUPERGRAPH_INVALID', message: expect.stringMatching(/as "@scopes"/) });
    const mixed = RENAMED.replaceAll('{name: "@policy", as: "@pol"}', '{name: "@policy", as: "Pol"}');
    expect(invalid(mixed)).toMatchObject({ code: 'SUPERGRAPH_INVALID', message: expect.stringMatching(/a directive must be renamed to a directive/) });
  });

  it('refuses a rename to a name another @link imports as it is, instead of turning that directive into another', () => {
    const scopesLink = '@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", for: SECURITY, import: [{name: "@requiresScopes", as: "@scopes"}])';
    const tagAsScopes = '@link(url: "https://specs.apollo.dev/tag/v0.3", import: [{name: "@tag", as: "@requiresScopes"}])';
    const plainScopes = RENAMED.replaceAll('@scopes', '@requiresScopes');
    // Imported by name, then by the spec's own name (a link without import: brings in @requiresScopes).
    for (const scopes of ['import: ["@requiresScopes"]', '']) {
      const link = `@link(url: "https://specs.apollo.dev/requiresScopes/v0.1", for: SECURITY${scopes ? `, ${scopes}` : ''})`;
      const stolen = plainScopes.replace(scopesLink.replaceAll('@scopes', '@requiresScopes'), `${link} ${tagAsScopes}`);
      expect(stolen).toContain(tagAsScopes);
      expect(invalid(stolen)).toMatchObject({
        code: 'SUPERGRAPH_INVALID',
        message: expect.stringContaining('@link imports @tag as @requiresScopes, but @link(url: "https://specs.apollo.dev/requiresScopes/v0.1") also imports @requiresScopes'),
      });
    }
  });

  it('undoes a swap of two names without merging them', () => {
    const swapped = readSupergraph(
      RENAMED.replaceAll('{name: "@authenticated", as: "@authn"}', '{name: "@authenticated", as: "@scopes"}')
        .replaceAll('{name: "@requiresScopes", as: "@scopes"}', '{name: "@requiresScopes", as: "@authenticated"}')
        .replaceAll('directive @authn on', 'directive @scopes on')
        .replaceAll('directive @scopes(scopes:', 'directive @authenticated(scopes:')
        .replaceAll('priv: String @scopes(', 'priv: String @authenticated(')
        .replaceAll('who: String @authn', 'who: String @scopes'),
    );
    const fields = swapped.schema.getQueryType()?.getFields();
    expect(fields?.priv?.astNode?.directives?.map((d) => d.name.value)).toEqual(['requiresScopes']);
    expect(fields?.who?.astNode?.directives?.map((d) => d.name.value)).toEqual(['authenticated']);
  });
});
