/**
 * A JWKS URL carrying `user:password@`: the key set is fetched with HTTP
 * Basic authorization (percent-escapes decoded), as a graph URL is, and the
 * credentials never reach a log line, an error or the identity other
 * plugins read. Real servers on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHENTICATION, useAuthentication, type AuthenticationConfigInput } from '../../../plugins/authentication/index.js';
import { definePlugin, z } from '../../../src/index.js';
import { startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { captureLogs } from '../../support/capture-logs.js';
import { bearer, eventually, sign, signingKey, startHelloSubgraph, startJwksServer, type SigningKey } from './jwks-fixtures.js';

const USER = 'router';
/** Written percent-encoded in the URL (`s3cret%2Fpw%40x`); the server expects it decoded. */
const PASSWORD = 's3cret/pw@x';
const ENCODED_PASSWORD = encodeURIComponent(PASSWORD);
const WRONG_PASSWORD = 'wr0ng-guess';

let hello: TestSubgraph;
let key: SigningKey;
let server: Server;
let port: number;
/** `Authorization` of every JWKS request received. */
const received: Array<string | undefined> = [];

/** Shows the JWKS URL the authentication plugin left in request state. */
const useProviderHeader = definePlugin({
  name: 'provider-header',
  options: z.strictObject({}),
  setup: () => ({
    hooks: {
      onRequest() {
        return (after) => {
          const identity = after.state.get(AUTHENTICATION);
          if (identity) after.setOutput({ ...after.output, headers: { ...after.output.headers, 'x-provider': identity.provider } });
        };
      },
    },
  }),
});

beforeAll(async () => {
  hello = await startHelloSubgraph();
  key = await signingKey('basic-1', 'RS256');
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`, 'utf8').toString('base64')}`;
  server = createServer((request, response) => {
    received.push(request.headers.authorization);
    if (request.headers.authorization !== expected) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="jwks"' }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [key.jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await hello?.close();
  server?.closeAllConnections();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

async function routerWith(authentication: AuthenticationConfigInput) {
  const { logger, lines } = captureLogs('debug');
  const router = await startTestRouter({ subgraphs: [hello], logger, plugins: [useAuthentication(authentication), useProviderHeader()] });
  return { router, lines };
}

const failures = (lines: Array<Record<string, unknown>>) => lines.filter((line) => String(line.msg).startsWith('JWKS fetch failed'));

describe('a JWKS URL with user:password@', () => {
  it('fetches the key set with HTTP Basic authorization, and a token verifies; the password is never logged nor shown', async () => {
    const bare = `http://127.0.0.1:${port}/secured/jwks.json`;
    const before = received.length;
    const { router, lines } = await routerWith({ jwt: { jwks: [{ url: `http://${USER}:${ENCODED_PASSWORD}@127.0.0.1:${port}/secured/jwks.json` }] } });
    try {
      await eventually(() => lines.some((line) => line.msg === 'JWKS fetched'));
      const response = await router.query({ query: '{ hello }', headers: bearer(await sign(key, { claims: { sub: 'basic-user' } })) });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { hello: 'world' } });
      expect(response.headers.get('x-provider')).toBe(bare);
      // The percent-escapes are decoded before encoding the pair, as for a graph URL.
      expect(received.slice(before)[0]).toBe(`Basic ${Buffer.from(`${USER}:${PASSWORD}`, 'utf8').toString('base64')}`);
      expect(lines.find((line) => line.msg === 'JWT authentication enabled')?.providers).toEqual([bare]);
      expect(lines.find((line) => line.msg === 'JWKS fetched')?.url).toBe(bare);
      expect(failures(lines)).toEqual([]);
      const logged = JSON.stringify(lines);
      expect(logged).not.toContain('s3cret');
      expect(logged).not.toContain(`${USER}:`);
    } finally {
      await router.close();
    }
  });

  it('with a wrong password: the fetch fails, tokens get the 401 of any unusable key set, and no log line carries the password', async () => {
    const withWrong = await routerWith({
      jwt: { jwks: [{ url: `http://${USER}:${WRONG_PASSWORD}@127.0.0.1:${port}/secured/jwks.json`, min_refetch_interval: '0ms', timeout: '2s' }] },
    });
    const down = await startJwksServer([key]);
    down.down = true;
    const withDown = await routerWith({ jwt: { jwks: [{ url: down.url, min_refetch_interval: '0ms', timeout: '2s' }] } });
    try {
      await eventually(() => failures(withWrong.lines).length > 0 && failures(withDown.lines).length > 0);
      const token = await sign(key);
      const refused = await withWrong.router.query({ query: '{ hello }', headers: bearer(token) });
      const unusable = await withDown.router.query({ query: '{ hello }', headers: bearer(token) });
      expect(refused.status).toBe(401);
      expect(refused.body).toEqual({ errors: [{ message: expect.stringMatching(/no signing keys/), extensions: { code: 'UNAUTHENTICATED' } }] });
      expect({ status: refused.status, body: refused.body, challenge: refused.headers.get('www-authenticate') }).toEqual({
        status: unusable.status,
        body: unusable.body,
        challenge: unusable.headers.get('www-authenticate'),
      });
      const [failure] = failures(withWrong.lines);
      expect(failure).toMatchObject({ level: 'warn', url: `http://127.0.0.1:${port}/secured/jwks.json`, reason: 'HTTP 401' });
      const logged = JSON.stringify(withWrong.lines);
      expect(logged).not.toContain(WRONG_PASSWORD);
      expect(logged).not.toContain(`${USER}:`);
      expect(JSON.stringify(refused.body)).not.toContain(WRONG_PASSWORD);
    } finally {
      await withWrong.router.close();
      await withDown.router.close();
      await down.close();
    }
  });

  it('a JWKS that cannot be reached: the warning names the URL without the credentials', async () => {
    const closed = await startJwksServer([key]);
    const bare = closed.url;
    await closed.close();
    const withCredentials = bare.replace('http://', `http://${USER}:${ENCODED_PASSWORD}@`);
    const { router, lines } = await routerWith({ jwt: { jwks: [{ url: withCredentials, timeout: '500ms' }] } });
    try {
      await eventually(() => failures(lines).length > 0);
      expect(failures(lines)[0]).toMatchObject({ url: bare });
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(key)) })).status).toBe(401);
      expect(JSON.stringify(lines)).not.toContain('s3cret');
    } finally {
      await router.close();
    }
  });
});
