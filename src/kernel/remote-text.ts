/**
 * Reads a text document over HTTP for the CLI and the graph loader (a
 * supergraph, an introspection answer): one deadline for connecting and
 * reading, a byte cap checked while the body streams in, and credentials in
 * the URL sent as HTTP Basic authorization. Failures throw an `Error` whose
 * message is the reason only; callers name the source with
 * `stripUrlCredentials(url)`.
 */
import { ResponseTooLargeError, readResponseText } from './response-text.js';
import { splitUrlCredentials } from './url-credentials.js';

/** What to send and how long and how much to read. */
export interface RemoteTextRequest {
  /** Default `GET`. */
  readonly method?: string;
  /** Request headers; an `Authorization` here wins over credentials in the URL. Default none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Request body. Default none. */
  readonly body?: string;
  /** Deadline for the whole exchange, body included, in milliseconds. */
  readonly timeoutMs: number;
  /** Largest body read, in bytes; a larger one (declared or sent) fails without buffering the rest. */
  readonly maxBytes: number;
}

/** The answer: status and the whole body as text. */
export interface RemoteText {
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly text: string;
}

export async function fetchRemoteText(url: string, { method = 'GET', headers = {}, body, timeoutMs, maxBytes }: RemoteTextRequest): Promise<RemoteText> {
  const target = splitUrlCredentials(url);
  const sent: Record<string, string> = { ...headers };
  const hasAuthorization = Object.keys(sent).some((name) => name.toLowerCase() === 'authorization');
  if (target.authorization !== undefined && !hasAuthorization) sent.authorization = target.authorization;
  const signal = AbortSignal.timeout(timeoutMs);
  let stage = 'waiting for the answer';
  try {
    const response = await fetch(target.url, { method, headers: sent, body, signal });
    stage = 'reading the body';
    const text = await readResponseText(response, maxBytes);
    return { status: response.status, statusText: response.statusText, ok: response.ok, text };
  } catch (error) {
    throw new Error(reasonOf(error, stage, timeoutMs), { cause: error });
  }
}

function reasonOf(error: unknown, stage: string, timeoutMs: number): string {
  if (error instanceof ResponseTooLargeError) return error.message;
  // fetch reports "fetch failed"; the useful reason (ECONNREFUSED, ...) is its cause.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error && (cause.name === 'TimeoutError' || cause.name === 'AbortError')) {
    return `timed out after ${timeoutMs / 1000}s while ${stage}`;
  }
  return cause instanceof Error ? cause.message : String(cause);
}
