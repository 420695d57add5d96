/**
 * GraphQL over Server-Sent Events, graphql-sse's distinct connections mode:
 * one HTTP request per operation, answered with `text/event-stream`; each
 * result is a `next` event, the end a `complete` event. The `graphql-sse`
 * package's handler writes the stream (framing, the keep-alive comment every
 * 12 s, ending the operation when the client goes away); the router reads
 * the parameters (body limit, persisted operations) and runs the operation.
 *
 * The single connection mode (PUT reservations, stream tokens) is not served:
 * the handler is told there is never a token.
 *
 * Slow clients: graphql-sse's handler pulls the operation's events as fast
 * as they come into a queue of its own, without bound, whatever the client
 * reads. The iterator the router hands it therefore takes the next event
 * from the router's source only once every event handed before was written
 * to the response and the response drained (`WritePacer`): events then wait
 * in the router's queue for this client, which `subscriptions.max_queued_bytes`
 * bounds together with the response's unsent bytes (client-buffer.ts), as
 * for the other transports.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type ExecutionResult } from 'graphql-sse';
import type { HttpEvent, HttpEventSource } from './http-event-source.js';
import { canWrite, writeChunk } from './http-stream-request.js';

/** The request's context for the handler: the events of the operation the router started for it, and their pace. */
interface SseContext {
  readonly source: HttpEventSource;
  readonly pacer: WritePacer;
}

/**
 * Counts the events handed to graphql-sse and the events written (the
 * response drained after each), so that graphql-sse holds no event the
 * response has not taken yet: at most the one being framed. A reader that
 * keeps up waits for nothing but the write itself.
 */
class WritePacer {
  private handed = 0;
  private written = 0;
  private closed = false;
  private wake: (() => void) | undefined;

  /** An event was handed to graphql-sse. */
  handedOne(): void {
    this.handed++;
  }

  /** An event graphql-sse framed was written and the response drained. */
  wroteOne(): void {
    this.written++;
    this.notify();
  }

  /** The response is done (ended or closed): nothing waits any more. */
  close(): void {
    this.closed = true;
    this.notify();
  }

  /** Resolves once every event handed to graphql-sse was written, or the response is done. */
  async ready(): Promise<void> {
    while (!this.closed && this.written < this.handed) await new Promise<void>((resolve) => (this.wake = resolve));
  }

  private notify(): void {
    const resolve = this.wake;
    this.wake = undefined;
    resolve?.();
  }
}

/** Whether a chunk graphql-sse yields is an event (`next`, `complete`: one per chunk) rather than a keep-alive comment (`:`). */
const isEvent = (chunk: string): boolean => !chunk.startsWith(':');

/** graphql-sse wants `ExecutionResult`s; a failure is sent as a result carrying only its errors. */
function asResult(event: HttpEvent): ExecutionResult {
  return (event.kind === 'result' ? event.body : { errors: event.errors }) as ExecutionResult;
}

const handler = createHandler<IncomingMessage, SseContext>({
  // Distinct connections mode only.
  authenticate: () => null,
  onSubscribe: (req) => {
    const { source, pacer } = req.context;
    const ended = async (): Promise<IteratorResult<ExecutionResult, void>> => {
      await source.return();
      return { done: true, value: undefined };
    };
    // graphql-sse ends an operation through `return` (client gone, shutdown): the router's stream ends at once.
    return {
      next: async () => {
        // The previous event first reaches the response (backpressure: graphql-sse's own queue has no bound).
        await pacer.ready();
        const result = await source.next();
        if (result.done) return result;
        pacer.handedOne();
        return { done: false, value: asResult(result.value) };
      },
      return: ended,
      throw: ended,
      [Symbol.asyncIterator]() {
        return this;
      },
      [Symbol.asyncDispose]: async () => void (await ended()),
    } satisfies AsyncGenerator<ExecutionResult, void>;
  },
});

/**
 * Answers one SSE request whose operation the router started already (its
 * parameters read; refusals answered as plain JSON before): writes the event stream.
 */
export async function writeSse(req: IncomingMessage, res: ServerResponse, source: HttpEventSource): Promise<void> {
  const pacer = new WritePacer();
  try {
    await writeStream(req, res, source, pacer);
  } finally {
    pacer.close();
  }
}

async function writeStream(req: IncomingMessage, res: ServerResponse, source: HttpEventSource, pacer: WritePacer): Promise<void> {
  const [body, init] = await handler({
    // The parameters are the router's; graphql-sse sees a JSON POST naming the query, so its own reader passes.
    method: 'POST',
    url: req.url ?? '/graphql',
    headers: {
      get: (key: string) => {
        const name = key.toLowerCase();
        if (name === 'accept') return 'text/event-stream';
        if (name === 'content-type') return 'application/json';
        const value = req.headers[name];
        return Array.isArray(value) ? value.join(', ') : value;
      },
    },
    body: { query: '' },
    raw: req,
    context: { source, pacer },
  });
  const headers = { ...init.headers };
  // Event streams are UTF-8 by definition; the bare type is what GraphQL over HTTP (yoga) answers too.
  if (headers['content-type']?.startsWith('text/event-stream')) headers['content-type'] = 'text/event-stream';
  res.writeHead(init.status, headers);
  if (!body || typeof body === 'string') {
    res.end(body ?? undefined);
    return;
  }
  const stop = (): void => {
    pacer.close();
    void body.return(undefined);
  };
  res.once('close', stop);
  try {
    for await (const chunk of body) {
      if (!canWrite(res)) break;
      await writeChunk(res, chunk);
      if (isEvent(chunk)) pacer.wroteOne();
    }
  } finally {
    res.off('close', stop);
    res.end();
  }
}
