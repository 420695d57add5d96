/**
 * A local identity provider for the `auth` scenario: an RS256 key pair made
 * with jose, its public key served as a JWKS document on 127.0.0.1, and
 * tokens signed with the private key.
 *
 * Unlike the other files here it is not a program the bench builds and
 * starts: it runs inside the bench process (the load side), since a router
 * fetches the key set once at startup and then once per `refresh_interval`,
 * so it costs nothing worth a process of its own. Its listener is unref'd and
 * does not keep the bench alive.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

/** The path the key set is served at. */
export const JWKS_PATH = '/.well-known/jwks.json';

/** A running local identity provider. */
export interface JwksIssuer {
  /** `http://127.0.0.1:<port>/.well-known/jwks.json`. */
  readonly url: string;
  /** The `iss` of its tokens. */
  readonly issuer: string;
  /** The `aud` of its tokens. */
  readonly audience: string;
  /** The `kid` of its key. */
  readonly kid: string;
  /** A token signed with its key (RS256): `iss`, `aud`, `iat` and `exp` (`expiresIn`, default 6 h) set, plus `claims`. */
  sign(claims: JWTPayload, options?: { readonly expiresIn?: string; readonly subject?: string }): Promise<string>;
  /** Times the key set was fetched. */
  fetches(): number;
  close(): Promise<void>;
}

/** Starts a JWKS server on 127.0.0.1 (a free port) with a fresh RS256 key. */
export async function startJwksIssuer(options: { readonly issuer?: string; readonly audience?: string; readonly kid?: string } = {}): Promise<JwksIssuer> {
  const kid = options.kid ?? 'bench-rs256';
  const issuer = options.issuer ?? 'https://idp.bench.local/';
  const audience = options.audience ?? 'https://switchyard.bench.local';
  const { publicKey, privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
  const jwk = await exportJWK(publicKey);
  const document = JSON.stringify({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] });
  let fetches = 0;
  const server: Server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === JWKS_PATH) {
      fetches++;
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(document);
      return;
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${JWKS_PATH}`,
    issuer,
    audience,
    kid,
    async sign(claims, signOptions = {}) {
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(signOptions.expiresIn ?? '6h');
      if (signOptions.subject) jwt.setSubject(signOptions.subject);
      return jwt.sign(privateKey);
    },
    fetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
