/**
 * Reads a running subgraph's SDL with the federation query `{ _service { sdl } }`,
 * which (unlike standard introspection) keeps the federation directives.
 */

/** Options of `introspectSubgraph`. */
export interface IntrospectOptions {
  /** Extra request headers (for example `Authorization`); default none. */
  headers?: Readonly<Record<string, string>>;
  /** Give up after this many milliseconds; default 10 000. */
  timeoutMs?: number;
}

const SERVICE_SDL_QUERY = '{ _service { sdl } }';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function reasonOf(error: unknown): string {
  // fetch reports "fetch failed"; the useful reason (ECONNREFUSED, ...) is its cause.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof Error && cause.name === 'TimeoutError') return 'timed out';
  return cause instanceof Error ? cause.message : String(cause);
}

function errorMessages(errors: unknown): string {
  const list = Array.isArray(errors) ? errors : [errors];
  return list.map((error) => (isRecord(error) && typeof error.message === 'string' ? error.message : JSON.stringify(error))).join('; ');
}

/**
 * POSTs `{ _service { sdl } }` to `url` and returns the SDL text. Throws an
 * `Error` whose message says what went wrong (unreachable, HTTP status, not
 * JSON, GraphQL errors, no `_service.sdl`); the caller adds the subgraph name.
 */
export async function introspectSubgraph(url: string, { headers = {}, timeoutMs = 10_000 }: IntrospectOptions = {}): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
      body: JSON.stringify({ query: SERVICE_SDL_QUERY }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new Error(`could not reach ${url}: ${reasonOf(error)}`, { cause: error });
  }
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const status = response.ok ? '' : ` (HTTP ${response.status})`;
    throw new Error(`${url} did not answer with JSON${status}`);
  }
  const data = isRecord(body) ? body.data : undefined;
  const service = isRecord(data) ? data._service : undefined;
  const sdl = isRecord(service) ? service.sdl : undefined;
  if (typeof sdl === 'string') return sdl;
  if (isRecord(body) && body.errors !== undefined) {
    throw new Error(`${url} answered { _service { sdl } } with errors: ${errorMessages(body.errors)} (is it a federation subgraph?)`);
  }
  if (!response.ok) throw new Error(`${url} answered HTTP ${response.status}`);
  throw new Error(`${url} answered without data._service.sdl (is it a federation subgraph?)`);
}
