/**
 * The HTTP transport's deadline: a subgraph that never answers is given up
 * after the timeout (SUBGRAPH_TIMEOUT), and a caller that goes away (its
 * signal aborts) drops the call at once, without waiting for the timeout.
 * One real node:http subgraph that takes requests and never answers.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterError } from '../../../src/kernel/errors.js';
import { createHttpTransport, createSubgraphAgent } from '../../../src/kernel/fetch/http-transport.js';
import type { SubgraphRequest } from '../../../src/kernel/fetch/subgraph-types.js';

let server: Server;
let url: string;
/** Resolvers waiting for the next request to reach the subgraph. */
const arrivals: Array<(request: IncomingMessage) => void> = [];
const agent = createSubgraphAgent();

beforeAll(async () => {
  server = createServer((request) => {
    request.resume();
    arrivals.shift()?.(request);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await agent.close();
});

const REQUEST: SubgraphRequest = {
  subgraph: 'silent',
  kind: 'root',
  operationType: 'query',
  query: '{ __typename }',
  operationName: undefined,
  variables: {},
  representations: undefined,
  selectionSet: '{ __typename }',
  headers: {},
  fetchId: 0,
};

function nextArrival(): Promise<IncomingMessage> {
  return new Promise((resolve) => arrivals.push(resolve));
}

async function failure(call: Promise<unknown>): Promise<RouterError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RouterError);
  return error as RouterError;
}

describe('the HTTP transport deadline', () => {
  it('gives up on a subgraph that does not answer within the timeout', async () => {
    const send = createHttpTransport({ url, timeoutMs: 150, agent });
    const started = Date.now();
    const error = await failure(send(REQUEST, new AbortController().signal));
    expect(error.code).toBe('SUBGRAPH_TIMEOUT');
    expect(error.message).toBe('Subgraph "silent" did not answer within 150ms.');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("drops the call as soon as the caller's signal aborts, long before the timeout", async () => {
    const send = createHttpTransport({ url, timeoutMs: 60_000, agent });
    const caller = new AbortController();
    const arrived = nextArrival();
    const call = send(REQUEST, caller.signal);
    const request = await arrived;
    const closed = new Promise((resolve) => request.socket.once('close', resolve));
    caller.abort(new Error('client went away'));
    const error = await failure(call);
    expect(error.code).toBe('SUBGRAPH_REQUEST_FAILED');
    expect(error.message).toContain('client went away');
    // The connection to the subgraph is closed, not left waiting.
    await closed;
  });

  it('does not send a call whose caller is gone already', async () => {
    const send = createHttpTransport({ url, timeoutMs: 60_000, agent });
    const error = await failure(send(REQUEST, AbortSignal.abort(new Error('gone before'))));
    expect(error.code).toBe('SUBGRAPH_REQUEST_FAILED');
    expect(error.message).toContain('gone before');
  });
});
