/**
 * Apollo's multipart HTTP subscriptions (`Accept:
 * multipart/mixed;subscriptionSpec="1.0"`): the answer is
 * `multipart/mixed;boundary="graphql";subscriptionSpec=1.0`, one JSON part
 * per event, each `{"payload": <result>}`; a heartbeat part `{}` every 5 s; a failure of the stream itself (not of one event's
 * fields) is `{"payload": null, "errors": [...]}`; the closing boundary ends
 * the answer. Queries and mutations asked this way get one part.
 */
import type { ServerResponse } from 'node:http';
import type { HttpEventSource } from './http-event-source.js';
import { canWrite, writeChunk } from './http-stream-request.js';

// Written as Apollo Router writes it: Apollo iOS compares `subscriptionSpec=1.0` as a string, and wants parts of exactly `application/json`.
export const MULTIPART_CONTENT_TYPE = 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0';

/** Interval of heartbeat parts (the protocol's 5 s). */
export const MULTIPART_HEARTBEAT_MS = 5_000;

// Each part is followed by the boundary at once, so a reader can hand it over without waiting for the next one.
const OPENING = '\r\n--graphql';
const PART_HEAD = '\r\ncontent-type: application/json\r\n\r\n';
const PART_TAIL = '\r\n--graphql';
const CLOSING = '--\r\n';

/** Writes the event stream as multipart parts until it ends or the client goes away. */
export async function writeMultipart(res: ServerResponse, source: HttpEventSource, heartbeatMs = MULTIPART_HEARTBEAT_MS): Promise<void> {
  res.writeHead(200, { 'content-type': MULTIPART_CONTENT_TYPE, 'cache-control': 'no-cache' });
  // The opening boundary goes out with the headers: clients learn the subscription is accepted before the first event.
  res.write(OPENING);
  const part = (json: string): Promise<void> => writeChunk(res, PART_HEAD + json + PART_TAIL);
  const stop = (): void => void source.return();
  res.once('close', stop);
  // A heartbeat is skipped while the client has not read what was sent already.
  const heartbeat = setInterval(() => {
    if (res.writableLength === 0) void part('{}');
  }, heartbeatMs);
  try {
    for await (const event of source) {
      if (!canWrite(res)) break;
      await part(event.kind === 'result' ? `{"payload":${JSON.stringify(event.body)}}` : JSON.stringify({ payload: null, errors: event.errors }));
    }
  } finally {
    clearInterval(heartbeat);
    res.off('close', stop);
    if (canWrite(res)) res.end(CLOSING);
    else res.end();
  }
}
