/**
 * Raw `node:net` clients that misbehave: resets (TCP RST) at a chosen
 * moment, half-closes, garbage, headers trickled a byte at a time, and
 * readers that stop reading. Each resolves with what it saw; none throws on
 * a connection the server closed.
 */
import { connect, type Socket } from 'node:net';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Opens a connection to 127.0.0.1:`port`; its errors (the server's resets) are expected and ignored. */
export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** What came back on a connection, and when the server closed it. */
export interface Exchange {
  /** The status of the first HTTP/1.1 answer; 0 when none came. */
  readonly status: number;
  /** Everything received (latin1). */
  readonly text: string;
  /** Whether the server closed the connection before `waitMs` ran out. */
  readonly closed: boolean;
  /** Milliseconds from the start until the close (or the end of waiting). */
  readonly ms: number;
}

/** Reads `socket` until the server closes it or `waitMs` passes (then it is destroyed). */
export function readUntilClosed(socket: Socket, waitMs: number): Promise<Exchange> {
  const started = Date.now();
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => {
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text, closed, ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    if (socket.destroyed) finish(true);
    else socket.once('close', () => finish(true));
  });
}

/** Sends `data` on a new connection and reads the answer until the server closes (or `waitMs`). */
export async function exchange(port: number, data: string | Buffer, waitMs = 3_000): Promise<Exchange> {
  const socket = await open(port);
  const answer = readUntilClosed(socket, waitMs);
  if (data.length > 0) socket.write(data);
  return answer;
}

/** Connects, writes `data`, waits `afterMs`, then resets the connection. */
export async function resetAfter(port: number, data: string, afterMs = 20): Promise<void> {
  const socket = await open(port);
  if (data.length > 0) socket.write(data);
  await sleep(afterMs);
  if (!socket.destroyed) socket.resetAndDestroy();
}

/** Sends a request and resets the connection as soon as the first bytes of its answer arrive (while the rest is written). */
export async function resetMidAnswer(port: number, request: string): Promise<void> {
  const socket = await open(port);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 3_000);
    socket.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    socket.write(request);
  });
  if (!socket.destroyed) socket.resetAndDestroy();
}

/** Writes `data`, then ends its write side (half-open) and waits for the server to close. */
export async function halfClose(port: number, data: string, waitMs = 3_000): Promise<Exchange> {
  const socket = await open(port);
  const answer = readUntilClosed(socket, waitMs);
  socket.end(data);
  return answer;
}

/** A connection that sends `start`, then one more byte of `drip` every `everyMs`, until the server closes it or `stop()`. */
export async function trickle(port: number, start: string, drip: string, everyMs: number, waitMs: number): Promise<Exchange> {
  const socket = await open(port);
  const answer = readUntilClosed(socket, waitMs);
  socket.write(start);
  let i = 0;
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(drip[i++ % drip.length]!);
  }, everyMs);
  return answer.finally(() => clearInterval(timer));
}

/**
 * Sends `request` and does not read for `stallMs`; then reads everything
 * that is left. Returns the bytes received in all and whether the server
 * closed the connection: a server that gives up on the reader cuts the
 * answer short.
 */
export async function stopReading(port: number, request: string, stallMs: number): Promise<{ bytes: number; closed: boolean }> {
  const socket = await open(port);
  socket.pause();
  socket.write(request);
  await sleep(stallMs);
  let bytes = 0;
  socket.on('data', (chunk: Buffer) => (bytes += chunk.length));
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 10_000);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
    socket.resume();
  });
  socket.destroy();
  return { bytes, closed };
}
