/**
 * The link spec's rule, as Apollo Gateway applies it: a supergraph that links
 * a feature `for: EXECUTION` or `for: SECURITY` the router does not implement
 * is refused at load, naming the feature (Apollo Connectors, for one, would
 * otherwise be served by sending GraphQL to their placeholder URL). What
 * Switchyard implements keeps loading: the supergraphs both composers write
 * for @authenticated (enforced through the router), @requiresScopes,
 * @policy, @inaccessible, @tag, @cost/@listSize and composed directives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAuthentication } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { RouterError } from '../../../src/kernel/errors.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { createLogger } from '../../../src/kernel/logger.js';
import { createRouter } from '../../../src/kernel/router/router.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { startJwksServer, type JwksServer, signingKey } from '../../plugins/authentication/jwks-fixtures.js';
import { COMPOSERS, composed } from './composers.js';

function refusal(sdl: string): string {
  try {
    readSupergraph(sdl);
  } catch (error) {
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).code).toBe('SUPERGRAPH_INVALID');
    return (error as Error).message;
  }
  throw new Error('readSupergraph accepted the supergraph');
}

const AUTHENTICATED_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@authenticated"])
  type Query { pub: String who: String @authenticated }
`;

/** A composed supergraph with one more `@link` on its schema. */
function withLink(link: string): string {
  const supergraph = composed(COMPOSERS[1]![1], AUTHENTICATED_SDL);
  return supergraph.replace(/@link\(url: "https:\/\/specs\.apollo\.dev\/link\/v1\.0"\)/, (bootstrap) => `${bootstrap}\n  ${link}`);
}

describe('an unsupported feature for EXECUTION or SECURITY', () => {
  it('refuses Apollo Connectors (composed by @apollo/composition), naming the feature', async () => {
    const connectors = `extend schema
      @link(url: "https://specs.apollo.dev/federation/v2.10", import: ["@key"])
      @link(url: "https://specs.apollo.dev/connect/v0.1", import: ["@connect", "@source"])
      @source(name: "api", http: { baseURL: "http://127.0.0.1:1" })
      type Post { id: ID! title: String }
      type Query { posts: [Post] @connect(source: "api", http: { GET: "/posts" }, selection: "id title") }`;
    const supergraphSdl = composed(COMPOSERS[0]![1], connectors);
    const feature = /@link\(url: "(https:\/\/specs\.apollo\.dev\/connect\/v[\d.]+)", for: EXECUTION\)/.exec(supergraphSdl)?.[1];
    expect(feature).toBeDefined();
    const load = createRouter({
      config: { execution_config: { file: { watch: false } } },
      graph: { supergraphSdl, subgraphs: [{ kind: 'graphql', name: 'a', url: 'http://127.0.0.1:1/graphql' }], origin: 'test' },
      logger: createLogger({ level: 'silent' }),
    });
    const error = await load.then(
      async (router) => {
        await router.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).code).toBe('SUPERGRAPH_INVALID');
    expect((error as RouterError).message).toContain(`invalid supergraph: feature ${feature} is for: EXECUTION but is unsupported: Switchyard does not implement it`);
  });

  it('refuses an unknown feature for SECURITY', () => {
    expect(refusal(withLink('@link(url: "https://example.com/acl/v1.0", for: SECURITY)'))).toMatch(
      /^invalid supergraph: feature https:\/\/example\.com\/acl\/v1\.0 is for: SECURITY but is unsupported: .*\(supported: link v1\.0, join v0\.2\/v0\.3\/v0\.4\/v0\.5, .*authenticated v0\.1/,
    );
  });

  it('refuses a version of a supported spec Switchyard does not implement', () => {
    expect(refusal(withLink('@link(url: "https://specs.apollo.dev/authenticated/v0.2", for: SECURITY)'))).toMatch(
      /^invalid supergraph: feature https:\/\/specs\.apollo\.dev\/authenticated\/v0\.2 is for: SECURITY but is unsupported/,
    );
    expect(refusal(withLink('@link(url: "https://specs.apollo.dev/cacheTag/v0.1", for: EXECUTION)'))).toMatch(
      /^invalid supergraph: feature https:\/\/specs\.apollo\.dev\/cacheTag\/v0\.1 is for: EXECUTION but is unsupported/,
    );
  });

  it('loads an unknown feature without for: (metadata)', () => {
    expect(() => readSupergraph(withLink('@link(url: "https://example.com/acl/v1.0")'))).not.toThrow();
  });
});

describe.each(COMPOSERS)('supported features composed by %s', (_, composer) => {
  it('@authenticated (for: SECURITY) loads and is enforced', async () => {
    const supergraph = composed(composer, AUTHENTICATED_SDL);
    expect(supergraph).toMatch(/@link\(url: "https:\/\/specs\.apollo\.dev\/authenticated\/v0\.1", for: SECURITY\)/);
    const router = await createRouter({
      config: { execution_config: { file: { watch: false } } },
      plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization({})],
      graph: { supergraphSdl: supergraph, subgraphs: [{ kind: 'graphql', name: 'a', url: subgraph.url }], origin: 'test' },
      logger: createLogger({ level: 'silent' }),
    });
    try {
      const response = await router.handle(
        new Request('http://router.test/graphql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query: '{ pub who }' }),
        }),
      );
      const body = (await response.json()) as { data: unknown; errors?: { extensions?: { code?: string } }[] };
      expect(body.data).toEqual({ pub: 'pub', who: null });
      expect(body.errors?.[0]?.extensions?.code).toBe('UNAUTHORIZED_FIELD_OR_TYPE');
    } finally {
      await router.close();
    }
  });

  it('@inaccessible, @requiresScopes, @policy, @tag, @cost/@listSize and a composed directive load', () => {
    const sdl = `extend schema
      @link(url: "https://specs.apollo.dev/federation/v2.9", import: ["@inaccessible", "@requiresScopes", "@policy", "@tag", "@cost", "@listSize", "@composeDirective"])
      @link(url: "https://example.com/custom/v1.0", import: ["@audit"]) @composeDirective(name: "@audit")
      directive @audit on FIELD_DEFINITION
      type Query {
        a: String @requiresScopes(scopes: [["read"]]) @tag(name: "t") @cost(weight: 2)
        b: String @policy(policies: [["p"]]) @audit
        c: String @inaccessible
        list(first: Int): [String] @listSize(slicingArguments: ["first"])
      }`;
    const supergraph = composed(composer, sdl);
    expect(supergraph).toMatch(/for: SECURITY/);
    expect(() => readSupergraph(supergraph)).not.toThrow();
  });
});

let subgraph: TestSubgraph;
let jwks: JwksServer;

beforeAll(async () => {
  subgraph = await startSubgraph({ name: 'a', typeDefs: AUTHENTICATED_SDL, resolvers: { Query: { pub: () => 'pub', who: () => 'who' } } });
  jwks = await startJwksServer([await signingKey('k1', 'ES256')]);
});

afterAll(async () => {
  await Promise.all([subgraph?.close(), jwks?.close()]);
});
