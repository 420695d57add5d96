/**
 * A union with an `@inaccessible` member (and an interface implemented by an
 * `@inaccessible` type, and an `@inaccessible` interface an object
 * implements) is a valid supergraph: composed here by both composers, it
 * loads, its API schema has the hidden types gone from possibleTypes and
 * interfaces (as Apollo Gateway's has), and an object of a hidden type a
 * subgraph answers becomes null, with the error of any runtime type outside
 * the API schema (shape-response.ts), never leaked. Same router, real
 * subgraph, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { createLogger } from '../../../src/kernel/logger.js';
import { createRouter, type Router } from '../../../src/kernel/router/router.js';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { COMPOSERS, composed } from './composers.js';

const LINK = 'extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@inaccessible", "@composeDirective"])';
const SUBGRAPH_SDL = /* GraphQL */ `
  ${LINK}
  type A { id: ID }
  type B @inaccessible { id: ID }
  union U = A | B
  interface I { id: ID }
  type C implements I { id: ID }
  type D implements I @inaccessible { id: ID }
  interface H @inaccessible { id: ID }
  type E implements H { id: ID }
  type Query { u: [U] i: [I] e: E }
`;

let subgraph: TestSubgraph;
const routers: Router[] = [];

beforeAll(async () => {
  subgraph = await startSubgraph({
    name: 'a',
    typeDefs: SUBGRAPH_SDL,
    resolvers: {
      Query: {
        u: () => [
          { __typename: 'A', id: 'a1' },
          { __typename: 'B', id: 'b1' },
        ],
        i: () => [
          { __typename: 'C', id: 'c1' },
          { __typename: 'D', id: 'd1' },
        ],
        e: () => ({ id: 'e1' }),
      },
      U: { __resolveType: (value: { __typename: string }) => value.__typename },
      I: { __resolveType: (value: { __typename: string }) => value.__typename },
      H: { __resolveType: () => 'E' },
    },
  });
});

afterAll(async () => {
  await Promise.all(routers.map((router) => router.close()));
  await subgraph?.close();
});

async function startRouter(supergraphSdl: string) {
  const router = await createRouter({
    config: { execution_config: { file: { watch: false } } },
    graph: { supergraphSdl, subgraphs: [{ kind: 'graphql', name: 'a', url: subgraph.url }], origin: 'test' },
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
  });
  routers.push(router);
  return async (query: string) => {
    const response = await router.handle(
      new Request('http://router.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query }),
      }),
    );
    return { status: response.status, body: (await response.json()) as { data?: unknown; errors?: { message: string; path?: unknown[] }[] } };
  };
}

/** The error for an object of a hidden type: the type is not named (@inaccessible hides the name too). */
const hidden = (abstract: string, path: unknown[]) => ({
  message: `Abstract type "${abstract}" was resolved to a type that does not exist inside the schema.`,
  path,
});

describe.each(COMPOSERS)('a supergraph composed by %s', (_, composer) => {
  let post: Awaited<ReturnType<typeof startRouter>>;
  beforeAll(async () => {
    post = await startRouter(composed(composer, SUBGRAPH_SDL, subgraph.url));
  });

  it('loads, and introspection shows no hidden member, implementation or interface', async () => {
    const response = await post(`{
      u: __type(name: "U") { possibleTypes { name } }
      i: __type(name: "I") { possibleTypes { name } }
      e: __type(name: "E") { interfaces { name } }
      b: __type(name: "B") { name }
      h: __type(name: "H") { name }
    }`);
    expect(response.body).toEqual({ data: { u: { possibleTypes: [{ name: 'A' }] }, i: { possibleTypes: [{ name: 'C' }] }, e: { interfaces: [] }, b: null, h: null } });
  });

  it('answers an item of a hidden union member with null and an error, on every run', async () => {
    for (let run = 0; run < 3; run++) {
      const response = await post('{ u { __typename ... on A { id } } }');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { u: [{ __typename: 'A', id: 'a1' }, null] }, errors: [hidden('U', ['u', 1])] });
    }
    const withoutTypename = await post('{ u { ... on A { id } } }');
    expect(withoutTypename.body).toEqual({ data: { u: [{ id: 'a1' }, null] }, errors: [hidden('U', ['u', 1])] });
  });

  it('answers an item of a hidden implementation with null and an error', async () => {
    const response = await post('{ i { __typename id } }');
    expect(response.body).toEqual({ data: { i: [{ __typename: 'C', id: 'c1' }, null] }, errors: [hidden('I', ['i', 1])] });
    expect(JSON.stringify(response.body)).not.toContain('d1');
  });

  it('refuses a fragment on a hidden type', async () => {
    const response = await post('{ u { ... on B { id } } }');
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.message).toMatch(/Unknown type "B"/);
  });
});

describe('what the API schema cannot mend is refused as Apollo refuses it', () => {
  const refusal = (sdl: string): string => {
    try {
      readSupergraph(sdl);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('readSupergraph accepted the supergraph');
  };

  it('a union all of whose members are @inaccessible', () => {
    const sdl = `${LINK} type A @inaccessible { id: ID } type B @inaccessible { id: ID } union U = A | B type Query { u: [U] x: Int }`;
    expect(COMPOSERS[0]![1](sdl, 'http://127.0.0.1:1/graphql').errors?.[0]?.message).toBe('Type "U" is in the API schema but all of its members are @inaccessible.');
    expect(refusal(composed(COMPOSERS[1]![1], sdl))).toBe('invalid supergraph: Type "U" is in the API schema but all of its members are @inaccessible.');
  });

  it('a directive argument of an @inaccessible type', () => {
    const sdl = `${LINK} @link(url: "https://example.com/my/v1.0", import: ["@my"]) @composeDirective(name: "@my")
      directive @my(e: E) on FIELD_DEFINITION enum E @inaccessible { A } type Query { x: Int @my(e: A) }`;
    expect(refusal(composed(COMPOSERS[1]![1], sdl))).toBe('invalid supergraph: Type "E" is @inaccessible but is referenced by "@my(e:)", which is in the API schema.');
  });
});
