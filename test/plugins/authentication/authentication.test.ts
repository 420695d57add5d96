import { base64url, exportSPKI, SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTHENTICATION, useAuthentication, type AuthenticationConfigInput } from '../../../plugins/authentication/index.js';
import { useAuthorization } from '../../../plugins/authorization/index.js';
import { definePlugin, z } from '../../../src/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { bearer, eventually, sign, signingKey, startHelloSubgraph, startJwksServer, type JwksServer, type SigningKey } from './jwks-fixtures.js';

let hello: TestSubgraph;
let rsa: SigningKey;
let ec: SigningKey;
let ed: SigningKey;
let jwks: JwksServer;

/** Shows the claims the authentication plugin left in request state, as another plugin reads them. */
const useWhoAmI = definePlugin({
  name: 'who-am-i',
  options: z.strictObject({}),
  setup: () => ({
    hooks: {
      onRequest(_event) {
        return (after) => {
          const identity = after.state.get(AUTHENTICATION);
          if (identity)
            after.setOutput({ ...after.output, headers: { ...after.output.headers, 'x-sub': String(identity.claims.sub), 'x-scopes': [...identity.scopes].join(',') } });
        };
      },
    },
  }),
});

const UNAUTHENTICATED = { errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }] };

beforeAll(async () => {
  hello = await startHelloSubgraph();
  [rsa, ec, ed] = await Promise.all([signingKey('rsa-1', 'RS256'), signingKey('ec-1', 'ES256'), signingKey('ed-1', 'EdDSA')]);
  jwks = await startJwksServer([rsa, ec, ed]);
});

afterAll(async () => {
  await hello?.close();
  await jwks?.close();
});

async function routerWith(
  authentication: AuthenticationConfigInput,
  authorization: Parameters<typeof useAuthorization>[0] = {},
  config: Parameters<typeof startTestRouter>[0]['config'] = {},
): Promise<TestRouter> {
  return startTestRouter({ subgraphs: [hello], config, plugins: [useAuthentication(authentication), useAuthorization(authorization), useWhoAmI()] });
}

describe('authentication', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await routerWith({ jwt: { jwks: [{ url: jwks.url, issuer: 'https://idp.test', audience: 'switchyard' }] } });
  });
  afterAll(() => router?.close());
  const good = { issuer: 'https://idp.test', audience: 'switchyard' };

  it('accepts RS256, ES256 and EdDSA tokens and puts the claims in request state', async () => {
    for (const key of [rsa, ec, ed]) {
      const token = await sign(key, { ...good, claims: { sub: `u-${key.kid}`, scope: 'read:a read:b' } });
      const response = await router.query({ query: '{ hello }', headers: bearer(token) });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { hello: 'world' } });
      expect(response.headers.get('x-sub')).toBe(`u-${key.kid}`);
      expect(response.headers.get('x-scopes')).toBe('read:a,read:b');
    }
  });

  it('reads scopes given as an array', async () => {
    const token = await sign(rsa, { ...good, claims: { scope: ['x', 'y'] } });
    const response = await router.query({ query: '{ hello }', headers: bearer(token) });
    expect(response.headers.get('x-scopes')).toBe('x,y');
  });

  it('lets a request without a token through, unauthenticated', async () => {
    const response = await router.query('{ hello }');
    expect(response.status).toBe(200);
    expect(response.headers.get('x-sub')).toBeNull();
  });

  it('refuses malformed tokens and headers without the Bearer prefix with 401', async () => {
    for (const headers of [{ authorization: 'Bearer not-a-jwt' }, { authorization: 'Basic abc' }, { authorization: 'Bearer' }]) {
      const response = await router.query({ query: '{ hello }', headers });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHENTICATED);
      expect(response.headers.get('www-authenticate')).toContain('Bearer');
    }
    expect(hello.calls.filter((c) => c.headers.authorization?.startsWith('Basic'))).toEqual([]);
  });

  it('refuses expired and not-yet-valid tokens, allowing a small clock skew', async () => {
    const expired = await sign(rsa, { ...good, expiresIn: -60 });
    const early = await sign(rsa, { ...good, notBefore: 120 });
    for (const token of [expired, early]) {
      const response = await router.query({ query: '{ hello }', headers: bearer(token) });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHENTICATED);
    }
    expect((await router.query({ query: '{ hello }', headers: bearer(expired) })).body.errors?.[0]?.message).toMatch(/expired/);
    const withinSkew = await sign(rsa, { ...good, expiresIn: -3 });
    expect((await router.query({ query: '{ hello }', headers: bearer(withinSkew) })).status).toBe(200);
  });

  it('refuses alg none and an HS256 token keyed with the public key', async () => {
    const none = new UnsecuredJWT({ sub: 'intruder', iss: good.issuer, aud: good.audience }).setExpirationTime('5m').encode();
    const pem = await exportSPKI(rsa.publicKey);
    const confused = await new SignJWT({ sub: 'intruder', iss: good.issuer, aud: good.audience })
      .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(String(pem)));
    const jwkSecret = await new SignJWT({ sub: 'intruder' }).setProtectedHeader({ alg: 'HS256', kid: rsa.kid }).setExpirationTime('5m').sign(base64url.decode(rsa.jwk.n!));
    for (const token of [none, confused, jwkSecret]) {
      const response = await router.query({ query: '{ hello }', headers: bearer(token) });
      expect(response.status).toBe(401);
      expect(response.body).toEqual(UNAUTHENTICATED);
    }
  });

  it('refuses a wrong issuer, a wrong audience, and a bad signature', async () => {
    const other = await signingKey('rsa-1', 'RS256'); // same kid, other key
    const tokens = [
      await sign(rsa, { issuer: 'https://evil.test', audience: good.audience }),
      await sign(rsa, { issuer: good.issuer, audience: 'someone-else' }),
      await sign(other, good),
    ];
    const messages: string[] = [];
    for (const token of tokens) {
      const response = await router.query({ query: '{ hello }', headers: bearer(token) });
      expect(response.status).toBe(401);
      messages.push(response.body.errors![0]!.message);
    }
    expect(messages[0]).toMatch(/issuer/);
    expect(messages[1]).toMatch(/audience/);
    expect(messages[2]).toMatch(/signature/);
  });

  it('refuses an algorithm outside the provider allow-list', async () => {
    const strict = await routerWith({ jwt: { jwks: [{ url: jwks.url, algorithms: ['ES256'] }] } });
    try {
      expect((await strict.query({ query: '{ hello }', headers: bearer(await sign(ec)) })).status).toBe(200);
      expect((await strict.query({ query: '{ hello }', headers: bearer(await sign(rsa)) })).status).toBe(401);
    } finally {
      await strict.close();
    }
  });

  it('rejects none and HS256 in the algorithm list at startup', () => {
    expect(() => useAuthentication({ jwt: { jwks: [{ url: jwks.url, algorithms: ['none'] }] } })).toThrow(/algorithms\[0\]: unsupported algorithm "none"/);
    expect(() => useAuthentication({ jwt: { jwks: [{ url: jwks.url, algorithms: ['HS256'] }] } })).toThrow(/HS\*/);
  });

  it('reads the token from a configured header and prefix', async () => {
    const custom = await routerWith({ jwt: { jwks: [{ url: jwks.url }], header_name: 'X-Auth', header_value_prefix: '' } });
    try {
      const response = await custom.query({ query: '{ hello }', headers: { 'x-auth': await sign(ed) } });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-sub')).toBe('user-1');
    } finally {
      await custom.close();
    }
  });

  it('reads a prefix written with a trailing space, and rounds a sub-second clock_skew up to a second instead of down to none', async () => {
    const lenient = await routerWith({ jwt: { jwks: [{ url: jwks.url }], header_value_prefix: 'Bearer ', clock_skew: '900ms' } });
    try {
      const response = await lenient.query({ query: '{ hello }', headers: bearer(await sign(rsa, { notBefore: 1 })) });
      expect(response.status).toBe(200);
      expect((await lenient.query({ query: '{ hello }', headers: bearer(await sign(rsa, { notBefore: 3 })) })).status).toBe(401);
    } finally {
      await lenient.close();
    }
  });

  it('refuses at startup a header_name that is not an HTTP header name', () => {
    for (const header_name of ['X Token', 'x-token:', '']) {
      expect(() => useAuthentication({ jwt: { jwks: [{ url: jwks.url }], header_name } })).toThrow(/jwt\.header_name: must be an HTTP header name/);
    }
  });
});

describe('key rotation and unknown kids', () => {
  it('picks up a new key on an unknown kid without a restart, fetching at most once per min_refetch_interval', async () => {
    const server = await startJwksServer([rsa]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, min_refetch_interval: '1s', refresh_interval: '1h' }] } });
    try {
      await eventually(() => server.fetches >= 1);
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa)) })).status).toBe(200);
      // Past the rate limit window of the startup fetch.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const fetched = server.fetches;
      // A kid nobody publishes: one refetch, then refused without asking again within the interval.
      const stranger = await signingKey('unknown', 'RS256');
      const strangerToken = await sign(stranger);
      expect((await router.query({ query: '{ hello }', headers: bearer(strangerToken) })).status).toBe(401);
      expect((await router.query({ query: '{ hello }', headers: bearer(strangerToken) })).status).toBe(401);
      expect(server.fetches).toBe(fetched + 1);
      // The provider rotates: the new key is published, the old one withdrawn.
      const next = await signingKey('rsa-2', 'RS256');
      server.keys = [next];
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const response = await router.query({ query: '{ hello }', headers: bearer(await sign(next, { claims: { sub: 'rotated' } })) });
      expect(response.status).toBe(200);
      expect(response.headers.get('x-sub')).toBe('rotated');
      expect(server.fetches).toBe(fetched + 2);
      // A fresh token of the withdrawn key no longer verifies.
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa, { claims: { sub: 'old' } })) })).status).toBe(401);
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('refreshes the key set every refresh_interval in the background', async () => {
    const server = await startJwksServer([rsa]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1s' }] } });
    try {
      await eventually(() => server.fetches >= 2, 3500);
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('tries several providers', async () => {
    const second = await startJwksServer([ed]);
    const first = await startJwksServer([rsa]);
    const router = await routerWith({ jwt: { jwks: [{ url: first.url }, { url: second.url, algorithms: ['EdDSA'] }] } });
    try {
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa)) })).status).toBe(200);
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(ed)) })).status).toBe(200);
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(ec)) })).status).toBe(401);
    } finally {
      await router.close();
      await first.close();
      await second.close();
    }
  });
});

describe('JWKS server down', () => {
  it('at startup: the router starts, tokens get 401 (never through unchecked), and work once the server answers', async () => {
    const server = await startJwksServer([rsa]);
    server.down = true;
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, min_refetch_interval: '0ms' }] } }, { require_authentication: false });
    try {
      await eventually(() => server.fetches >= 1);
      const token = await sign(rsa, { claims: { sub: 'late' } });
      const refused = await router.query({ query: '{ hello }', headers: bearer(token) });
      expect(refused.status).toBe(401);
      expect(refused.body.errors![0]!.message).toMatch(/no signing keys/);
      server.down = false;
      const accepted = await router.query({ query: '{ hello }', headers: bearer(token) });
      expect(accepted.status).toBe(200);
      expect(accepted.headers.get('x-sub')).toBe('late');
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('later: the keys fetched before stay in use; unknown kids are refused', async () => {
    const server = await startJwksServer([rsa]);
    const router = await routerWith({ jwt: { jwks: [{ url: server.url, refresh_interval: '1s', min_refetch_interval: '0ms' }] } });
    try {
      await eventually(() => server.fetches >= 1);
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa)) })).status).toBe(200);
      server.down = true;
      const before = server.fetches;
      await eventually(() => server.fetches > before, 3000); // a background refresh failed
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa, { claims: { sub: 'still' } })) })).status).toBe(200);
      const unknown = await sign(await signingKey('new-kid', 'RS256'));
      expect((await router.query({ query: '{ hello }', headers: bearer(unknown) })).status).toBe(401);
    } finally {
      await router.close();
      await server.close();
    }
  });

  it('a closed port: no crash, 401 for tokens, requests without tokens still served', async () => {
    const server = await startJwksServer([rsa]);
    const url = server.url;
    await server.close();
    const router = await routerWith({ jwt: { jwks: [{ url, timeout: '500ms' }] } });
    try {
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa)) })).status).toBe(401);
      expect((await router.query('{ hello }')).status).toBe(200);
    } finally {
      await router.close();
    }
  });
});

describe('require_authentication', () => {
  it('answers 401 to requests without a token, introspection included', async () => {
    const router = await routerWith({ jwt: { jwks: [{ url: jwks.url }] } }, { require_authentication: true });
    try {
      for (const query of ['{ hello }', '{ __schema { queryType { name } } }']) {
        const response = await router.query(query);
        expect(response.status).toBe(401);
        expect(response.body).toEqual(UNAUTHENTICATED);
      }
      expect((await router.query({ query: '{ hello }', headers: bearer(await sign(rsa)) })).status).toBe(200);
      const executed = await router.router.execute({ query: '{ hello }' });
      expect(executed.status).toBe(401);
    } finally {
      await router.close();
    }
  });
});

describe('ignore_introspection', () => {
  let router: TestRouter;
  beforeAll(async () => {
    router = await routerWith({ jwt: { jwks: [{ url: jwks.url }] }, ignore_introspection: true }, { require_authentication: true });
  });
  afterAll(() => router?.close());

  it('lets a document of introspection fields only run without a token', async () => {
    const schema = await router.query('{ __schema { queryType { name } } }');
    expect({ status: schema.status, body: schema.body }).toEqual({ status: 200, body: { data: { __schema: { queryType: { name: 'Query' } } } } });
    const typed = await router.query({ query: 'query Types { __type(name: "Query") { fields { name } } t: __typename }', operationName: 'Types' });
    expect(typed.body).toEqual({ data: { __type: { fields: [{ name: 'hello' }] }, t: 'Query' } });
    const fragments = await router.query('{ ...Schema ... on Query { __typename } } fragment Schema on Query { __schema { queryType { name } } }');
    expect(fragments.body).toEqual({ data: { __schema: { queryType: { name: 'Query' } }, __typename: 'Query' } });
    const get = await router.query({ query: '{ __typename }', method: 'GET' });
    expect(get.body).toEqual({ data: { __typename: 'Query' } });
    expect((await router.router.execute({ query: '{ __schema { queryType { name } } }' })).status).toBe(200);
  });

  it('answers 401 to a document that mixes introspection with other fields, before validating it', async () => {
    hello.reset();
    for (const request of [
      { query: '{ __schema { queryType { name } } hello }' },
      { query: '{ ...F } fragment F on Query { __typename hello }' },
      { query: '{ ... on Query { __type(name: "Query") { name } hello } }' },
      // Every operation of the document counts, not only the one asked for.
      { query: 'query A { __typename } query B { hello }', operationName: 'A' },
      // A misspelt field gives no "Did you mean" suggestion to a client without a token.
      { query: '{ __typename helo }' },
      // Nor does a second fragment of the same name (only one of the two is introspection).
      { query: '{ ...F } fragment F on Query { helo } fragment F on Query { __typename }' },
    ]) {
      const response = await router.query(request);
      expect({ query: request.query, status: response.status, body: response.body }).toEqual({ query: request.query, status: 401, body: UNAUTHENTICATED });
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
    }
    expect(hello.calls).toHaveLength(0);
    // With a token, the same mixed document runs.
    const allowed = await router.query({ query: '{ __typename hello }', headers: bearer(await sign(rsa)) });
    expect(allowed.body).toEqual({ data: { __typename: 'Query', hello: 'world' } });
  });

  it('still verifies a token that is sent', async () => {
    const response = await router.query({ query: '{ __schema { queryType { name } } }', headers: { authorization: 'Bearer not.a.token' } });
    expect(response.status).toBe(401);
    expect(response.body).toEqual(UNAUTHENTICATED);
  });

  it('keeps introspection.enabled: false, with or without a token', async () => {
    const closed = await routerWith({ jwt: { jwks: [{ url: jwks.url }] }, ignore_introspection: true }, { require_authentication: true }, { introspection: { enabled: false } });
    try {
      for (const headers of [{}, bearer(await sign(rsa))]) {
        const response = await closed.query({ query: '{ __schema { queryType { name } } }', headers });
        expect(response.status).toBe(400);
        expect(response.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(response.body.errors?.[0]?.message).toMatch(/introspection has been disabled/);
      }
      expect((await closed.query('{ hello }')).status).toBe(401);
    } finally {
      await closed.close();
    }
  });

  it('is off by default, and refuses a value that is not a boolean', async () => {
    expect(useAuthentication.optionsSchema.parse({ jwt: { jwks: [{ url: jwks.url }] } }).ignore_introspection).toBe(false);
    expect(() => useAuthentication({ jwt: { jwks: [{ url: jwks.url }] }, ignore_introspection: 'yes' as unknown as boolean })).toThrow(/ignore_introspection/);
  });
});
