/**
 * Compiled shaping and entity collection (src/kernel/compiled-code.ts): an
 * operation run again answers exactly as the first time, through every
 * construct, and anything unusual (a bad value, an error) is answered by the
 * general code. The test setup compiles at once and compares every compiled
 * result with the general code's (test/support/setup.ts), so each request
 * here also checks the two against each other.
 */
import { GraphQLScalarType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { assertSameResult } from '../../../src/kernel/compiled-code.js';
import { generateCollectSource } from '../../../src/kernel/execute/collect-codegen.js';
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../../federation/support/sdl.js';
import { useFederatedGraph } from '../../federation/support/use-federated-graph.js';

interface ItemRow {
  id: string;
  sku: string;
  price: number | null;
  weight: number | null;
  kind: string;
  tags: Array<Array<string | null>>;
  meta: unknown;
}

/** Rows the subgraphs answer from; tests change them to make a subgraph misbehave. */
const state: { items: ItemRow[]; stockFails: Set<string> } = { items: [], stockFails: new Set() };

function resetItems(): void {
  state.items = [
    { id: 'i1', sku: 'A-1', price: 9.5, weight: 2, kind: 'TOOL', tags: [['red', null], []], meta: { size: 'L' } },
    { id: 'i2', sku: 'B-2', price: 9.5, weight: 2, kind: 'TOY', tags: [], meta: [1, 2] },
    { id: 'i3', sku: 'C-3', price: null, weight: 7, kind: 'TOOL', tags: [['x']], meta: 'plain' },
    { id: 'i2', sku: 'B-2', price: 9.5, weight: 2, kind: 'TOY', tags: [], meta: null },
  ];
  state.stockFails = new Set();
}
resetItems();

const Json = new GraphQLScalarType({ name: 'JSON', serialize: (value) => value });

function catalog(): SubgraphOptions {
  return {
    name: 'catalog',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      scalar JSON
      enum Kind { TOOL TOY }
      type Query { items: [Item!]! media: [Media!]! }
      type Item @key(fields: "id") { id: ID! sku: String! price: Float weight: Int kind: Kind! tags: [[String]]! meta: JSON }
      union Media = Photo | Video
      type Photo { url: String! width: Int! }
      type Video { url: String! seconds: Float! }
    `,
    resolvers: {
      JSON: Json,
      Query: {
        items: () => state.items,
        media: () => [
          { __typename: 'Photo', url: 'p.png', width: 640 },
          { __typename: 'Video', url: 'v.mp4', seconds: 12.5 },
        ],
      },
      Media: { __resolveType: (m: { __typename: string }) => m.__typename },
      Item: { __resolveReference: (ref: { id: string }) => state.items.find((i) => i.id === ref.id) },
    },
  };
}

function stock(): SubgraphOptions {
  return {
    name: 'stock',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'external', 'requires')}
      type Item @key(fields: "id") {
        id: ID!
        price: Float @external
        weight: Int @external
        inStock: Boolean!
        shipping: Int! @requires(fields: "price weight")
      }
    `,
    resolvers: {
      Item: {
        __resolveReference: (ref: { id: string; price?: number | null; weight?: number }) => ({ ...ref }),
        inStock: (item: { id: string }) => {
          if (state.stockFails.has(item.id)) throw new Error(`no stock record for ${item.id}`);
          return item.id !== 'i3';
        },
        shipping: (item: { price: number | null; weight: number }) => Math.round((item.price ?? 0) + item.weight * 3),
      },
    },
  };
}

const graph = useFederatedGraph(() => [catalog(), stock()]);

const ITEMS = /* GraphQL */ `
  query Items {
    items { id sku __proto__: kind price tags meta inStock shipping }
  }
`;

describe('compiled execution', () => {
  it('answers a repeated operation exactly as the first time: nested lists, enums, custom scalars, a __proto__ alias, entities with @requires', async () => {
    resetItems();
    const first = await graph().query(ITEMS);
    expect(first.errors).toBeUndefined();
    const items = (first.data as { items: Array<Record<string, unknown>> }).items;
    expect(items[0]).toEqual({ id: 'i1', sku: 'A-1', ['__proto__']: 'TOOL', price: 9.5, tags: [['red', null], []], meta: { size: 'L' }, inStock: true, shipping: 16 });
    expect(Object.getPrototypeOf(items[0])).toBe(Object.prototype);
    expect(Object.keys(items[0]!)).toEqual(['id', 'sku', '__proto__', 'price', 'tags', 'meta', 'inStock', 'shipping']);
    expect(items[2]).toMatchObject({ id: 'i3', price: null, inStock: false, shipping: 21 });
    for (let i = 0; i < 3; i++) expect(await graph().query(ITEMS)).toEqual(first);
  });

  it('sends each entity once, with its @requires fields, and a null price as its own value', async () => {
    resetItems();
    await graph().query(ITEMS);
    // i2 is listed twice: one representation serves both positions; i3's null price is sent as null.
    expect(graph().representations('stock')).toEqual([
      [
        { __typename: 'Item', id: 'i1', price: 9.5, weight: 2 },
        { __typename: 'Item', id: 'i2', price: 9.5, weight: 2 },
        { __typename: 'Item', id: 'i3', price: null, weight: 7 },
      ],
    ]);
  });

  it('resolves union members on every run', async () => {
    const query = '{ media { ... on Photo { url width } ... on Video { url seconds } __typename } }';
    const expected = {
      data: {
        media: [
          { url: 'p.png', width: 640, __typename: 'Photo' },
          { url: 'v.mp4', seconds: 12.5, __typename: 'Video' },
        ],
      },
    };
    for (let i = 0; i < 3; i++) expect(await graph().query(query)).toEqual(expected);
  });

  it('answers a failed entity in an operation run before with the same errors and nulls as ever, at the failed position', async () => {
    resetItems();
    const query = '{ items { id inStock } }';
    expect((await graph().query(query)).errors).toBeUndefined();
    state.stockFails = new Set(['i2']);
    // i2 sits at positions 1 and 3; one representation answers both, its error lands at each.
    const failed = await graph().query(query);
    expect(failed.data).toBeNull();
    expect(failed.errors?.map((e) => e.path)).toEqual([
      ['items', 1, 'inStock'],
      ['items', 3, 'inStock'],
    ]);
    expect(failed.errors?.map((e) => e.message)).toEqual(['no stock record for i2', 'no stock record for i2']);
    expect(await graph().query(query)).toEqual(failed);
    resetItems();
    expect((await graph().query(query)).errors).toBeUndefined();
  });
});

describe('compiled code, what it takes on', () => {
  it('compiles entity collection for flat key and @requires fields, not for nested or conditional ones', () => {
    const flat = { typeCondition: 'Item', typename: { kind: 'runtime' as const }, fields: [{ name: 'id', responseKey: 'id', children: undefined }] };
    expect(generateCollectSource(['items', '@'], [flat])).toContain('function collect');
    const nested = { ...flat, fields: [{ name: 'size', responseKey: 'size', children: [{ name: 'cm', responseKey: 'cm', children: undefined }] }] };
    expect(generateCollectSource(['items', '@'], [nested])).toBeUndefined();
    const conditional = { ...flat, fields: [{ name: 'pages', responseKey: 'pages', children: undefined, typeCondition: 'Book' }] };
    expect(generateCollectSource(['items', '@'], [conditional])).toBeUndefined();
    expect(generateCollectSource(['items', '@'], [flat, flat])).toBeUndefined();
  });

  it('writes names from the operation into generated code only as string literals', () => {
    const hostile = { typeCondition: 'Item', typename: { kind: 'runtime' as const }, fields: [{ name: 'a"];throw 1;//', responseKey: "b'];throw 1;//", children: undefined }] };
    const source = generateCollectSource(['x"]);throw 1;//', '@'], [hostile])!;
    expect(() => new Function('H', source)).not.toThrow();
    expect(source).toContain(JSON.stringify('a"];throw 1;//'));
  });

  it('checks fail on any difference between compiled and general results', () => {
    expect(() => assertSameResult('shaper', { a: 1, b: 2 }, { b: 2, a: 1 })).toThrow(/differs/);
    expect(() => assertSameResult('shaper', { a: [1] }, { a: [1] })).not.toThrow();
  });
});
