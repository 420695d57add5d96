/**
 * Subscriptions over HTTP: GraphQL over Server-Sent Events (graphql-sse's
 * distinct connections mode, read with the `graphql-sse` client) and Apollo's
 * multipart subscriptions (read with `meros`). The events come from a real
 * graphql-ws subgraph, their product fields from an HTTP subgraph.
 */
import { createHash } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { createClient, type Client as SseClient } from 'graphql-sse';
import { createClient as createWsClient } from 'graphql-ws';
import { meros } from 'meros/node';
import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useAuthentication } from '../../plugins/authentication/index.js';
import { useAutomaticPersistedQueries } from '../../plugins/automatic-persisted-queries/index.js';
import { useAuthorization } from '../../plugins/authorization/index.js';
import { bearer, sign, signingKey, startJwksServer } from '../plugins/authentication/jwks-fixtures.js';
import { streamingProtocolOf } from '../../src/kernel/subscriptions/http-stream-request.js';
import { eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, SUBSCRIPTION_P1, type SubscriptionSetup } from './fixtures.js';

const TABLE = { upc: 'p1', name: 'Table', price: 100 };
const CHAIR = { upc: 'p2', name: 'Chair', price: 50 };

/** What a graphql-sse client receives for one operation. */
function sseCollect(client: SseClient, payload: { query: string; variables?: Record<string, unknown>; extensions?: Record<string, unknown> }) {
  const state = { events: [] as unknown[], error: undefined as unknown, completed: false };
  const dispose = client.subscribe(payload, {
    next: (value) => void state.events.push(value),
    error: (error) => void (state.error = error),
    complete: () => void (state.completed = true),
  });
  return Object.assign(state, { dispose });
}

function sseClient(setup: SubscriptionSetup, headers: Record<string, string> = {}): SseClient {
  const client = createClient({ url: `${setup.url}/graphql`, retryAttempts: 0, headers });
  onCleanup(() => client.dispose());
  return client;
}

/** A raw streamed request: status, headers and the response to read (multipart with meros, or as text). */
function open(url: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'POST', headers: init.headers }, resolve);
    req.on('error', reject);
    onCleanup(() => void req.destroy());
    req.end(init.body);
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text;
}

const MULTIPART_ACCEPT = 'multipart/mixed;subscriptionSpec="1.0", application/json';

/** Opens a multipart subscription and collects its JSON parts as they arrive. */
async function multipart(setup: SubscriptionSetup, query: string, headers: Record<string, string> = {}) {
  const res = await open(`${setup.url}/graphql`, {
    headers: { 'content-type': 'application/json', accept: MULTIPART_ACCEPT, ...headers },
    body: JSON.stringify({ query }),
  });
  const state = { res, parts: [] as unknown[], partTypes: new Set<unknown>(), ended: false };
  if (res.statusCode !== 200) return Object.assign(state, { body: await readAll(res) });
  const parts = await meros<unknown>(res);
  if (!(Symbol.asyncIterator in parts)) throw new Error('not a multipart answer');
  void (async () => {
    for await (const part of parts) {
      state.parts.push(part.body);
      state.partTypes.add(part.headers['content-type']);
    }
  })()
    // Cut short (the test disconnects, or cleanup does): the reader stops, as a client's would.
    .catch(() => undefined)
    .finally(() => (state.ended = true));
  return Object.assign(state, { body: '' });
}

/** Parts other than heartbeats. */
function payloads(parts: unknown[]): unknown[] {
  return parts.filter((part) => JSON.stringify(part) !== '{}');
}

describe('choosing the protocol from Accept', () => {
  it.each([
    ['text/event-stream', 'sse'],
    ['text/event-stream, application/json', 'sse'],
    ['application/json, text/event-stream', undefined],
    ['text/event-stream;q=0, application/json', undefined],
    ['text/event-stream;q=0.0, application/json', undefined],
    ['multipart/mixed;subscriptionSpec=1.0;q=0.000, application/json', undefined],
    ['text/event-stream;q=0.5', 'sse'],
    ['multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json', 'multipart'],
    ['multipart/mixed; subscriptionSpec="1.0"', 'multipart'],
    ['multipart/mixed;subscriptionSpec="2.0"', 'multipart-unsupported'],
    ['multipart/mixed;deferSpec=20220824, application/json', undefined],
    // Qualities decide (RFC 9110), the first listed on a tie; an unknown subscriptionSpec is refused only when nothing else fits.
    ['text/event-stream;q=0.001, application/json', undefined],
    ['application/json;q=0.5, text/event-stream', 'sse'],
    ['text/event-stream;q=0.5, */*', undefined],
    ['*/*, text/event-stream', undefined],
    ['text/event-stream, */*', 'sse'],
    ['multipart/mixed;subscriptionSpec="2.0", application/json', undefined],
    ['multipart/mixed;subscriptionSpec="2.0", text/event-stream;q=0.1', 'sse'],
    ['multipart/mixed;subscriptionSpec="2.0", application/json;q=0', 'multipart-unsupported'],
    ['multipart/mixed;subscriptionSpec="1.0";q=0.2, application/json', undefined],
    ['application/json;q=0.2, multipart/mixed;subscriptionSpec="1.0"', 'multipart'],
    ['text/event-stream;q=0.3, multipart/mixed;subscriptionSpec="1.0";q=0.4', 'multipart'],
    // Without subscriptionSpec: incremental delivery (@defer clients), GraphQL over HTTP's.
    ['multipart/mixed', undefined],
    ['multipart/mixed, text/event-stream;q=0.5', 'sse'],
    ['multipart/mixed;deferSpec=20220824', undefined],
    ['*/*', undefined],
    [undefined, undefined],
  ])('%s -> %s', (accept, protocol) => {
    expect(streamingProtocolOf(accept)).toBe(protocol);
  });
});

describe('GraphQL over SSE (distinct connections)', () => {
  it('streams federated events to a graphql-sse client and completes with the subgraph', async () => {
    const setup = await setupSubscriptions();
    const sub = sseCollect(sseClient(setup), { query: SUBSCRIPTION });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push({ id: 'r2', body: 'Wobbly', upc: 'p2' });
    await eventually(() => sub.events.length === 2);
    expect(sub.events).toEqual([{ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } }, { data: { reviewAdded: { id: 'r2', body: 'Wobbly', product: CHAIR } } }]);
    setup.reviews.push('end');
    await eventually(() => sub.completed);
    expect(sub.error).toBeUndefined();
  });

  it('closes the subgraph subscription when the client goes away', async () => {
    const setup = await setupSubscriptions();
    const sub = sseCollect(sseClient(setup), { query: SUBSCRIPTION });
    await eventually(() => setup.reviews.open() === 1);
    sub.dispose();
    await eventually(() => setup.reviews.open() === 0);
  });

  it('sends a failing subgraph stream as a last event with its error, then completes', async () => {
    const setup = await setupSubscriptions();
    const sub = sseCollect(sseClient(setup), { query: SUBSCRIPTION });
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ fail: 'the review feed broke' });
    await eventually(() => sub.completed);
    const last = sub.events.at(-1) as { errors: Array<{ message: string; extensions: Record<string, unknown> }> };
    expect(last.errors[0]!.message).toContain('the review feed broke');
    expect(last.errors[0]!.extensions).toMatchObject({ code: 'SUBSCRIPTION_UPSTREAM_FAILED', serviceName: 'reviews' });
  });

  it('answers a query with one event', async () => {
    const setup = await setupSubscriptions();
    const sub = sseCollect(sseClient(setup), { query: '{ product(upc: "p2") { name } }' });
    await eventually(() => sub.completed);
    expect(sub.events).toEqual([{ data: { product: { name: 'Chair' } } }]);
  });

  it('opens the stream at once with a keep-alive comment, also for GET', async () => {
    const setup = await setupSubscriptions();
    const res = await open(`${setup.url}/graphql?query=${encodeURIComponent(SUBSCRIPTION)}`, { method: 'GET', headers: { accept: 'text/event-stream' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    const first = await new Promise<string>((resolve) => res.once('data', (chunk) => resolve(String(chunk))));
    expect(first).toBe(':\n\n');
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push('end');
    const rest = await readAll(res);
    expect(rest).toContain(`event: next\ndata: ${JSON.stringify({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } })}\n\n`);
    expect(rest).toContain('event: complete');
  });

  it('refuses bad requests with 4xx and a coded error, never opening a stream', async () => {
    const setup = await setupSubscriptions();
    const post = (body: string, contentType = 'application/json') => open(`${setup.url}/graphql`, { headers: { accept: 'text/event-stream', 'content-type': contentType }, body });
    const cases: Array<[Promise<IncomingMessage>, number, string]> = [
      [post('{not json'), 400, 'BAD_REQUEST'],
      [post('[]'), 400, 'BAD_REQUEST'],
      [post(JSON.stringify({ query: SUBSCRIPTION }), 'application/xml'), 415, 'BAD_REQUEST'],
      // CSRF prevention runs first, as for every POST a browser may send cross-site without a preflight.
      [post(JSON.stringify({ query: SUBSCRIPTION }), 'text/plain'), 400, 'CSRF_PREVENTED'],
      [post(JSON.stringify({ query: 1 })), 400, 'BAD_REQUEST'],
      [post(JSON.stringify({})), 400, 'BAD_REQUEST'],
      [post(JSON.stringify({ query: 'subscription { reviewAdded { nope } }' })), 400, 'GRAPHQL_VALIDATION_FAILED'],
      [post(JSON.stringify({ query: 'subscription {' })), 400, 'GRAPHQL_PARSE_FAILED'],
      [open(`${setup.url}/graphql?query=x&variables=%7Bnope`, { method: 'GET', headers: { accept: 'text/event-stream' } }), 400, 'BAD_REQUEST'],
      [open(`${setup.url}/graphql`, { method: 'PUT', headers: { accept: 'text/event-stream' } }), 405, 'BAD_REQUEST'],
    ];
    for (const [pending, status, code] of cases) {
      const res = await pending;
      const body = JSON.parse(await readAll(res)) as { errors: Array<{ extensions?: { code?: string } }> };
      expect({ status: res.statusCode, code: body.errors[0]!.extensions?.code }).toEqual({ status, code });
    }
    expect(setup.reviews.open()).toBe(0);
  });

  it('refuses @skip or @include on the top level field, with a variable or a literal, through fragments too: 400, no stream', async () => {
    const setup = await setupSubscriptions();
    const post = (body: object) => open(`${setup.url}/graphql`, { headers: { accept: 'text/event-stream', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const cases = [
      { query: 'subscription S($v: Boolean!) { reviewAdded @skip(if: $v) { id } }', variables: { v: false }, subject: 'Subscription "S"' },
      { query: 'subscription { reviewAdded @include(if: true) { id } }', subject: 'Anonymous Subscription' },
      { query: 'subscription T { ...F } fragment F on Subscription { ... @skip(if: false) { reviewAdded { id } } }', subject: 'Subscription "T"' },
    ];
    for (const { subject, ...body } of cases) {
      const res = await post(body);
      const answer = JSON.parse(await readAll(res)) as { errors: Array<{ message: string; extensions?: { code?: string } }> };
      expect({ status: res.statusCode, errors: answer.errors }).toMatchObject({
        status: 400,
        errors: [{ message: `${subject} must not use \`@skip\` or \`@include\` directives in the top level selection.`, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
      });
    }
    // Below the top level they are ordinary.
    const nested = sseCollect(sseClient(setup), { query: 'subscription ($v: Boolean!) { reviewAdded { id body @skip(if: $v) } }', variables: { v: true } });
    await eventually(() => setup.reviews.open() === 1);
    nested.dispose();
    expect(nested.error).toBeUndefined();
  });

  it("reads parameters with the router's one reader: a bad parameter gets the same 400 and message as over GraphQL over HTTP", async () => {
    const setup = await setupSubscriptions();
    const bodies = [{ query: SUBSCRIPTION, operationName: 1 }, { query: SUBSCRIPTION, documentId: '' }, { query: SUBSCRIPTION, bogus: true }, { variables: {} }];
    for (const body of bodies) {
      const asked = (accept: string) =>
        fetch(`${setup.url}/graphql`, { method: 'POST', headers: { accept, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (res) => ({
          status: res.status,
          message: ((await res.json()) as { errors: Array<{ message: string }> }).errors[0]!.message,
        }));
      const streamed = await asked('text/event-stream');
      expect(streamed.status).toBe(400);
      expect(streamed).toEqual(await asked('application/graphql-response+json'));
    }
    expect(setup.reviews.open()).toBe(0);
  });

  it('refuses a body over limits.max_request_body with 413', async () => {
    const setup = await setupSubscriptions({ config: { limits: { max_request_body: '1KB' } } });
    const res = await open(`${setup.url}/graphql`, {
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ query: SUBSCRIPTION, variables: { pad: 'x'.repeat(2000) } }),
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(await readAll(res)).errors[0].extensions.code).toBe('REQUEST_TOO_LARGE');
  });

  it('completes streams when the router shuts down', async () => {
    const setup = await setupSubscriptions();
    const sub = sseCollect(sseClient(setup), { query: SUBSCRIPTION });
    await eventually(() => setup.reviews.open() === 1);
    await setup.router.close();
    await eventually(() => sub.completed || sub.error !== undefined);
    expect(sub.completed).toBe(true);
    await eventually(() => setup.reviews.open() === 0);
  });
});

describe('multipart subscriptions (subscriptionSpec 1.0)', () => {
  it('sends each federated event as a payload part and closes with the subgraph', async () => {
    const setup = await setupSubscriptions();
    const sub = await multipart(setup, SUBSCRIPTION);
    expect(sub.res.statusCode).toBe(200);
    expect(sub.res.headers['content-type']).toBe('multipart/mixed;boundary="graphql";subscriptionSpec=1.0');
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push('end');
    await eventually(() => sub.ended);
    expect(payloads(sub.parts)).toEqual([{ payload: { data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } } }]);
    // Apollo iOS reads parts of exactly application/json (and subscriptionSpec=1.0 unquoted, above), as Apollo Router writes them.
    expect([...sub.partTypes]).toEqual(['application/json']);
  });

  it('sends heartbeat parts every 5 s while no event flows', async () => {
    const setup = await setupSubscriptions();
    const sub = await multipart(setup, SUBSCRIPTION);
    await eventually(() => sub.parts.length === 1, 7000);
    expect(sub.parts).toEqual([{}]);
  }, 10_000);

  it('ends with a transport error part when the subgraph fails', async () => {
    const setup = await setupSubscriptions();
    const sub = await multipart(setup, SUBSCRIPTION);
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ fail: 'the review feed broke' });
    await eventually(() => sub.ended);
    const [failure] = payloads(sub.parts) as Array<{ payload: null; errors: Array<{ message: string; extensions: Record<string, unknown> }> }>;
    expect(failure!.payload).toBeNull();
    expect(failure!.errors[0]!.message).toContain('the review feed broke');
    expect(failure!.errors[0]!.extensions.code).toBe('SUBSCRIPTION_UPSTREAM_FAILED');
  });

  it('closes the subgraph subscription when the client disconnects', async () => {
    const setup = await setupSubscriptions();
    const sub = await multipart(setup, SUBSCRIPTION);
    await eventually(() => setup.reviews.open() === 1);
    sub.res.destroy();
    await eventually(() => setup.reviews.open() === 0);
  });

  it('answers a query with one payload part', async () => {
    const setup = await setupSubscriptions();
    const sub = await multipart(setup, '{ product(upc: "p1") { name } }');
    await eventually(() => sub.ended);
    expect(payloads(sub.parts)).toEqual([{ payload: { data: { product: { name: 'Table' } } } }]);
  });

  it('refuses another subscriptionSpec with 406', async () => {
    const setup = await setupSubscriptions();
    const res = await open(`${setup.url}/graphql`, {
      headers: { 'content-type': 'application/json', accept: 'multipart/mixed;subscriptionSpec="2.0"' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    expect(res.statusCode).toBe(406);
    expect(JSON.parse(await readAll(res)).errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('leaves JSON requests to GraphQL over HTTP, which refuses subscriptions there', async () => {
    const setup = await setupSubscriptions();
    const res = await open(`${setup.url}/graphql`, {
      headers: { 'content-type': 'application/json', accept: 'application/json, multipart/mixed;subscriptionSpec="1.0"' },
      body: JSON.stringify({ query: SUBSCRIPTION }),
    });
    const body = JSON.parse(await readAll(res)) as { errors: Array<{ message: string; extensions: { code: string } }> };
    expect(body.errors[0]!.extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED');
    expect(body.errors[0]!.message).toContain('text/event-stream');
  });
});

describe('persisted subscriptions over HTTP streams', () => {
  it('runs a subscription sent by its APQ hash over SSE once the router knows it', async () => {
    const setup = await setupSubscriptions({ plugins: [useAutomaticPersistedQueries({ enabled: true })] });
    const extensions = { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(SUBSCRIPTION).digest('hex') } };
    const unknown = await open(`${setup.url}/graphql`, { headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ extensions }) });
    expect(await readAll(unknown)).toContain('PersistedQueryNotFound');
    const register = sseCollect(sseClient(setup), { query: SUBSCRIPTION, extensions });
    await eventually(() => setup.reviews.open() === 1);
    register.dispose();
    await eventually(() => setup.reviews.open() === 0);
    const byHash = await open(`${setup.url}/graphql`, { headers: { 'content-type': 'application/json', accept: 'text/event-stream' }, body: JSON.stringify({ extensions }) });
    expect(byHash.statusCode).toBe(200);
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push('end');
    expect(await readAll(byHash)).toContain(JSON.stringify({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } }));
  });
});

describe('subscriptions.max_total across protocols', () => {
  it('counts SSE, multipart and WebSocket subscriptions together', async () => {
    const setup = await setupSubscriptions({ config: { subscriptions: { max_total: 2 } } });
    const sse = sseCollect(sseClient(setup), { query: SUBSCRIPTION });
    const ws = createWsClient({ url: `${setup.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    onCleanup(() => ws.dispose());
    const wsEvents: unknown[] = [];
    ws.subscribe({ query: SUBSCRIPTION_P1 }, { next: (value) => void wsEvents.push(value), error: () => undefined, complete: () => undefined });
    await eventually(() => setup.reviews.open() === 2);
    const third = await multipart(setup, SUBSCRIPTION);
    expect(third.res.statusCode).toBe(429);
    expect(JSON.parse(third.body).errors[0].extensions.code).toBe('SUBSCRIPTION_LIMIT_EXCEEDED');
    let refused: unknown;
    ws.subscribe({ query: SUBSCRIPTION }, { next: () => undefined, error: (error) => void (refused = error), complete: () => undefined });
    await eventually(() => refused !== undefined);
    expect((refused as Array<{ extensions: { code: string } }>)[0]!.extensions.code).toBe('SUBSCRIPTION_LIMIT_EXCEEDED');
    // One leaves: a new stream fits again.
    sse.dispose();
    await eventually(() => setup.reviews.open() === 1);
    const fits = await multipart(setup, SUBSCRIPTION);
    expect(fits.res.statusCode).toBe(200);
    await eventually(() => setup.reviews.open() === 2);
  });
});

describe('authentication on streamed subscriptions', () => {
  async function secured() {
    const key = await signingKey('k1', 'RS256');
    const jwks = await startJwksServer([key]);
    onCleanup(() => jwks.close());
    const setup = await setupSubscriptions({
      plugins: [useAuthentication({ jwt: { jwks: [{ url: jwks.url }] } }), useAuthorization({ require_authentication: true })],
    });
    return { setup, token: await sign(key) };
  }

  it('refuses SSE and multipart without a valid token with 401, and streams with one', async () => {
    const { setup, token } = await secured();
    for (const accept of ['text/event-stream', MULTIPART_ACCEPT]) {
      for (const headers of [{}, { authorization: 'Bearer not-a-token' }] as Array<Record<string, string>>) {
        const res = await open(`${setup.url}/graphql`, { headers: { 'content-type': 'application/json', accept, ...headers }, body: JSON.stringify({ query: SUBSCRIPTION }) });
        expect(res.statusCode).toBe(401);
        expect(JSON.parse(await readAll(res)).errors[0].extensions.code).toBe('UNAUTHENTICATED');
      }
    }
    expect(setup.reviews.open()).toBe(0);
    const sse = sseCollect(sseClient(setup, bearer(token)), { query: SUBSCRIPTION_P1 });
    const parts = await multipart(setup, SUBSCRIPTION, bearer(token));
    await eventually(() => setup.reviews.open() === 2);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    await eventually(() => sse.events.length === 1 && payloads(parts.parts).length === 1);
    expect(sse.events[0]).toEqual({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } });
    expect(payloads(parts.parts)[0]).toEqual({ payload: sse.events[0] });
  });
});
