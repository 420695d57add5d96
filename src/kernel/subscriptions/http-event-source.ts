/**
 * The answers of a started operation as the HTTP streaming protocols send
 * them: an iterator that never throws (a failed subgraph stream becomes one
 * last answer carrying its error) and whose `return()` ends the subgraph
 * stream at once, even while an event is awaited (an async generator's would
 * wait for that event first).
 */
import { GraphQLError } from 'graphql';
import type { GraphQLErrorJSON } from '../errors.js';
import type { GraphQLResponseBody } from '../pipeline/stages.js';
import type { EventStream, StartedOperation } from './subscription-runner.js';

/** An async generator in shape (graphql-sse ends a stream through `return`, and checks for `throw`). */
export interface HttpEventSource extends AsyncGenerator<HttpEvent, void, undefined> {
  return(): Promise<IteratorResult<HttpEvent, void>>;
  /** Ends the stream at once (the subgraph stream is left) with `errors` as its last event. */
  fail(errors: GraphQLErrorJSON[]): void;
}

/** One answer: a result of the operation, or the stream's failure (the last event). */
export type HttpEvent = { readonly kind: 'result'; readonly body: GraphQLResponseBody } | { readonly kind: 'failure'; readonly errors: GraphQLErrorJSON[] };

/** The error a failed stream ends with, as JSON (the subgraph's failure carries its code and service name). */
export function failureErrors(error: unknown): GraphQLErrorJSON[] {
  if (error instanceof GraphQLError) return [error.toJSON() as GraphQLErrorJSON];
  return [{ message: 'The subscription failed.', extensions: { code: 'INTERNAL_SERVER_ERROR' } }];
}

/** The events of a started operation (a single answer is one event). `onEnd` runs once, however it ends. */
export function httpEventSource(started: StartedOperation, onEnd: () => void): HttpEventSource {
  const finished: IteratorResult<HttpEvent, void> = { done: true, value: undefined };
  let single: GraphQLResponseBody | undefined = started.kind === 'single' ? started.response.body : undefined;
  const stream: EventStream | undefined = started.kind === 'stream' ? started.events : undefined;
  let ended = false;
  let failure: GraphQLErrorJSON[] | undefined;
  /** The failure `fail()` left, once; then the end. */
  const closing = (): Promise<IteratorResult<HttpEvent, void>> | IteratorResult<HttpEvent, void> => {
    if (!failure) return end();
    const errors = failure;
    failure = undefined;
    return { done: false, value: { kind: 'failure', errors } };
  };
  const end = async (): Promise<IteratorResult<HttpEvent, void>> => {
    if (!ended) {
      ended = true;
      onEnd();
      await stream?.return();
    }
    return finished;
  };
  const source: HttpEventSource = {
    async next() {
      if (ended) return closing();
      if (single) {
        const body = single;
        single = undefined;
        return { done: false, value: { kind: 'result', body } };
      }
      if (!stream) return end();
      try {
        const result = await stream.next();
        if (result.done || ended) return closing();
        return { done: false, value: { kind: 'result', body: result.value } };
      } catch (error) {
        void end();
        return { done: false, value: { kind: 'failure', errors: failureErrors(error) } };
      }
    },
    return: end,
    throw: end,
    fail(errors) {
      if (ended) return;
      failure = errors;
      void end();
    },
    [Symbol.asyncIterator]() {
      return this;
    },
    async [Symbol.asyncDispose]() {
      await end();
    },
  };
  return source;
}
