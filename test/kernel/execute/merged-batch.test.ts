/**
 * Merged entity fetches (a plan node with `entries`): each entry's objects
 * are collected as if fetched alone, then equal representations from
 * several paths go out once, their answer reaching every position that
 * asked, and errors land at the path of the entry a representation first
 * came from. Results attached to the tree keep every part of an object.
 */
import { describe, expect, it } from 'vitest';
import { collectEntityBatch } from '../../../src/kernel/execute/compiled-collect.js';
import { collectFetchBatch } from '../../../src/kernel/execute/merged-batch.js';
import { type JsonObject, ResponseTree } from '../../../src/kernel/execute/response-tree.js';
import type { FetchNode, PathSegment, RepresentationSpec } from '../../../src/kernel/plan/query-plan.js';

const facts = { isObjectType: () => true, satisfies: (type: string, condition: string) => type === condition };

const byUpc: RepresentationSpec = {
  typeCondition: 'Product',
  typename: { kind: 'runtime' },
  fields: [{ name: 'upc', responseKey: 'upc', children: undefined }],
};
const byUpcAndPrice: RepresentationSpec = {
  ...byUpc,
  fields: [...byUpc.fields, { name: 'price', responseKey: 'price', children: undefined }],
};

function mergedNode(paths: PathSegment[][], spec: RepresentationSpec): FetchNode {
  return {
    kind: 'Fetch',
    id: 7,
    subgraph: 'products',
    fetchKind: 'entity',
    operationType: 'query',
    operation: '',
    operationName: undefined,
    selectionSet: '',
    variableUsages: [],
    mergePath: paths[0]!,
    representations: [spec],
    entries: paths.map((path) => ({ path, representations: [spec] })),
  };
}

/** The batch of a node merging the objects at `left.@` and `right.@` of `tree`. */
const leftAndRight = (tree: ResponseTree, spec = byUpc) =>
  collectFetchBatch(
    tree,
    mergedNode(
      [
        ['left', '@'],
        ['right', '@'],
      ],
      spec,
    ),
    facts,
  );

const product = (upc: unknown, price?: number): JsonObject => (price === undefined ? { __typename: 'Product', upc } : { __typename: 'Product', upc, price }) as JsonObject;

describe('merged entity batches', () => {
  it('sends an entity reached by two paths once and answers every position of both', () => {
    const a1 = product('p1');
    const a2 = product('p2');
    const b1 = product('p2');
    const b2 = product('p3');
    const b3 = product('p1');
    const tree = new ResponseTree();
    tree.addRoot({ left: [a1, a2], right: [b1, b2, b3] } as never);
    const batch = leftAndRight(tree)!;
    expect(batch.representations).toEqual([product('p1'), product('p2'), product('p3')]);
    expect(batch.targets).toEqual([[a1, b3], [a2, b1], [b2]]);
    expect(batch.targets[0]![1]).toBe(b3);
    // Errors of a representation go to the first position that asked for it.
    expect([0, 1, 2].map((i) => batch.pathOf(i))).toEqual([
      ['left', 0],
      ['left', 1],
      ['right', 1],
    ]);
  });

  it('leaves the entries own batches as they were when it joins their positions', () => {
    const a = product('p1');
    const b = product('p1');
    const tree = new ResponseTree();
    tree.addRoot({ left: [a], right: [b] } as never);
    const left = collectEntityBatch(tree, mergedNode([['left', '@']], byUpc), facts)!;
    leftAndRight(tree);
    expect(left.targets).toEqual([[a]]);
  });

  it('attaches an object shared by both paths once', () => {
    const shared = product('p1');
    const tree = new ResponseTree();
    tree.addRoot({ left: [shared], right: [shared] } as never);
    const batch = leftAndRight(tree)!;
    expect(batch.targets).toEqual([[shared]]);
  });

  it('tells a string key from a number key, and compares several key fields in full', () => {
    const tree = new ResponseTree();
    tree.addRoot({ left: [product('1'), product(1)], right: [product(1), product('1')] } as never);
    expect(leftAndRight(tree)!.representations).toEqual([product('1'), product(1)]);

    const priced = new ResponseTree();
    priced.addRoot({ left: [product('p1', 1), product('p1', 2)], right: [product('p1', 2), product('p1', 3)] } as never);
    const batch = leftAndRight(priced, byUpcAndPrice)!;
    expect(batch.representations).toEqual([product('p1', 1), product('p1', 2), product('p1', 3)]);
    expect(batch.targets.map((targets) => targets.length)).toEqual([1, 2, 1]);
  });
});

describe('response tree attachments', () => {
  it('keeps every later part of an object, in arrival order', () => {
    const tree = new ResponseTree();
    const primary = { __typename: 'Product', upc: 'p1' } as JsonObject;
    tree.addRoot({ product: primary } as never);
    const first = { name: 'Chair' } as JsonObject;
    const second = { inStock: true } as JsonObject;
    const third = { shippingEstimate: 3 } as JsonObject;
    tree.attach(primary, first);
    tree.attach(primary, second);
    tree.attach(primary, third);
    expect(tree.extrasOf(primary)).toEqual([first, second, third]);
    expect(tree.viewOf([primary])).toEqual([primary, first, second, third]);
  });
});
