import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startSideListener, type ListenerTimeouts, type Logger } from '../../src/index.js';
import { checkElements, type NamedType } from './invalidation-request.js';
import type { IndexSwitches } from './options.js';

/** Largest request body accepted (1 MB). */
export const MAX_INVALIDATION_BODY = 1_000_000;

/** What the endpoint needs. */
export interface InvalidationEndpointOptions {
  /** `invalidation.endpoint.listen_addr`. */
  readonly listenAddr: string;
  /** `invalidation.endpoint.path`. */
  readonly path: string;
  /** `invalidation.endpoint.shared_key`. */
  readonly sharedKey: string;
  /** Which indexes are kept: a kind whose index is off is refused. */
  readonly switches: IndexSwitches;
  /** Names of the subgraphs of the graph being served; undefined before one is loaded. */
  readonly subgraphs: () => ReadonlySet<string> | undefined;
  /** Whether the graph being served has `type` in `subgraph` (a `type` element naming another is answered as usual, and warned about). Default: always. */
  readonly definesType?: (subgraph: string, type: string) => boolean;
  /** Removes every entry listed under the indexes; resolves with the number of keys removed. */
  readonly invalidate: (indexes: string[]) => Promise<number>;
  /** The plugin's logger. */
  readonly log: Logger;
  /** Bounds on slow or stalled connections instead of the kernel's side-listener defaults (tests shorten them). */
  readonly timeouts?: Partial<ListenerTimeouts>;
}

/** A running endpoint. */
export interface InvalidationEndpoint {
  /** `http://host:port/path` */
  readonly url: string;
  close(): Promise<void>;
}

type Answer = { readonly status: number; readonly body: unknown; readonly headers?: Record<string, string> };

/**
 * The invalidation endpoint, on its own plain-HTTP listener. Checks, in
 * order: path (404), `Authorization` (401), method (405), content type
 * (415), body size (413), JSON array (400), every element (400); then
 * removes what the elements name and answers `202 {"count": n}`. The port
 * is a kernel side listener: slow, stalled or broken connections are bounded
 * by the listener guard, a bind error names the `listen_addr` key.
 */
export async function startInvalidationEndpoint(options: InvalidationEndpointOptions): Promise<InvalidationEndpoint> {
  const expectedKey = digest(options.sharedKey);
  const listener = await startSideListener({
    name: 'invalidation',
    plugin: 'response-cache',
    address: options.listenAddr,
    configKey: 'response_cache.invalidation.endpoint.listen_addr',
    purpose: 'the invalidation endpoint',
    label: 'The invalidation endpoint',
    handler: function handleInvalidation(req, res) {
      answerRequest(req, options, expectedKey).then(
        (answer) => send(res, answer),
        (error: unknown) => {
          options.log.error({ err: error }, 'Invalidation request failed');
          send(res, { status: 500, body: errorBody('Internal error; see the router log') });
        },
      );
    },
    log: options.log,
    timeouts: options.timeouts,
  });
  options.log.info({ listen_addr: listener.address, path: options.path }, 'Invalidation endpoint listening');
  return { url: `${listener.url}${options.path}`, close: () => listener.close() };
}

async function answerRequest(req: IncomingMessage, options: InvalidationEndpointOptions, expectedKey: Buffer): Promise<Answer> {
  const path = (req.url ?? '/').split('?')[0];
  if (path !== options.path) return { status: 404, body: errorBody('Not found') };
  const authorization = req.headers.authorization;
  if (authorization === undefined || authorization === '') return { status: 401, body: errorBody('Missing authorization header') };
  if (!timingSafeEqual(digest(authorization), expectedKey)) return { status: 401, body: errorBody('Invalid authorization header') };
  if (req.method !== 'POST') return { status: 405, body: errorBody(`Method ${req.method} not allowed; send POST`), headers: { allow: 'POST' } };
  const mediaType = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (mediaType !== 'application/json') return { status: 415, body: errorBody('Content-Type must be application/json') };
  const text = await readBody(req);
  if (text === undefined) return { status: 413, body: errorBody(`Request body larger than ${MAX_INVALIDATION_BODY} bytes`) };
  let elements: unknown;
  try {
    elements = JSON.parse(text);
  } catch (error) {
    return { status: 400, body: errorBody(`Malformed JSON: ${error instanceof Error ? error.message : String(error)}`) };
  }
  if (!Array.isArray(elements)) return { status: 400, body: errorBody('The body must be a JSON array of invalidation elements') };
  const check = checkElements(elements, options.subgraphs(), options.switches);
  if (!check.ok) return { status: 400, body: check.notListed > 0 ? { errors: check.errors, errors_not_listed: check.notListed } : { errors: check.errors } };
  warnUnknownTypes(check.types, options);
  let count: number;
  try {
    count = await options.invalidate(check.indexes);
  } catch {
    return { status: 503, body: errorBody('The cache store is unreachable; some entries may not have been removed. Send the request again.') };
  }
  return { status: 202, body: { count } };
}

/** Types listed in the warning at most. */
const MAX_LISTED_TYPES = 20;

/**
 * A `type` element naming a type its subgraph does not have is carried out
 * (202, usually `count: 0`), as the answer's contract says; the warning is
 * how a misspelt `__typename` gets noticed.
 */
function warnUnknownTypes(types: ReadonlyArray<NamedType>, options: InvalidationEndpointOptions): void {
  const defines = options.definesType;
  if (!defines) return;
  const unknown = types.filter(({ subgraph, type }) => !defines(subgraph, type));
  if (unknown.length === 0) return;
  options.log.warn(
    { types: unknown.slice(0, MAX_LISTED_TYPES).map(({ subgraph, type }) => `${subgraph}.${type}`), count: unknown.length },
    'Invalidation names types their subgraph does not have in the graph being served: check their spelling',
  );
}

/** The body as text; undefined when it is larger than the limit (the rest is read and dropped). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_INVALIDATION_BODY) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_INVALIDATION_BODY) {
        // Keep reading without keeping: the client gets its 413 instead of a reset connection.
        tooLarge = true;
        resolve(undefined);
      } else {
        chunks.push(chunk);
      }
    });
    req.once('end', () => resolve(tooLarge ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

function send(res: ServerResponse, answer: Answer): void {
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
  res.end(text);
}

function errorBody(message: string): { errors: Array<{ message: string }> } {
  return { errors: [{ message }] };
}

/** Fixed-length digests let keys of any length be compared in constant time. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
