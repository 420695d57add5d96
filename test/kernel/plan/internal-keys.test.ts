/**
 * The planner fetches a field it needs itself (a key, a `@requires` field)
 * under the field's own name only when the client's field under that name
 * at the position is the same field with nothing that could change its
 * value: no arguments, and no directive for the subgraph in any fragment
 * (the subgraph merges `upc` and `... on Product { upc @upper }` into one
 * field, so the router would read the changed value as the key).
 */
import { parse, type DirectiveNode, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { expect, it } from 'vitest';
import type { NSelection } from '../../../src/kernel/plan/normalize.js';
import { internalKey } from '../../../src/kernel/plan/planner-support.js';

const UPPER = ((parse('{ a @upper }').definitions[0] as OperationDefinitionNode).selectionSet.selections[0] as FieldNode).directives![0] as DirectiveNode;

const field = (name: string, directives?: readonly DirectiveNode[]): NSelection => ({
  kind: 'Field',
  responseKey: name,
  name,
  arguments: [],
  ...(directives ? { directives } : {}),
  selections: undefined,
});

it('shares the client field when it is the same field', () => {
  expect(internalKey([field('upc')], 'upc', [])).toBe('upc');
  expect(internalKey(undefined, 'upc', [])).toBe('upc');
});

it('takes an internal key when the client field, or its copy in any fragment, has a directive', () => {
  expect(internalKey([field('upc', [UPPER])], 'upc', [])).toBe('__sy_upc');
  expect(internalKey([field('upc'), { kind: 'Fragment', typeCondition: 'Product', selections: [field('upc', [UPPER])] }], 'upc', [])).toBe('__sy_upc');
});

it('takes an internal key for a field with arguments', () => {
  const args = (parse('{ a(x: 1) }').definitions[0] as OperationDefinitionNode).selectionSet.selections[0] as FieldNode;
  expect(internalKey([], 'price', args.arguments!)).toMatch(/^__sy_price_/);
});
