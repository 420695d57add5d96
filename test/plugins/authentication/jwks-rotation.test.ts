/**
 * Key rotation that reuses a `kid`, or withdraws a key: a token whose
 * signature the cached key under its kid (or, without a kid, every cached
 * key) does not verify fetches the key set again at once, rate limited by
 * `min_refetch_interval` and shared by concurrent requests, and is checked
 * with the fresh keys; a key gone from a fetched set verifies nothing more,
 * tokens remembered as verified with it included.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticationConfigSchema, useAuthentication, type AuthenticationConfigInput } from '../../../plugins/authentication/index.js';
import { JwksProvider } from '../../../plugins/authentication/jwks-provider.js';
import { createLogger } from '../../../src/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { bearer, eventually, sign, signingKey, startHelloSubgraph, type SigningKey } from './jwks-fixtures.js';

/** A JWKS server on 127.0.0.1 counting its requests, optionally answering late. */
interface RotatingJwks {
  readonly url: string;
  /** The JWKs served now; assign to rotate. */
  keys: JWK[];
  /** Requests received. */
  fetches: number;
  /** Milliseconds before each answer. */
  delay: number;
  close(): Promise<void>;
}

async function startRotatingJwks(keys: JWK[]): Promise<RotatingJwks> {
  const state = { keys, fetches: 0, delay: 0 };
  const server: Server = createServer((_request, response) => {
    state.fetches++;
    // The document as it is when the request arrives.
    const body = JSON.stringify({ keys: state.keys });
    setTimeout(() => response.writeHead(200, { 'content-type': 'application/json' }).end(body), state.delay);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

let hello: TestSubgraph;

beforeAll(async () => {
  hello = await startHelloSubgraph();
});

afterAll(async () => {
  await hello?.close();
});

function routerWith(authentication: AuthenticationConfigInput): Promise<TestRouter> {
  return startTestRouter({ subgraphs: [hello], plugins: [useAuthentication(authentication)] });
}

async function ask(router: TestRouter, token: string): Promise<{ status: number; message: string | undefined; code: unknown }> {
  const response = await router.query({ query: '{ hello }', headers: bearer(token) });
  const error = response.body.errors?.[0];
  return { status: response.status, message: error?.message, code: error?.extensions?.code };
}

const OK = { status: 200, message: undefined, code: undefined };
const BAD_SIGNATURE = { status: 401, message: 'Invalid token: the token signature does not verify.', code: 'UNAUTHENTICATED' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A token without `kid`. */
function kidless(key: SigningKey, sub = 'no-kid'): Promise<string> {
  return new SignJWT({ sub }).setProtectedHeader({ alg: key.alg }).setIssuedAt().setExpirationTime('5m').sign(key.privateKey);
}

function withoutKid({ kid: _kid, ...jwk }: JWK): JWK {
  return jwk;
}

/**
 * The refetch window (`min_refetch_interval`) of the tests that wait it out after the startup fetch; the
 * requests after a refetch must fit in it for the fetch counts to hold, with room for a busy CI machine.
 */
const WINDOW = 2000;

describe('key material rotated under the same kid', () => {
  it('accepts a token of the new key on the first try, with refresh_interval far off', async () => {
    const [before, after] = await Promise.all([signingKey('main', 'RS256'), signingKey('main', 'RS256')]);
    const server = await startRotatingJwks([before.jwk]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1h', min_refetch_interval: `${WINDOW}ms` }] } });
    try {
      await eventually(() => server.fetches >= 1);
      const old = await sign(before, { claims: { sub: 'old' } });
      expect(await ask(router, old)).toEqual(OK);
      await sleep(WINDOW + 50);
      // The provider replaces the key material and keeps the kid.
      server.keys = [after.jwk];
      const fetched = server.fetches;
      expect(await ask(router, await sign(after, { claims: { sub: 'new' } }))).toEqual(OK);
      expect(server.fetches).toBe(fetched + 1);
      // The replaced key verifies nothing more: neither a fresh token nor the one remembered as verified.
      expect(await ask(router, await sign(before, { claims: { sub: 'old-2' } }))).toEqual(BAD_SIGNATURE);
      expect(await ask(router, old)).toEqual(BAD_SIGNATURE);
      // Within the window, no further fetch.
      expect(server.fetches).toBe(fetched + 1);
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('does the same for tokens without kid against keys without kid, once every cached key failed', async () => {
    const [first, second, next] = await Promise.all([signingKey('a', 'ES256'), signingKey('b', 'ES256'), signingKey('c', 'ES256')]);
    const server = await startRotatingJwks([withoutKid(first.jwk), withoutKid(second.jwk)]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1h', min_refetch_interval: `${WINDOW}ms` }] } });
    try {
      await eventually(() => server.fetches >= 1);
      expect(await ask(router, await kidless(second))).toEqual(OK);
      expect(server.fetches).toBe(1); // the second cached key verified it: no fetch
      await sleep(WINDOW + 50);
      server.keys = [withoutKid(next.jwk)];
      expect(await ask(router, await kidless(next))).toEqual(OK);
      expect(server.fetches).toBe(2);
      expect(await ask(router, await kidless(first, 'withdrawn'))).toEqual(BAD_SIGNATURE);
      expect(server.fetches).toBe(2);
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('200 tokens of the new key at once: one fetch, which they all wait on, and all are accepted', async () => {
    const [before, after] = await Promise.all([signingKey('main', 'ES256'), signingKey('main', 'ES256')]);
    const server = await startRotatingJwks([before.jwk]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1h', min_refetch_interval: `${WINDOW}ms` }] } });
    try {
      await eventually(() => server.fetches >= 1);
      await sleep(WINDOW + 50);
      server.keys = [after.jwk];
      // A slow provider: the requests that fail while the refetch is under way are accepted only if they wait on it.
      server.delay = 200;
      const tokens = await Promise.all(Array.from({ length: 200 }, (_, index) => sign(after, { claims: { sub: `user-${index}` } })));
      const answers = await Promise.all(tokens.map((token) => ask(router, token)));
      for (const answer of answers) expect(answer).toEqual(OK);
      expect(server.fetches).toBe(2);
    } finally {
      await router.close();
      await server.close();
    }
  });
});

describe('bad signatures', () => {
  it('200 at once cause one JWKS fetch per min_refetch_interval, shared, and each gets the usual 401', async () => {
    const [published, forger] = await Promise.all([signingKey('main', 'RS256'), signingKey('main', 'RS256')]);
    const server = await startRotatingJwks([published.jwk]);
    const interval = 3000;
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1h', min_refetch_interval: `${interval}ms` }] } });
    try {
      await eventually(() => server.fetches >= 1);
      await sleep(interval + 50);
      // A slow provider: requests arriving during the refetch wait on it rather than starting their own.
      server.delay = 200;
      const forged = await Promise.all(Array.from({ length: 200 }, (_, index) => sign(forger, { claims: { sub: `forged-${index}` } })));
      const fetched = server.fetches;
      const started = Date.now();
      const answers = await Promise.all(forged.map((token) => ask(router, token)));
      for (const answer of answers) expect(answer).toEqual(BAD_SIGNATURE);
      // One refetch (the cached key under the kid failed; the keys might have rotated), and no more within the interval.
      expect(server.fetches - fetched).toBe(1);
      // More of them sent one after another, still within the interval: no fetch at all.
      for (const token of forged.slice(0, 20)) expect(await ask(router, token)).toEqual(BAD_SIGNATURE);
      expect(server.fetches - fetched).toBe(1);
      // The counts above hold for one interval: the whole burst must have fitted in it.
      expect(Date.now() - started).toBeLessThan(interval);
      // The published key still works throughout.
      expect(await ask(router, await sign(published))).toEqual(OK);
    } finally {
      await router.close();
      await server.close();
    }
  });
});

describe('a key removed from the JWKS', () => {
  it('stops verifying after the refetch, tokens remembered as verified with it included', async () => {
    const [kept, removed, forger] = await Promise.all([signingKey('kept', 'ES256'), signingKey('removed', 'ES256'), signingKey('kept', 'ES256')]);
    const server = await startRotatingJwks([kept.jwk, removed.jwk]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1h', min_refetch_interval: `${WINDOW}ms` }] } });
    try {
      await eventually(() => server.fetches >= 1);
      const remembered = await sign(removed, { claims: { sub: 'remembered' } });
      const keptToken = await sign(kept, { claims: { sub: 'kept' } });
      expect(await ask(router, remembered)).toEqual(OK);
      expect(await ask(router, keptToken)).toEqual(OK);
      await sleep(WINDOW + 50);
      server.keys = [kept.jwk];
      // Anything that fetches the set again (here a bad signature under a known kid) drops the withdrawn key.
      expect(await ask(router, await sign(forger))).toEqual(BAD_SIGNATURE);
      expect(server.fetches).toBe(2);
      const gone = { status: 401, message: 'Invalid token: no key with kid "removed" is known.', code: 'UNAUTHENTICATED' };
      expect(await ask(router, await sign(removed, { claims: { sub: 'fresh' } }))).toEqual(gone);
      expect(await ask(router, remembered)).toEqual(gone);
      // The key that stayed keeps verifying, remembered tokens of it too.
      expect(await ask(router, keptToken)).toEqual(OK);
      expect(await ask(router, await sign(kept))).toEqual(OK);
      expect(server.fetches).toBe(2);
    } finally {
      await router.close();
      await server.close();
    }
  });
});

describe('the same keys listed in another order', () => {
  it('are the same key set: no new generation, so remembered tokens are not verified again', async () => {
    const [first, second] = await Promise.all([signingKey('k1', 'ES256'), signingKey('k2', 'ES256')]);
    const jwks = await startRotatingJwks([first.jwk, second.jwk]);
    const config = authenticationConfigSchema.parse({ jwt: { jwks: [{ url: jwks.url }] } }).jwt.jwks[0]!;
    const provider = new JwksProvider(config, ['ES256'], createLogger({ level: 'silent' }));
    try {
      expect(await provider.start()).toBe(true);
      const generation = provider.generation;
      jwks.keys = [second.jwk, first.jwk];
      expect(await provider.refresh()).toBe(true);
      expect(jwks.fetches).toBe(2);
      expect(provider.generation).toBe(generation);
      jwks.keys = [second.jwk];
      expect(await provider.refresh()).toBe(true);
      expect(provider.generation).toBe(generation + 1);
    } finally {
      provider.stop();
      await jwks.close();
    }
  });
});
