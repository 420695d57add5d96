/** A JWKS server on 127.0.0.1 and token signing for the authentication and authorization tests. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';

export interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly jwk: JWK;
}

export async function signingKey(kid: string, alg: 'RS256' | 'ES256' | 'EdDSA'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, alg === 'EdDSA' ? { crv: 'Ed25519' } : undefined);
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

export interface JwksServer {
  readonly url: string;
  /** Keys served now; change it to rotate. */
  keys: SigningKey[];
  /** When true, every request is answered 503. */
  down: boolean;
  /** JWKS requests received (also while down). */
  fetches: number;
  close(): Promise<void>;
}

export async function startJwksServer(keys: SigningKey[]): Promise<JwksServer> {
  const state = { keys, down: false, fetches: 0 };
  const server: Server = createServer((_request, response) => {
    state.fetches++;
    if (state.down) {
      response.writeHead(503).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys.map((key) => key.jwk) }));
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
  }) as JwksServer;
}

export interface TokenOptions {
  readonly claims?: Record<string, unknown>;
  /** Seconds from now; default 300. */
  readonly expiresIn?: number;
  /** Seconds from now. */
  readonly notBefore?: number;
  readonly issuer?: string;
  readonly audience?: string;
  readonly kid?: string;
}

export async function sign(key: SigningKey, options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ sub: 'user-1', ...options.claims })
    .setProtectedHeader({ alg: key.alg, kid: options.kid ?? key.kid, typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 300));
  if (options.notBefore !== undefined) jwt = jwt.setNotBefore(now + options.notBefore);
  if (options.issuer) jwt = jwt.setIssuer(options.issuer);
  if (options.audience) jwt = jwt.setAudience(options.audience);
  return jwt.sign(key.privateKey);
}

export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** Waits until `check` holds (polling), or fails after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A subgraph answering `{ hello }` with "world": what the authentication tests query through a router. */
export function startHelloSubgraph(): Promise<TestSubgraph> {
  return startSubgraph({
    name: 'hello',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        hello: String!
      }
    `,
    resolvers: { Query: { hello: () => 'world' } },
  });
}
