/**
 * Which answer `Accept` gets on `/graphql` when it names streaming and JSON
 * types together: every range competes by quality (RFC 9110 12.5.1), the
 * first listed wins a tie, and the answer streams only when a streaming type
 * wins. A `subscriptionSpec` the router does not serve is refused (406) only
 * when nothing else fits; `multipart/mixed` without `subscriptionSpec`
 * stays incremental delivery. Real HTTP against a listening router over
 * real subgraphs.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { eventually, onCleanup, setupSubscriptions, SUBSCRIPTION, type SubscriptionSetup } from './fixtures.js';

const QUERY = '{ product(upc: "p1") { name price } }';
const QUERY_RESULT = { data: { product: { name: 'Table', price: 100 } } };
const TABLE = { upc: 'p1', name: 'Table', price: 100 };

/** A raw request to the router's `/graphql`: POST with a JSON body, or GET with the parameters in the query string. */
function send(setup: SubscriptionSetup, accept: string, body: unknown, method: 'GET' | 'POST' = 'POST'): Promise<IncomingMessage> {
  const target = method === 'GET' ? `${setup.url}/graphql?query=${encodeURIComponent((body as { query: string }).query)}` : `${setup.url}/graphql`;
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept };
    if (method === 'POST') headers['content-type'] = 'application/json';
    const req = httpRequest(target, { method, headers }, resolve);
    req.on('error', reject);
    onCleanup(() => void req.destroy());
    req.end(method === 'POST' ? JSON.stringify(body) : undefined);
  });
}

async function readAll(res: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of res) text += String(chunk);
  return text;
}

/** Status, content type and the whole body, parsed: a JSON answer must be complete. */
async function jsonAnswer(res: IncomingMessage): Promise<{ status: number | undefined; type: string | undefined; body: unknown }> {
  return { status: res.statusCode, type: res.headers['content-type'], body: JSON.parse(await readAll(res)) };
}

describe('Accept qualities decide between JSON and a stream', () => {
  it.each([
    ['text/event-stream;q=0.001, application/json', 'POST'],
    ['text/event-stream;q=0.001, application/json', 'GET'],
    ['multipart/mixed;subscriptionSpec="2.0", application/json', 'POST'],
    ['multipart/mixed;subscriptionSpec="2.0", application/json', 'GET'],
    ['multipart/mixed;subscriptionSpec="1.0";q=0.2, application/json', 'POST'],
    ['multipart/mixed;subscriptionSpec="1.0";q=0.2, application/json', 'GET'],
    ['text/event-stream;q=0.5, */*', 'POST'],
  ] as const)('a query with Accept %s (%s) is answered as one complete JSON result', async (accept, method) => {
    const setup = await setupSubscriptions();
    expect(await jsonAnswer(await send(setup, accept, { query: QUERY }, method))).toEqual({ status: 200, type: 'application/json; charset=utf-8', body: QUERY_RESULT });
  });

  it('prefers application/graphql-response+json over a less wanted stream', async () => {
    const setup = await setupSubscriptions();
    const res = await send(setup, 'text/event-stream;q=0.9, application/graphql-response+json', { query: QUERY });
    expect(await jsonAnswer(res)).toEqual({ status: 200, type: 'application/graphql-response+json; charset=utf-8', body: QUERY_RESULT });
  });

  it('answers a batch with JSON when JSON is preferred to text/event-stream, instead of refusing it as a stream', async () => {
    const setup = await setupSubscriptions({ config: { limits: { max_batch_size: 2 } } });
    const res = await send(setup, 'text/event-stream;q=0.1, application/json', [{ query: QUERY }, { query: '{ product(upc: "p2") { name } }' }]);
    expect(await jsonAnswer(res)).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: [QUERY_RESULT, { data: { product: { name: 'Chair' } } }],
    });
  });

  it('answers a subscription as plain GraphQL over HTTP (400 SUBSCRIPTION_NOT_SUPPORTED) when JSON is preferred, opening nothing upstream', async () => {
    const setup = await setupSubscriptions();
    const answer = (await jsonAnswer(await send(setup, 'text/event-stream;q=0.001, application/json', { query: SUBSCRIPTION }))) as {
      status: number;
      type: string;
      body: { errors: Array<{ extensions: { code: string } }> };
    };
    expect({ status: answer.status, type: answer.type, code: answer.body.errors[0]!.extensions.code }).toEqual({
      status: 400,
      type: 'application/json; charset=utf-8',
      code: 'SUBSCRIPTION_NOT_SUPPORTED',
    });
    expect(setup.reviews.open()).toBe(0);
  });

  it('streams a subscription over SSE when text/event-stream has the higher quality, even listed after JSON', async () => {
    const setup = await setupSubscriptions();
    const res = await send(setup, 'application/json;q=0.5, text/event-stream', { query: SUBSCRIPTION });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    await eventually(() => setup.reviews.open() === 1);
    setup.reviews.push({ id: 'r1', body: 'Sturdy', upc: 'p1' });
    setup.reviews.push('end');
    expect(await readAll(res)).toContain(`event: next\ndata: ${JSON.stringify({ data: { reviewAdded: { id: 'r1', body: 'Sturdy', product: TABLE } } })}\n\n`);
  });

  it('passes over an unknown subscriptionSpec to a streaming type that fits', async () => {
    const setup = await setupSubscriptions();
    const res = await send(setup, 'multipart/mixed;subscriptionSpec="2.0", text/event-stream;q=0.1', { query: QUERY });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/event-stream');
    expect(await readAll(res)).toContain(`event: next\ndata: ${JSON.stringify(QUERY_RESULT)}\n\n`);
  });

  it('still refuses an unknown subscriptionSpec with 406 when nothing else in Accept fits', async () => {
    const setup = await setupSubscriptions();
    for (const accept of ['multipart/mixed;subscriptionSpec="2.0"', 'multipart/mixed;subscriptionSpec="2.0", application/json;q=0']) {
      const answer = (await jsonAnswer(await send(setup, accept, { query: SUBSCRIPTION }))) as {
        status: number;
        type: string;
        body: { errors: Array<{ extensions: { code: string } }> };
      };
      expect({ status: answer.status, type: answer.type, code: answer.body.errors[0]!.extensions.code }).toEqual({
        status: 406,
        type: 'application/json; charset=utf-8',
        code: 'BAD_REQUEST',
      });
    }
    expect(setup.reviews.open()).toBe(0);
  });
});

describe('multipart/mixed without subscriptionSpec (incremental delivery)', () => {
  it('leaves multipart/mixed;deferSpec (incremental delivery) with JSON beside it to GraphQL over HTTP', async () => {
    const setup = await setupSubscriptions();
    expect(await jsonAnswer(await send(setup, 'multipart/mixed;deferSpec=20220824, application/json', { query: QUERY }))).toEqual({
      status: 200,
      type: 'application/json; charset=utf-8',
      body: QUERY_RESULT,
    });
  });
});

describe('a streamed request the pipeline refuses', () => {
  it.each([
    // What Apollo Client 4 sends for a subscription: it reads the GraphQL errors of a 4xx only from application/graphql-response+json.
    ['multipart/mixed;boundary=graphql;subscriptionSpec=1.0,application/graphql-response+json,application/json;q=0.9', 'application/graphql-response+json; charset=utf-8'],
    ['text/event-stream, application/graphql-response+json', 'application/graphql-response+json; charset=utf-8'],
    ['multipart/mixed;subscriptionSpec="1.0", application/json', 'application/json; charset=utf-8'],
    ['multipart/mixed;subscriptionSpec="1.0"', 'application/json; charset=utf-8'],
  ])('with Accept %s is answered as %s', async (accept, type) => {
    const setup = await setupSubscriptions();
    const answer = (await jsonAnswer(await send(setup, accept, { query: 'subscription { reviewAdded(nope: 1) { id } }' }))) as {
      status: number;
      type: string;
      body: { errors: Array<{ extensions: { code: string } }> };
    };
    expect({ status: answer.status, type: answer.type, code: answer.body.errors[0]!.extensions.code }).toEqual({ status: 400, type, code: 'GRAPHQL_VALIDATION_FAILED' });
  });
});
