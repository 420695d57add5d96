/**
 * The planner fetches a field it needs itself (a key, a `@requires` field)
 * under the field's own name only when every client field under that
 * response key, anywhere in the operation, is that same plain field (no
 * alias of another field, no arguments): fields in sibling fragments answer
 * into the same objects at the subgraph, so a look at one position alone
 * could put the planner's `upc` beside a client's `upc: name`.
 */
import { parse, type FieldNode, type OperationDefinitionNode } from 'graphql';
import { expect, it } from 'vitest';
import type { NSelection } from '../../../src/kernel/plan/normalize.js';
import { ClientKeys, internalKey } from '../../../src/kernel/plan/planner-support.js';

const field = (responseKey: string, name = responseKey, selections?: NSelection[]): NSelection => ({ kind: 'Field', responseKey, name, arguments: [], selections });
const ARGS = ((parse('{ a(x: 1) }').definitions[0] as OperationDefinitionNode).selectionSet.selections[0] as FieldNode).arguments!;

it("shares the client's key when every field under it is the plain field", () => {
  expect(internalKey(new ClientKeys([field('upc'), { kind: 'Fragment', typeCondition: 'Product', selections: [field('upc')] }]), 'upc', [])).toBe('upc');
  expect(internalKey(new ClientKeys([]), 'upc', [])).toBe('upc');
});

it('takes an internal key when the client uses the key for another field or with arguments, at any depth or fragment', () => {
  const nested = [field('things', 'things', [field('id'), { kind: 'Fragment', typeCondition: 'Product', selections: [field('upc', 'name')] }])];
  expect(internalKey(new ClientKeys(nested), 'upc', [])).toBe('__sy_upc');
  expect(internalKey(new ClientKeys(nested), 'id', [])).toBe('id');
  expect(internalKey(new ClientKeys([{ kind: 'Field', responseKey: 'weight', name: 'weight', arguments: ARGS, selections: undefined }]), 'weight', [])).toBe('__sy_weight');
});

it("lengthens an internal key while a client key equals it, and hashes the planner's own arguments into it", () => {
  expect(internalKey(new ClientKeys([field('upc', 'name'), field('__sy_upc', 'name'), field('__sy_upc_', 'name')]), 'upc', [])).toBe('__sy_upc__');
  expect(internalKey(new ClientKeys([]), 'price', ARGS)).toMatch(/^__sy_price_[0-9a-z]+$/);
});
