/**
 * The check for `@skip`/`@include` at a subscription's top level follows
 * fragments with an explicit stack: a chain of fragments is as long as the
 * body allows (max_request_body may be raised), and the check runs before
 * graphql-js validates (outside its stack-overflow guard).
 */
import { parse } from 'graphql';
import { expect, it } from 'vitest';
import { subscriptionRootConditionError } from '../../../src/kernel/router/subscription-root-conditions.js';

const chain = (length: number, last: string) =>
  `subscription Deep { ...F0 } ${Array.from({ length }, (_, i) => `fragment F${i} on Subscription{${i + 1 < length ? `...F${i + 1}` : last}}`).join(' ')}`;

it('follows a chain of 50,000 fragments without recursion, to a condition at its end or to none', () => {
  expect(subscriptionRootConditionError(parse(chain(50_000, 'tick @skip(if: true)')))?.message).toBe(
    'Subscription "Deep" must not use `@skip` or `@include` directives in the top level selection.',
  );
  expect(subscriptionRootConditionError(parse(chain(50_000, 'tick')))).toBeUndefined();
});

it('looks at the top level only, and at each fragment once however often it is spread', () => {
  expect(subscriptionRootConditionError(parse('subscription { tick { at @skip(if: true) } }'))).toBeUndefined();
  expect(subscriptionRootConditionError(parse('subscription { ...A ...A ... on Subscription { ...A } } fragment A on Subscription { tick }'))).toBeUndefined();
  expect(subscriptionRootConditionError(parse('query Q { a @skip(if: true) }'))).toBeUndefined();
});
