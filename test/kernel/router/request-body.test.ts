/**
 * Reading request bodies within `limits.max_request_body` (request-body.ts):
 * node requests sent over a real socket (declared and chunked bodies,
 * clients that leave mid-body) and fetch streams; and the streamed-answer
 * path's 413, which answers as the router's others do and closes the
 * connection on the unread rest.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/kernel/logger.js';
import { readFetchBody, readNodeBody, tooLargeMessage } from '../../../src/kernel/router/request-body.js';
import { createStreamingHttpEndpoint } from '../../../src/kernel/subscriptions/streaming-http.js';

const LIMIT = 64;

interface Arrived {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

let server: Server;
let port: number;
let waiting: ((arrived: Arrived) => void) | undefined;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const take = waiting;
    waiting = undefined;
    if (take) take({ req, res });
    else res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterEach(() => {
  for (const socket of sockets.splice(0)) socket.destroy();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** The next request the server gets. */
function nextRequest(): Promise<Arrived> {
  return new Promise((resolve) => {
    waiting = resolve;
  });
}

/** A raw client socket (closed after the test), so a test decides every byte and when the client leaves. */
async function rawClient(): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  sockets.push(socket);
  await new Promise((resolve) => socket.once('connect', resolve));
  return socket;
}

function head(headers: Record<string, string | number>): string {
  return `POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

/** One chunk of a chunked body. */
function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`;
}

describe('readNodeBody', () => {
  it('returns a body of exactly the limit, a single chunk as it arrived (not copied)', async () => {
    const arriving = nextRequest();
    const body = 'a'.repeat(LIMIT);
    (await rawClient()).write(head({ 'content-length': LIMIT }) + body);
    const { req } = await arriving;
    const seen: Buffer[] = [];
    req.on('data', (data: Buffer) => seen.push(data));
    const read = await readNodeBody(req, LIMIT);
    expect(read?.toString()).toBe(body);
    expect(seen).toHaveLength(1);
    expect(read).toBe(seen[0]);
  });

  it('refuses a declared length one over the limit at once, reading none of it', async () => {
    const arriving = nextRequest();
    // Only the head: a reader that waited for the body would never finish.
    (await rawClient()).write(head({ 'content-length': LIMIT + 1 }));
    const { req } = await arriving;
    expect(await readNodeBody(req, LIMIT)).toBeUndefined();
    expect(req.readableFlowing).toBeNull();
  });

  it('joins a chunked body of exactly the limit', async () => {
    const arriving = nextRequest();
    const socket = await rawClient();
    socket.write(head({ 'transfer-encoding': 'chunked' }) + chunk('a'.repeat(20)));
    const { req } = await arriving;
    const reading = readNodeBody(req, LIMIT);
    socket.write(chunk('b'.repeat(20)));
    socket.write(`${chunk('c'.repeat(LIMIT - 40))}0\r\n\r\n`);
    expect((await reading)?.toString()).toBe('a'.repeat(20) + 'b'.repeat(20) + 'c'.repeat(LIMIT - 40));
  });

  it('stops at the chunk that passes the limit, without waiting for the rest', async () => {
    const arriving = nextRequest();
    const socket = await rawClient();
    socket.write(head({ 'transfer-encoding': 'chunked' }) + chunk('a'.repeat(LIMIT)));
    const { req } = await arriving;
    const reading = readNodeBody(req, LIMIT);
    // One byte over; the body never ends.
    socket.write(chunk('b'));
    expect(await reading).toBeUndefined();
    expect(req.listenerCount('data')).toBe(0);
  });

  it.each([
    ['leaves mid-body (connection reset)', (socket: Socket) => socket.destroy()],
    ['stops sending short of its Content-Length (half-close)', (socket: Socket) => socket.end()],
  ])('rejects when the client %s', async (_, leave) => {
    const arriving = nextRequest();
    const socket = await rawClient();
    socket.write(`${head({ 'content-length': 50 })}{"query":`);
    const { req } = await arriving;
    const reading = readNodeBody(req, LIMIT);
    leave(socket);
    await expect(reading).rejects.toThrow('aborted');
  });

  it('rejects at once for a request already gone', async () => {
    const arriving = nextRequest();
    (await rawClient()).write(`${head({ 'content-length': 50 })}{"query":`);
    const { req } = await arriving;
    req.destroy();
    await new Promise((resolve) => req.once('close', resolve));
    await expect(readNodeBody(req, LIMIT)).rejects.toThrow('aborted');
  });
});

/** A fetch body made of `chunks`, then `end` (closes, or errors the stream). */
function streamOf(chunks: readonly string[], end: Error | 'close' = 'close'): { body: ReadableStream<Uint8Array>; cancelled: () => boolean } {
  let cancelled = false;
  const queue = chunks.map((text) => new TextEncoder().encode(text));
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next) controller.enqueue(next);
      else if (end === 'close') controller.close();
      else controller.error(end);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { body, cancelled: () => cancelled };
}

describe('readFetchBody', () => {
  it('reads no body as an empty one', async () => {
    expect(await readFetchBody(null, LIMIT)).toEqual(Buffer.alloc(0));
  });

  it('returns a single chunk as a view of it (not copied)', async () => {
    const bytes = new TextEncoder().encode('{"query":"{ a }"}');
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(bytes);
        controller.close();
      },
    });
    const read = await readFetchBody(body, LIMIT);
    expect(read?.toString()).toBe('{"query":"{ a }"}');
    expect(read?.buffer).toBe(bytes.buffer);
  });

  it('joins chunks of exactly the limit', async () => {
    const { body } = streamOf(['a'.repeat(30), 'b'.repeat(30), 'c'.repeat(LIMIT - 60)]);
    expect((await readFetchBody(body, LIMIT))?.toString()).toBe('a'.repeat(30) + 'b'.repeat(30) + 'c'.repeat(LIMIT - 60));
  });

  it('stops one byte over the limit and cancels the stream', async () => {
    const { body, cancelled } = streamOf(['a'.repeat(LIMIT), 'b', 'never read']);
    expect(await readFetchBody(body, LIMIT)).toBeUndefined();
    expect(cancelled()).toBe(true);
  });

  it('rejects when the stream errors mid-body', async () => {
    const { body } = streamOf(['{"query":'], new Error('upstream broke'));
    await expect(readFetchBody(body, LIMIT)).rejects.toThrow('upstream broke');
  });

  it('reads a fetch Request body', async () => {
    const request = new Request('http://router.test/graphql', { method: 'POST', body: 'x'.repeat(LIMIT + 1) });
    expect(await readFetchBody(request.body, LIMIT)).toBeUndefined();
  });
});

describe('a streamed answer over the limit', () => {
  const endpoint = createStreamingHttpEndpoint({
    log: createLogger({ level: 'silent' }),
    start: () => Promise.reject(new Error('a refused body starts nothing')),
    maxTotal: 0,
    maxBodyBytes: LIMIT,
  });

  /** Sends a streamed-answer POST whose body passes the limit and never ends; the answer as the client sees it. */
  async function refusedAnswer(headers: Record<string, string | number>, sent: string): Promise<{ status: number; connection?: string; body: unknown }> {
    const arriving = nextRequest();
    const answered = new Promise<{ status: number; connection?: string; body: unknown }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, path: '/graphql', method: 'POST', headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (data: string) => {
            text += data;
          });
          res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, body: JSON.parse(text) }));
        },
      );
      req.on('error', reject);
      req.write(sent);
    });
    const { req, res } = await arriving;
    await endpoint.handle(req, res);
    return answered;
  }

  const refused = { errors: [{ message: tooLargeMessage(LIMIT), extensions: { code: 'REQUEST_TOO_LARGE' } }] };

  it('answers a chunked body 413 with the router message, and closes the connection', async () => {
    const answer = await refusedAnswer({ 'transfer-encoding': 'chunked' }, `{"query":"${'x'.repeat(LIMIT)}`);
    expect(answer).toEqual({ status: 413, connection: 'close', body: refused });
  });

  it('answers a declared length over the limit 413 without waiting for the body, and closes the connection', async () => {
    const answer = await refusedAnswer({ 'content-length': 1_000_000_000 }, '{"query":');
    expect(answer).toEqual({ status: 413, connection: 'close', body: refused });
  });

  it('closes the connection on any refusal that leaves the body unread (415)', async () => {
    const answer = await refusedAnswer({ 'content-type': 'text/plain', 'content-length': 1_000_000_000 }, 'query');
    expect(answer.status).toBe(415);
    expect(answer.connection).toBe('close');
  });
});
