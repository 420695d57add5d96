/**
 * Error codes as data: a RouterError takes its status and message from the
 * code's declaration; plugins declare their codes with
 * `definePlugin({ errors })`, and a declaration that clashes or is malformed
 * stops the plugin from being defined.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { definePlugin, RouterError, toErrorResponse, z, type ErrorCode } from '../../src/index.js';
import { errorSpec } from '../../src/kernel/error-catalogue.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { useProfiling } from '../../plugins/profiling/index.js';
import { librarySubgraph } from './library-subgraphs.js';

/** Codes this file declares at run time; the compiler knows them only through a cast. */
const PAYMENT_REQUIRED = 'ACME_PAYMENT_REQUIRED' as ErrorCode;
const QUOTA_GONE = 'ACME_QUOTA_GONE' as ErrorCode;

/** A third-party plugin refusing requests with its own code, naming no status at the throw. */
const usePaywall = definePlugin({
  name: 'acme-paywall',
  options: z.strictObject({ throws: z.boolean().default(false) }),
  errors: {
    ACME_PAYMENT_REQUIRED: { status: 402, description: 'The client has not paid.', solution: 'Pay.', message: 'Payment required.' },
    ACME_QUOTA_GONE: { description: 'The quota is gone (no HTTP status declared).' },
  },
  setup: (_context, options) => ({
    hooks: {
      onRequest(event) {
        if (event.input.headers['x-quota'] === 'gone') {
          event.respondWith(toErrorResponse(new RouterError(QUOTA_GONE, 'Quota gone.')));
        } else if (options.throws) {
          throw new RouterError(PAYMENT_REQUIRED);
        } else {
          event.respondWith(toErrorResponse(new RouterError(PAYMENT_REQUIRED)));
        }
      },
    },
  }),
});

let library: TestSubgraph;
let answering: TestRouter;
let throwing: TestRouter;
beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  [answering, throwing] = await Promise.all([
    startTestRouter({ subgraphs: [library], plugins: [usePaywall()] }),
    startTestRouter({ subgraphs: [library], plugins: [usePaywall({ throws: true })] }),
  ]);
});
afterAll(async () => {
  await Promise.all([answering?.close(), throwing?.close()]);
  await library?.close();
});

describe('a RouterError', () => {
  it("takes the status and message its code declares when the throw names none, and the throw's own when it does", () => {
    const ready = new RouterError('GRAPH_NOT_READY');
    expect([ready.status, ready.message]).toEqual([503, 'The router has no graph loaded yet.']);
    expect(new RouterError('MAX_DEPTH_EXCEEDED', 'too deep').status).toBe(400);
    expect(new RouterError('QUERY_PLANNING_FAILED', 'one field only', { status: 400 }).status).toBe(400);
    expect(new RouterError('CONFIG_INVALID', 'bad key').message).toBe('bad key');
  });

  it('has no status when its code declares none, and then answers 500', () => {
    const failed = new RouterError('SUBGRAPH_REQUEST_FAILED', 'down');
    expect(failed.status).toBeUndefined();
    expect(toErrorResponse(failed).status).toBe(500);
    // A code nobody declared (a cast gets past the compiler) still works: message = code, status 500.
    const undeclared = new RouterError('NOBODY_DECLARED_THIS' as ErrorCode);
    expect([undeclared.message, undeclared.status, toErrorResponse(undeclared).status]).toEqual(['NOBODY_DECLARED_THIS', undefined, 500]);
  });
});

describe('a plugin with its own error codes', () => {
  it('answers with the status its declaration gives, whether the plugin answers with the error or throws it', async () => {
    const answered = await answering.query('{ books { id } }');
    expect(answered.status).toBe(402);
    expect(answered.body.errors).toEqual([{ message: 'Payment required.', extensions: { code: 'ACME_PAYMENT_REQUIRED' } }]);
    const thrown = await throwing.query('{ books { id } }');
    expect(thrown.status).toBe(402);
    expect(thrown.body.errors?.[0]?.extensions?.code).toBe('ACME_PAYMENT_REQUIRED');
  });

  it('answers 500 for a code declared without a status', async () => {
    const response = await answering.query({ query: '{ books { id } }', headers: { 'x-quota': 'gone' } });
    expect(response.status).toBe(500);
    expect(response.body.errors?.[0]).toEqual({ message: 'Quota gone.', extensions: { code: 'ACME_QUOTA_GONE' } });
  });

  it('may be defined again with the same declaration (a module loaded twice), and shares a code declared the same way', () => {
    const same = { ACME_PAYMENT_REQUIRED: { status: 402, description: 'The client has not paid.', solution: 'Pay.', message: 'Payment required.' } };
    expect(() => definePlugin({ name: 'acme-paywall', options: z.object({}), errors: same, setup: () => ({}) })).not.toThrow();
    expect(() => definePlugin({ name: 'acme-billing', options: z.object({}), errors: same, setup: () => ({}) })).not.toThrow();
    expect(errorSpec('ACME_PAYMENT_REQUIRED')?.owner).toBe('acme-paywall');
  });

  it("may declare a known code with its status and its own words: the first declaration's text stays", () => {
    const own = { BAD_REQUEST: { status: 400, description: 'Our own words for a bad request.' } };
    expect(() => definePlugin({ name: 'acme-rewording', options: z.object({}), errors: own, setup: () => ({}) })).not.toThrow();
    expect(errorSpec('BAD_REQUEST')).toEqual(expect.objectContaining({ owner: 'kernel', status: 400 }));
    expect(errorSpec('BAD_REQUEST')?.description).not.toBe('Our own words for a bad request.');
  });

  it("is refused with PLUGIN_DUPLICATE when it declares another owner's code with another status, and declares none of its codes", () => {
    const clash = () =>
      definePlugin({
        name: 'acme-rival',
        options: z.object({}),
        errors: { ACME_RIVAL_ONLY: { status: 418, description: 'Never registered.' }, BAD_REQUEST: { status: 418, description: 'Mine now.' } },
        setup: () => ({}),
      });
    expect(clash).toThrow(
      expect.objectContaining({
        code: 'PLUGIN_DUPLICATE',
        message: expect.stringContaining('[acme-rival] error code "BAD_REQUEST" is already declared by the router with status 400, not status 418'),
      }),
    );
    expect(errorSpec('ACME_RIVAL_ONLY')).toBeUndefined();
    expect(new RouterError('BAD_REQUEST').status).toBe(400);
  });

  it('is refused with PLUGIN_ERROR when a code is not upper snake case, has no description or a status that is no HTTP status', () => {
    const define = (errors: Record<string, unknown>) => () => definePlugin({ name: 'acme-sloppy', options: z.object({}), errors: errors as never, setup: () => ({}) });
    expect(define({ 'acme-lower': { description: 'x' } })).toThrow(
      expect.objectContaining({ code: 'PLUGIN_ERROR', message: expect.stringContaining('"acme-lower" must be upper snake case') }),
    );
    expect(define({ ACME_BARE: {} })).toThrow(expect.objectContaining({ code: 'PLUGIN_ERROR', message: expect.stringContaining('"ACME_BARE" needs a description') }));
    expect(define({ ACME_ODD: null })).toThrow(expect.objectContaining({ code: 'PLUGIN_ERROR' }));
    for (const status of [99, 600, 4.5, '404']) {
      expect(define({ ACME_STATUS: { status, description: 'x' } })).toThrow(
        expect.objectContaining({ code: 'PLUGIN_ERROR', message: expect.stringContaining('expected an HTTP status') }),
      );
    }
    expect(errorSpec('ACME_STATUS')).toBeUndefined();
  });
});

describe('built-in plugins', () => {
  it('declare their codes the same way, when their module is loaded', () => {
    expect(useProfiling.pluginName).toBe('profiling');
    expect(errorSpec('PROFILING_CAPTURE_BUSY')).toMatchObject({ owner: 'profiling', status: 409 });
    expect(new RouterError('PROFILING_NOT_FOUND', 'no profile').status).toBe(404);
  });
});
