/**
 * A streamed answer (multipart, SSE) whose client is gone: on Node 20 the
 * response still says `writable` after its connection closed, and a write
 * then returns false with no `drain` or `close` to follow. An event handed
 * over after the close (a stream's last, failure event: the client was
 * dropped as too slow, say) must end the stream, not wait forever holding
 * its heartbeat timer and buffers.
 */
import { createServer, get, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpEvent, HttpEventSource } from '../../src/kernel/subscriptions/http-event-source.js';
import { writeChunk } from '../../src/kernel/subscriptions/http-stream-request.js';
import { writeMultipart } from '../../src/kernel/subscriptions/multipart-server.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A server whose first answer is handed to `answer`; a client that reads the first bytes and then destroys its socket. */
async function clientThatLeaves(answer: (res: ServerResponse) => void): Promise<{ closed: Promise<void> }> {
  let closed!: () => void;
  const closedPromise = new Promise<void>((resolve) => (closed = resolve));
  const server = createServer((_req, res) => {
    res.once('close', () => closed());
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const request = get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, (res) => res.once('data', () => request.destroy()));
  request.on('error', () => undefined);
  return { closed: closedPromise };
}

/** An event source that hands out what `hand` is given, as the router's does (its last event may come after the client left). */
function handSource(): { source: HttpEventSource; hand(event: HttpEvent): void } {
  const queue: HttpEvent[] = [];
  let wake: (() => void) | undefined;
  const ended = false;
  async function* events(): AsyncGenerator<HttpEvent, void, undefined> {
    while (!ended) {
      const event = queue.shift();
      if (event) yield event;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  const source = Object.assign(events(), { fail: () => undefined }) as unknown as HttpEventSource;
  return {
    source,
    hand(event) {
      queue.push(event);
      wake?.();
    },
  };
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'still waiting'> =>
  Promise.race([promise, new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), ms))]);

describe('a streamed answer whose client has gone', () => {
  it('writeChunk returns at once instead of waiting for a drain that will not come', async () => {
    let response!: ServerResponse;
    const { closed } = await clientThatLeaves((res) => {
      response = res;
      res.writeHead(200).write('first');
    });
    await closed;
    expect(await within(writeChunk(response, 'late'), 1000)).toBeUndefined();
  });

  it('a multipart stream handed its last event after the close ends, its heartbeat stopped', async () => {
    const { source, hand } = handSource();
    let written!: Promise<void>;
    const { closed } = await clientThatLeaves((res) => {
      written = writeMultipart(res, source, 50);
    });
    await closed;
    hand({ kind: 'failure', errors: [{ message: 'too slow', extensions: { code: 'SUBSCRIPTION_CLIENT_TOO_SLOW' } }] });
    expect(await within(written, 1000)).toBeUndefined();
  });
});
