/**
 * Entity representations sent to a subgraph: each distinct entity once, in
 * the order first seen, and every position it was found at merged back.
 * Batches are built as the executor builds them (compiled where it can;
 * the test setup checks the compiled batch against the general one).
 */
import { describe, expect, it } from 'vitest';
import { collectEntityBatch } from '../../../src/kernel/execute/compiled-collect.js';
import { ResponseTree } from '../../../src/kernel/execute/response-tree.js';
import type { FetchNode, RepresentationSpec } from '../../../src/kernel/plan/query-plan.js';

const OBJECT_TYPES = new Set(['User', 'Bot']);
const facts = {
  isObjectType: (name: string) => OBJECT_TYPES.has(name),
  satisfies: (type: string, condition: string) => type === condition || (condition === 'Account' && OBJECT_TYPES.has(type)),
};

function batchOf(items: unknown[], specs: RepresentationSpec[]) {
  const tree = new ResponseTree();
  tree.addRoot({ items } as never);
  const node: FetchNode = {
    kind: 'Fetch',
    id: 1,
    subgraph: 'accounts',
    fetchKind: 'entity',
    operationType: 'query',
    operation: '',
    operationName: undefined,
    selectionSet: '',
    variableUsages: [],
    mergePath: ['items', '@'],
    representations: specs,
  };
  const batch = collectEntityBatch(tree, node, facts)!;
  /** Each representation's positions, as indices into `items`. */
  const positions = batch.targets.map((targets) => targets.map((target) => items.indexOf(target)));
  return { ...batch, positions, firstPaths: batch.representations.map((_, i) => batch.pathOf(i)) };
}

const byId = (typeCondition: string, kind: 'runtime' | 'fixed' = 'runtime'): RepresentationSpec => ({
  typeCondition,
  typename: kind === 'fixed' ? { kind, name: typeCondition } : { kind },
  fields: [{ name: 'id', responseKey: 'id', children: undefined }],
});

describe('representations of an entity fetch', () => {
  it('sends each entity once and merges its result into every position it was found at', () => {
    const batch = batchOf(
      [
        { __typename: 'User', id: 'u1' },
        { __typename: 'User', id: 'u2' },
        { __typename: 'User', id: 'u1' },
      ],
      [byId('User')],
    );
    expect(batch.representations).toEqual([
      { __typename: 'User', id: 'u1' },
      { __typename: 'User', id: 'u2' },
    ]);
    expect(batch.positions).toEqual([[0, 2], [1]]);
    expect(batch.firstPaths).toEqual([
      ['items', 0],
      ['items', 1],
    ]);
  });

  it('keeps entities of different types apart when they share an id under an interface', () => {
    const batch = batchOf(
      [
        { __typename: 'User', id: '1' },
        { __typename: 'Bot', id: '1' },
      ],
      [byId('Account')],
    );
    expect(batch.representations).toEqual([
      { __typename: 'User', id: '1' },
      { __typename: 'Bot', id: '1' },
    ]);
  });

  it('tells a number id from the same digits as a string', () => {
    const batch = batchOf(
      [
        { __typename: 'User', id: 1 },
        { __typename: 'User', id: '1' },
        { __typename: 'User', id: 1 },
      ],
      [byId('User')],
    );
    expect(batch.representations).toEqual([
      { __typename: 'User', id: 1 },
      { __typename: 'User', id: '1' },
    ]);
    expect(batch.positions).toEqual([[0, 2], [1]]);
  });

  it('leaves out objects whose key is missing (their fetch failed) and dedupes object-valued keys by content', () => {
    const batch = batchOf([{ __typename: 'User' }, { __typename: 'User', id: { org: 'a', n: 1 } }, { __typename: 'User', id: { org: 'a', n: 1 } }], [byId('User')]);
    expect(batch.representations).toEqual([{ __typename: 'User', id: { org: 'a', n: 1 } }]);
    expect(batch.positions).toEqual([[1, 2]]);
    expect(batch.firstPaths).toEqual([['items', 1]]);
  });

  it('dedupes on every key and @requires field: null, numbers and their digits as strings stay apart', () => {
    const spec: RepresentationSpec = {
      typeCondition: 'User',
      typename: { kind: 'runtime' },
      fields: ['id', 'plan', 'score'].map((name) => ({ name, responseKey: name, children: undefined })),
    };
    const batch = batchOf(
      [
        { __typename: 'User', id: 'u1', plan: 'pro', score: 1 },
        { __typename: 'User', id: 'u1', plan: 'pro', score: '1' },
        { __typename: 'User', id: 'u1', plan: null, score: 1 },
        { __typename: 'User', id: 'u1', plan: 'pro', score: 1 },
        { __typename: 'User', id: 'u1', score: 1 },
        { __typename: 'User', id: 'u1', plan: null, score: 1 },
      ],
      [spec],
    );
    expect(batch.representations).toEqual([
      { __typename: 'User', id: 'u1', plan: 'pro', score: 1 },
      { __typename: 'User', id: 'u1', plan: 'pro', score: '1' },
      { __typename: 'User', id: 'u1', plan: null, score: 1 },
    ]);
    expect(batch.positions).toEqual([[0, 3], [1], [2, 5]]);
  });

  it('writes a fixed typename for a subgraph that knows the type as an interface object', () => {
    const batch = batchOf([{ __typename: 'User', id: 'u1' }], [byId('Account', 'fixed')]);
    expect(batch.representations).toEqual([{ __typename: 'Account', id: 'u1' }]);
  });

  it('writes the static type for objects fetched without __typename (positions of one object type)', () => {
    // The planner asks for `__typename` only where the type is known at runtime alone.
    const batch = batchOf([{ id: 'u1' }, { id: 'u2' }, { id: 'u1' }], [byId('User')]);
    expect(batch.representations).toEqual([
      { __typename: 'User', id: 'u1' },
      { __typename: 'User', id: 'u2' },
    ]);
    expect(batch.positions).toEqual([[0, 2], [1]]);
    const fixed = batchOf([{ id: 'u1' }], [byId('Account', 'fixed')]);
    expect(fixed.representations).toEqual([{ __typename: 'Account', id: 'u1' }]);
  });
});
