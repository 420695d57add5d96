/**
 * What a router process's JavaScript heap holds after a full collection,
 * read over the V8 inspector (the router started with
 * `--inspect=127.0.0.1:0`). Resident memory alone cannot tell retained
 * objects from garbage V8 has not collected yet: with gigabytes of headroom
 * it may leave 100 MB of dead request bodies in place for a while.
 */
import { once } from 'node:events';
import WebSocket from 'ws';

/** `NODE_OPTIONS` for a router to be probed: the inspector on a free loopback port. */
export function inspectorNodeOptions(): string {
  return [process.env.NODE_OPTIONS, '--inspect=127.0.0.1:0'].filter(Boolean).join(' ');
}

/** The inspector's WebSocket URL, from the "Debugger listening on ws://..." line the process printed. */
export function inspectorUrl(output: string): string {
  const url = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(output)?.[1];
  if (!url) throw new Error(`no inspector URL in the router's output:\n${output.slice(-2_000)}`);
  return url;
}

/** Runs a full garbage collection in the process behind `url`, then returns the bytes its heap still uses. */
export async function heapUsedAfterGc(url: string): Promise<number> {
  const socket = new WebSocket(url);
  await once(socket, 'open');
  const pending = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();
  socket.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id !== undefined) pending.get(message.id)?.(message);
  });
  let nextId = 0;
  const call = <T>(method: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      pending.set(id, (message) => (message.error ? reject(new Error(`${method}: ${message.error.message}`)) : resolve(message.result as T)));
      socket.send(JSON.stringify({ id, method }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    return (await call<{ usedSize: number }>('Runtime.getHeapUsage')).usedSize;
  } finally {
    socket.close();
  }
}
