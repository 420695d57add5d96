/**
 * Key sets an identity provider should not publish, or serves badly: broken
 * keys, shared kids, oversized or inflating bodies, a provider that hangs.
 * None may turn a client's token into a 5xx, cost the router memory, or
 * hold up the tokens of another provider.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGzip } from 'node:zlib';
import { base64url, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAuthentication, type AuthenticationConfigInput } from '../../../plugins/authentication/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { captureLogs } from '../../support/capture-logs.js';
import { bearer, eventually, sign, signingKey, startHelloSubgraph, type SigningKey } from './jwks-fixtures.js';

type Route = (request: IncomingMessage, response: ServerResponse) => void;

/** One HTTP server for the whole file; each test serves its documents under its own paths. */
const routes = new Map<string, Route>();
const fetches = new Map<string, number>();
let server: Server;
let base: string;
let hello: TestSubgraph;

function serveJson(path: string, document: () => unknown): string {
  routes.set(path, (_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(document())));
  return base + path;
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '';
    fetches.set(path, (fetches.get(path) ?? 0) + 1);
    const route = routes.get(path);
    if (route) route(request, response);
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hello = await startHelloSubgraph();
});

afterAll(async () => {
  await hello?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

async function routerWith(authentication: AuthenticationConfigInput) {
  const { logger, lines } = captureLogs('warn');
  const router = await startTestRouter({ subgraphs: [hello], logger, plugins: [useAuthentication(authentication)] });
  return { router, lines };
}

async function statusOf(router: TestRouter, token: string): Promise<{ status: number; code: unknown; message: unknown }> {
  const response = await router.query({ query: '{ hello }', headers: bearer(token) });
  const error = response.body.errors?.[0];
  return { status: response.status, code: error?.extensions?.code, message: error?.message };
}

const skippedWarnings = (lines: Array<Record<string, unknown>>, url: string) => lines.filter((line) => line.msg === 'JWKS keys skipped: not usable' && line.url === url);

describe('broken keys in a key set', () => {
  it('leaves them out with one warning naming each kid: their tokens get the 401 of an unknown kid, and the next provider is tried', async () => {
    const [good, rsa, ec, ed, shared] = await Promise.all([
      signingKey('good', 'ES256'),
      signingKey('rsa-x', 'RS256'),
      signingKey('ec-x', 'ES256'),
      signingKey('ed-x', 'EdDSA'),
      signingKey('shared', 'RS256'),
    ]);
    const secret = base64url.encode(new Uint8Array(64).fill(7));
    const broken = [
      { kty: 'RSA', kid: 'rsa-no-n', e: 'AQAB', alg: 'RS256' },
      { kty: 'RSA', kid: 'rsa-x5c-only', x5c: ['MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'] },
      { kty: 'EC', kid: 'ec-no-x', crv: 'P-256', y: ec.jwk.y },
      { ...ec.jwk, kid: 'ec-short-x', x: base64url.encode(new Uint8Array(5)) },
      { ...ed.jwk, kid: 'ed-short-x', x: 'AAAA' },
      // A private key published by mistake: refused, and its `d` never logged.
      { ...shared.jwk, d: secret },
    ];
    const first = serveJson('/broken/first', () => ({ keys: [...broken, good.jwk] }));
    const second = serveJson('/broken/second', () => ({ keys: [shared.jwk] }));
    const { router, lines } = await routerWith({ jwt: { jwks: [{ url: first, algorithms: ['RS256', 'ES256', 'EdDSA'] }, { url: second }] } });
    try {
      await eventually(() => skippedWarnings(lines, first).length > 0);
      const kidsOf = { 'rsa-no-n': rsa, 'rsa-x5c-only': rsa, 'ec-no-x': ec, 'ec-short-x': ec, 'ed-short-x': ed };
      for (const [kid, key] of Object.entries(kidsOf)) {
        expect({ kid, ...(await statusOf(router, await sign(key, { kid }))) }).toEqual({
          kid,
          status: 401,
          code: 'UNAUTHENTICATED',
          message: `Invalid token: no key with kid "${kid}" is known.`,
        });
      }
      expect((await statusOf(router, await sign(good))).status).toBe(200);
      // The first set's `shared` is refused there; the second provider's verifies the token.
      expect((await statusOf(router, await sign(shared))).status).toBe(200);
      const warnings = skippedWarnings(lines, first);
      expect(warnings).toHaveLength(1);
      const skipped = warnings[0]!.skipped as Array<{ key: string; reason: string }>;
      expect(skipped.map((entry) => entry.key)).toEqual(['rsa-no-n', 'rsa-x5c-only', 'ec-no-x', 'ec-short-x', 'ed-short-x', 'shared']);
      expect(skipped[0]!.reason).toMatch(/"n"/);
      expect(skipped[5]!.reason).toMatch(/private/);
      expect(JSON.stringify(warnings)).not.toContain(secret);
      expect(JSON.stringify(warnings)).not.toContain(shared.jwk.n);
      expect(skippedWarnings(lines, second)).toEqual([]);
    } finally {
      await router.close();
    }
  });

  it('skips entries that are not objects instead of refusing the whole set', async () => {
    const key = await signingKey('k1', 'RS256');
    const url = serveJson('/entries', () => ({ keys: [null, 'text', 42, key.jwk] }));
    const { router, lines } = await routerWith({ jwt: { jwks: [{ url }] } });
    try {
      expect((await statusOf(router, await sign(key))).status).toBe(200);
      expect(lines.filter((line) => String(line.msg).startsWith('JWKS fetch failed'))).toEqual([]);
      const skipped = skippedWarnings(lines, url)[0]?.skipped as Array<{ key: string; reason: string }>;
      expect(skipped).toEqual([0, 1, 2].map((index) => ({ key: `#${index}`, reason: 'not a JSON object' })));
    } finally {
      await router.close();
    }
  });
});

describe('several keys matching one token', () => {
  it('tries each: a kid listed twice, and a token without kid against kid-less keys, verify without fetching the set again', async () => {
    const [signer, other] = await Promise.all([signingKey('twice', 'RS256'), signingKey('twice', 'RS256')]);
    const withoutKid = ({ kid: _kid, ...jwk }: SigningKey['jwk']) => jwk;
    const duplicated = serveJson('/duplicates/kid', () => ({ keys: [other.jwk, signer.jwk] }));
    const kidless = serveJson('/duplicates/kidless', () => ({ keys: [withoutKid(other.jwk), withoutKid(signer.jwk)] }));
    for (const url of [duplicated, kidless]) {
      const { router } = await routerWith({ jwt: { jwks: [{ url, min_refetch_interval: '0ms' }] } });
      try {
        await eventually(() => (fetches.get(new URL(url).pathname) ?? 0) >= 1);
        const before = fetches.get(new URL(url).pathname);
        const tokenOf = (key: SigningKey) =>
          url === duplicated ? sign(key) : new SignJWT({ sub: 'no-kid' }).setProtectedHeader({ alg: 'RS256' }).setExpirationTime('5m').sign(key.privateKey);
        expect({ url, ...(await statusOf(router, await tokenOf(signer))) }).toEqual({ url, status: 200, code: undefined, message: undefined });
        expect(fetches.get(new URL(url).pathname)).toBe(before);
        // A token no listed key signed is still refused, as a bad signature (after one fetch of the set, in case the keys rotated).
        expect((await statusOf(router, await tokenOf(await signingKey('twice', 'RS256')))).message).toBe('Invalid token: the token signature does not verify.');
        expect(fetches.get(new URL(url).pathname)).toBe((before ?? 0) + 1);
      } finally {
        await router.close();
      }
    }
  });
});

describe('oversized key set documents', () => {
  it('stops reading at 1 MB: a declared Content-Length, an endless body, and a small gzip body that inflates', async () => {
    const sent = { plain: 0, gzip: 0 };
    let closed = 0;
    const CAP = 128 * 1024 * 1024; // the most either server would send if the router read on
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    routes.set('/big/declared', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(50 * 1024 * 1024) });
      response.write('{"keys":['); // and nothing more: only the declared length can refuse it in time
    });
    routes.set('/big/plain', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"keys":[');
      const pump = () => {
        while (!response.destroyed && sent.plain < CAP) {
          sent.plain += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', pump);
        }
        response.end(']}');
      };
      response.on('close', () => closed++);
      pump();
    });
    routes.set('/big/gzip', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const gzip = createGzip();
      gzip.pipe(response);
      gzip.write('{"keys":[');
      const pump = () => {
        while (!response.destroyed && sent.gzip < CAP) {
          sent.gzip += chunk.length;
          if (!gzip.write(chunk)) return void gzip.once('drain', pump);
        }
        gzip.end(']}');
      };
      response.on('close', () => {
        closed++;
        gzip.destroy();
      });
      pump();
    });
    const urls = ['/big/declared', '/big/plain', '/big/gzip'].map((path) => base + path);
    const { router, lines } = await routerWith({ jwt: { jwks: urls.map((url) => ({ url, timeout: '3s' })) } });
    try {
      const failures = () => lines.filter((line) => String(line.msg).startsWith('JWKS fetch failed'));
      await eventually(() => failures().length === 3, 5000);
      expect(Object.fromEntries(failures().map((line) => [line.url, line.reason]))).toEqual(
        Object.fromEntries(
          urls.map((url) => [url, url.endsWith('/declared') ? `the body is ${50 * 1024 * 1024} bytes, over the 1 MiB limit` : 'the body is over the 1 MiB limit']),
        ),
      );
      await eventually(() => closed === 2);
      // Well short of what the servers would have sent (socket buffers hold a few MB).
      expect(sent.plain).toBeLessThan(32 * 1024 * 1024);
      expect(sent.gzip).toBeLessThan(32 * 1024 * 1024);
      expect((await statusOf(router, await sign(await signingKey('k', 'RS256')))).status).toBe(401);
    } finally {
      await router.close();
    }
  });
});

describe('a provider that hangs', () => {
  it('holds up only the tokens it could verify', async () => {
    let hanging = 0;
    routes.set('/hang', (request) => {
      hanging++;
      request.on('close', () => hanging--);
    });
    const [fast, rotated] = await Promise.all([signingKey('fast-1', 'ES256'), signingKey('fast-2', 'ES256')]);
    let published = [fast];
    const fastUrl = serveJson('/fast', () => ({ keys: published.map((key) => key.jwk) }));
    const { router } = await routerWith({
      jwt: {
        jwks: [
          { url: `${base}/hang`, issuer: 'https://slow.test', timeout: '5s', min_refetch_interval: '0ms' },
          { url: fastUrl, min_refetch_interval: '0ms' },
        ],
      },
    });
    try {
      await eventually(() => hanging === 1);
      // A token of the answering provider, while the other's first fetch hangs.
      expect((await statusOf(router, await sign(fast))).status).toBe(200);
      // A new kid: both providers are asked again; the first to find it answers.
      published = [fast, rotated];
      expect((await statusOf(router, await sign(rotated, { issuer: 'https://slow.test' }))).status).toBe(200);
      // An unknown kid claiming another issuer than the hanging provider's: refused without waiting for it.
      expect((await statusOf(router, await sign(await signingKey('nobody', 'ES256'), { issuer: 'https://fast.test' }))).status).toBe(401);
      expect(hanging).toBeGreaterThan(0);
    } finally {
      await router.close();
      routes.delete('/hang');
    }
  });
});
