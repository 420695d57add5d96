/**
 * Reads a running subgraph's SDL with the federation query `{ _service { sdl } }`,
 * which (unlike standard introspection) keeps the federation directives.
 */

import { fetchRemoteText, type RemoteText } from '../kernel/remote-text.js';
import { stripUrlCredentials } from '../kernel/url-credentials.js';

/** Largest introspection answer read (as a subgraph answer's default `max_response_body`). */
export const MAX_INTROSPECTION_BYTES = 64 * 1024 * 1024;

/** Options of `introspectSubgraph`. */
export interface IntrospectOptions {
  /** Extra request headers (for example `Authorization`); default none. */
  headers?: Readonly<Record<string, string>>;
  /** Give up after this many milliseconds, reading the answer included; default 10 000. */
  timeoutMs?: number;
  /** Largest answer read, in bytes; default `MAX_INTROSPECTION_BYTES` (64 MiB). */
  maxBytes?: number;
}

const SERVICE_SDL_QUERY = '{ _service { sdl } }';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessages(errors: unknown): string {
  const list = Array.isArray(errors) ? errors : [errors];
  return list.map((error) => (isRecord(error) && typeof error.message === 'string' ? error.message : JSON.stringify(error))).join('; ');
}

/**
 * POSTs `{ _service { sdl } }` to `url` and returns the SDL text. Throws an
 * `Error` whose message says what went wrong (unreachable, timed out, too
 * large, HTTP status, not JSON, GraphQL errors, no `_service.sdl`); the
 * caller adds the subgraph name. Credentials in `url` are sent as HTTP Basic
 * authorization (unless `headers` has an `Authorization`) and never shown.
 */
export async function introspectSubgraph(url: string, { headers = {}, timeoutMs = 10_000, maxBytes = MAX_INTROSPECTION_BYTES }: IntrospectOptions = {}): Promise<string> {
  const shown = stripUrlCredentials(url);
  let response: RemoteText;
  try {
    response = await fetchRemoteText(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify({ query: SERVICE_SDL_QUERY }),
      timeoutMs,
      maxBytes,
    });
  } catch (error) {
    throw new Error(`could not reach ${shown}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  let body: unknown;
  try {
    body = JSON.parse(response.text);
  } catch {
    const status = response.ok ? '' : ` (HTTP ${response.status})`;
    throw new Error(`${shown} did not answer with JSON${status}`);
  }
  const data = isRecord(body) ? body.data : undefined;
  const service = isRecord(data) ? data._service : undefined;
  const sdl = isRecord(service) ? service.sdl : undefined;
  if (typeof sdl === 'string') return sdl;
  if (isRecord(body) && body.errors !== undefined) {
    throw new Error(`${shown} answered { _service { sdl } } with errors: ${errorMessages(body.errors)} (is it a federation subgraph?)`);
  }
  if (!response.ok) throw new Error(`${shown} answered HTTP ${response.status}`);
  throw new Error(`${shown} answered without data._service.sdl (is it a federation subgraph?)`);
}
