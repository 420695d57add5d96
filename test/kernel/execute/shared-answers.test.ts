import { describe, expect, it } from 'vitest';
import { SharedAnswers } from '../../../src/kernel/execute/shared-answers.js';
import { variablesJson } from '../../../src/kernel/fetch/variables-json.js';
import type { SubgraphResponse } from '../../../src/kernel/fetch/subgraph-types.js';
import { memoOn } from '../../../src/kernel/object-memo.js';

const answer = (n: number): SubgraphResponse => ({ data: { n } });

describe('work shared between requests that got the same answers', () => {
  it('finds a value only for the same owner and the very same answers, in order', () => {
    const shared = new SharedAnswers<object, string>();
    const plan = {};
    const [a, b] = [answer(1), answer(2)];
    shared.set(plan, [a, b], 'shaped');
    expect(shared.get(plan, [a, b])).toBe('shaped');
    expect(shared.get({}, [a, b])).toBeUndefined();
    expect(shared.get(plan, [answer(1), b])).toBeUndefined();
    expect(shared.get(plan, [b])).toBeUndefined();
    expect(shared.get(plan, [])).toBeUndefined();
  });

  it('keeps one value per owner on a long-lived answer, whatever came before it', () => {
    const shared = new SharedAnswers<object, number>();
    const plan = {};
    const cached = answer(0);
    for (let i = 0; i < 100; i++) shared.set(plan, [answer(i), cached], i);
    expect(Object.getOwnPropertySymbols(cached).map((key) => (cached as Record<symbol, unknown[]>)[key]!.length)).toEqual([1]);
  });

  it('leaves answers as plugins see them: no visible keys, frozen answers simply not shared', () => {
    const shared = new SharedAnswers<object, string>();
    const plan = {};
    const open = answer(1);
    shared.set(plan, [open], 'x');
    expect(Object.keys(open)).toEqual(['data']);
    expect(JSON.stringify(open)).toBe('{"data":{"n":1}}');
    expect({ ...open }).toEqual({ data: { n: 1 } });
    const frozen = Object.freeze(answer(2));
    expect(() => shared.set(plan, [frozen], 'y')).not.toThrow();
    expect(shared.get(plan, [frozen])).toBeUndefined();
  });
});

describe('memoOn', () => {
  it('computes once per object and stays out of JSON and spreads', () => {
    const key = Symbol('test');
    const object = { a: 1 };
    let calls = 0;
    expect(memoOn(object, key, () => ++calls)).toBe(1);
    expect(memoOn(object, key, () => ++calls)).toBe(1);
    expect(JSON.stringify(object)).toBe('{"a":1}');
    expect(Object.getOwnPropertySymbols({ ...object })).toEqual([]);
  });

  it('recomputes for frozen objects rather than failing', () => {
    const key = Symbol('test');
    const frozen = Object.freeze({ a: 1 });
    let calls = 0;
    memoOn(frozen, key, () => ++calls);
    expect(memoOn(frozen, key, () => ++calls)).toBe(2);
  });

  it('gives a variables object its JSON text once', () => {
    const variables = { representations: [{ __typename: 'Product', upc: '1' }] };
    const text = variablesJson(variables);
    expect(text).toBe(JSON.stringify(variables));
    expect(variablesJson(variables)).toBe(text);
    expect(variablesJson(Object.freeze({ first: 3 }))).toBe('{"first":3}');
  });
});
