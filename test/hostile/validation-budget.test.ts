/**
 * An operation repeating one field many times at one level (within
 * `limits.max_fields`) runs past graphql-js's budget for checking that
 * fields can be merged: the client gets a 400 that says so, not a bare
 * "Validation aborted.".
 */
import { expect, it } from 'vitest';
import type { TestRouter } from '../../src/testing/index.js';
import { useLibraryRouter } from '../kernel/library-hooks.js';

let router: TestRouter;
useLibraryRouter((started) => {
  router = started.router;
});

it('explains a refusal for too many repeated fields, and still runs a few repeats', async () => {
  const many = await router.query(`{ books { ${'title '.repeat(1500)} } }`);
  expect(many.status).toBe(400);
  expect(many.body.errors).toEqual([
    expect.objectContaining({
      message: expect.stringMatching(/^Validation aborted: the operation repeats too many fields at one level/),
      extensions: expect.objectContaining({ code: 'GRAPHQL_VALIDATION_FAILED' }),
    }),
  ]);
  const few = await router.query(`{ books { ${'title '.repeat(20)} } }`);
  expect(few.status).toBe(200);
  expect(few.body.errors).toBeUndefined();
});
