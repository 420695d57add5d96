/**
 * Reading a request body within `limits.max_request_body`, for every
 * listener path that reads one: plugin routes and the general handler
 * (http-server.ts), the JSON POST lane (graphql-post-lane.ts) and streamed
 * answers (subscriptions/http-stream-request.ts), over node's
 * `IncomingMessage` or a fetch `ReadableStream`. The limit holds while the
 * body streams in: past it, what was read is dropped and reading stops.
 * The rest of a node body is then still on the wire, so the caller answers
 * with `Connection: close` (else node would read all of it, however large,
 * before the connection serves another request).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RouterError } from '../errors.js';

/** The one 413 `REQUEST_TOO_LARGE` message, whichever path refused the body. */
export function tooLargeMessage(limit: number): string {
  return `The request body is larger than the limit of ${limit} bytes.`;
}

/** 413 `REQUEST_TOO_LARGE` as a plugin route's body read throws it (http-routes.ts answers it). */
export function requestTooLarge(limit: number): RouterError {
  return new RouterError('REQUEST_TOO_LARGE', tooLargeMessage(limit));
}

/**
 * Node's request body, at most `limit` bytes; undefined past it: at once
 * when `Content-Length` says so (nothing is read), else at the chunk that
 * passes it (the rest is left unread). Rejects when the client goes away
 * before the end (`aborted`, or node's `ECONNRESET`). One chunk comes back
 * as it arrived, without a copy (the post lane's usual case).
 */
export function readNodeBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve(undefined);
  // Its `close` is past: waiting for `end` would wait forever.
  if (req.destroyed) return Promise.reject(abortedError());
  return new Promise((resolve, reject) => {
    let first: Buffer | undefined;
    /** From the second chunk on: every chunk, the first included. */
    let all: Buffer[] | undefined;
    let size = 0;
    const stop = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        stop();
        resolve(undefined);
      } else if (first === undefined) first = chunk;
      else if (all === undefined) all = [first, chunk];
      else all.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      resolve(all !== undefined ? Buffer.concat(all, size) : (first ?? Buffer.alloc(0)));
    };
    const onError = (error: Error): void => {
      stop();
      reject(error);
    };
    const onClose = (): void => {
      stop();
      reject(abortedError());
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', onError);
    req.once('close', onClose);
  });
}

/**
 * A fetch body (the router's in-process `handle`), at most `limit` bytes;
 * undefined past it (the stream is cancelled there). Rejects when the
 * stream errors. One chunk comes back as a view of it, without a copy.
 */
export async function readFetchBody(body: ReadableStream<Uint8Array> | null, limit: number): Promise<Buffer | undefined> {
  if (!body) return Buffer.alloc(0);
  const reader = body.getReader();
  let first: Uint8Array | undefined;
  let all: Uint8Array[] | undefined;
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      if (all !== undefined) return Buffer.concat(all, size);
      return first === undefined ? Buffer.alloc(0) : Buffer.from(first.buffer, first.byteOffset, first.byteLength);
    }
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    if (first === undefined) first = value;
    else if (all === undefined) all = [first, value];
    else all.push(value);
  }
}

/**
 * Sets `Connection: close` when the request's body is still arriving and
 * the answer will not read it: otherwise node reads (and drops) all of it,
 * however large it says it is, before the connection serves another request.
 */
export function closeIfBodyPending(req: IncomingMessage, res: ServerResponse): void {
  if (req.complete) return;
  const length = req.headers['content-length'];
  if ((length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined) res.setHeader('connection', 'close');
}

/** What `clientGone` (http-server.ts) knows as a client that left mid-body. */
function abortedError(): Error {
  return new Error('aborted');
}
