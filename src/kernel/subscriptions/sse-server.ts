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
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHandler, type ExecutionResult } from 'graphql-sse';
import type { HttpEvent, HttpEventSource } from './http-event-source.js';
import { writeChunk } from './http-stream-request.js';

/** The request's context for the handler: the events of the operation the router started for it. */
interface SseContext {
  readonly source: HttpEventSource;
}

/** graphql-sse wants `ExecutionResult`s; a failure is sent as a result carrying only its errors. */
function asResult(event: HttpEvent): ExecutionResult {
  return (event.kind === 'result' ? event.body : { errors: event.errors }) as ExecutionResult;
}

const handler = createHandler<IncomingMessage, SseContext>({
  // Distinct connections mode only.
  authenticate: () => null,
  onSubscribe: (req) => {
    const { source } = req.context;
    const ended = async (): Promise<IteratorResult<ExecutionResult, void>> => {
      await source.return();
      return { done: true, value: undefined };
    };
    // graphql-sse ends an operation through `return` (client gone, shutdown): the router's stream ends at once.
    return {
      next: async () => {
        const result = await source.next();
        return result.done ? result : { done: false, value: asResult(result.value) };
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
    context: { source },
  });
  const headers = { ...init.headers };
  // Event streams are UTF-8 by definition; the bare type is what GraphQL over HTTP (yoga) answers too.
  if (headers['content-type']?.startsWith('text/event-stream')) headers['content-type'] = 'text/event-stream';
  res.writeHead(init.status, headers);
  if (!body || typeof body === 'string') {
    res.end(body ?? undefined);
    return;
  }
  const stop = (): void => void body.return(undefined);
  res.once('close', stop);
  try {
    for await (const chunk of body) {
      if (!res.writable) break;
      await writeChunk(res, chunk);
    }
  } finally {
    res.off('close', stop);
    res.end();
  }
}
