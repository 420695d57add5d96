/**
 * The GraphQL over HTTP spec's own conformance audit (npm `graphql-http`,
 * `serverAudits`) against a real router: one test per audit, every MUST,
 * SHOULD and MAY passing, over HTTP on loopback (the post lane answers what
 * it takes, the general handler the rest) and in-process (the general
 * handler alone).
 */
import { serverAudits } from 'graphql-http';
import { describe, expect, it } from 'vitest';
import type { TestRouter } from '../../../src/testing/index.js';
import { useLibraryRouter } from '../library-hooks.js';

let router: TestRouter;
useLibraryRouter((started) => ({ router } = started));

/** One test per audit, against the router reached through `fetchFn`. */
function runAudits(fetchFn: (input: string, init?: RequestInit) => Promise<Response>): void {
  // The URL is only known once the router listens: audits read it lazily.
  const audits = serverAudits({ url: () => `${router.url}/graphql`, fetchFn });
  for (const audit of audits) {
    it(`${audit.id} ${audit.name}`, async () => {
      const result = await audit.fn();
      const reason = result.status === 'ok' ? undefined : result.reason;
      expect({ status: result.status, reason }).toEqual({ status: 'ok', reason: undefined });
    });
  }
}

describe('graphql-http server audit over HTTP (the post lane, and the general handler for what it declines)', () => {
  runAudits((input, init) => fetch(input, init));
});

describe('graphql-http server audit on the general handler alone (in-process, no post lane)', () => {
  runAudits((input, init) => router.router.handle(new Request(input, init)));
});

describe('request errors: the status by what the client accepts (docs/errors.md), on both paths', () => {
  const JSON_ONLY = 'application/json';
  const SPEC = 'application/graphql-response+json';
  const cases: Array<[name: string, body: string, accept: string, status: number, code: string]> = [
    ['no query, legacy client', '{}', JSON_ONLY, 200, 'BAD_REQUEST'],
    ['no query', '{}', SPEC, 400, 'BAD_REQUEST'],
    ['a validation error, legacy client', '{"query":"{ nope }"}', JSON_ONLY, 200, 'GRAPHQL_VALIDATION_FAILED'],
    ['a validation error', '{"query":"{ nope }"}', SPEC, 400, 'GRAPHQL_VALIDATION_FAILED'],
    ['a query that is not a string, legacy client', '{"query":5}', JSON_ONLY, 400, 'BAD_REQUEST'],
    ['an operationName that is not a string, legacy client', '{"query":"{ books { id } }","operationName":7}', JSON_ONLY, 400, 'BAD_REQUEST'],
    ['a documentId that is not a string, legacy client', '{"documentId":[]}', JSON_ONLY, 400, 'BAD_REQUEST'],
    ['an unknown parameter, legacy client', '{"query":"{ books { id } }","foo":1}', JSON_ONLY, 400, 'BAD_REQUEST'],
    ['variables that are not an object, legacy client', '{"query":"{ books { id } }","variables":[]}', JSON_ONLY, 400, 'BAD_REQUEST'],
  ];
  const paths: Array<[string, (init: RequestInit) => Promise<Response>]> = [
    ['over HTTP', (init) => fetch(`${router.url}/graphql`, init)],
    ['in-process', (init) => router.router.handle(new Request('http://router.test/graphql', init))],
  ];
  for (const [name, body, accept, status, code] of cases) {
    for (const [path, send] of paths) {
      it(`${name} (${path}): ${status} ${code}`, async () => {
        const response = await send({ method: 'POST', headers: { 'content-type': 'application/json', accept }, body });
        const answer = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
        expect({ status: response.status, type: response.headers.get('content-type'), code: answer.errors?.[0]?.extensions?.code }).toEqual({
          status,
          type: `${accept}; charset=utf-8`,
          code,
        });
      });
    }
  }

  const getCases: Array<[name: string, search: string, accept: string, status: number, code: string]> = [
    ['GET: a validation error, legacy client', 'query=%7B%20nope%20%7D', JSON_ONLY, 200, 'GRAPHQL_VALIDATION_FAILED'],
    ['GET: variables that are not JSON', 'query=%7B%20books%20%7B%20id%20%7D%20%7D&variables=%7Bx', SPEC, 400, 'BAD_REQUEST'],
    ['GET: an empty documentId, legacy client', 'documentId=', JSON_ONLY, 400, 'BAD_REQUEST'],
  ];
  for (const [name, search, accept, status, code] of getCases) {
    it(`${name}: ${status} ${code}`, async () => {
      const response = await fetch(`${router.url}/graphql?${search}`, { headers: { accept } });
      const answer = (await response.json()) as { errors?: Array<{ extensions?: { code?: string } }> };
      expect({ status: response.status, code: answer.errors?.[0]?.extensions?.code }).toEqual({ status, code });
    });
  }
});
