/**
 * The Connect listener's front: finds the method of the path and checks
 * what INTERFACES.md fixes before any call runs (unknown method 404
 * `not_found`; mutation over GET 405 `unimplemented` with `Allow: POST`;
 * missing GET parameter, missing `Connect-Protocol-Version`, wrong content
 * type: 400 `invalid_argument`; a JSON body in a charset other than UTF-8:
 * 415). Then Connect unary calls (POST and every GET) are answered here and
 * gRPC, gRPC-Web and unknown body compressions go to connect-node.
 */
import { Code } from '@connectrpc/connect';
import type { Logger, RouterHandle } from '../../src/index.js';
import type { BinaryHandler } from './binary-adapter.js';
import { ConnectFailure, invalidArgument } from './connect-errors.js';
import { getMessage, type GetMessage } from './get-message.js';
import { answerJsonGet, answerJsonPost, sendFailure, type AnyRequest, type AnyResponse, type BodyCompression } from './json-calls.js';
import type { MethodEntry, MethodTable } from './method-table.js';

/** What the dispatcher reads on every request. */
export interface DispatchContext {
  readonly router: RouterHandle;
  readonly log: Logger;
  /** Largest request body in bytes. */
  readonly maxBody: number;
  /** The current methods and their connect-node handler (swapped on reload). */
  current(): { readonly table: MethodTable; readonly binary: BinaryHandler };
}

const GRPC_TYPE = /^application\/grpc(-web(-text)?)?(\+[a-z0-9.-]+)?$/;

function mediaType(req: AnyRequest): string {
  const raw = req.headers['content-type'];
  return (raw ?? '').split(';')[0]!.trim().toLowerCase();
}

/** The `charset` parameter of the Content-Type (quotes removed), or undefined without one. */
function charsetOf(req: AnyRequest): string | undefined {
  return /;\s*charset\s*=\s*("?)([^";]*)\1/i.exec(String(req.headers['content-type'] ?? ''))?.[2]?.trim();
}

/** JSON is UTF-8 (RFC 8259, and the Connect protocol's `application/json`): another charset is a media type not served, 415 as connect-node answers it. */
function requireUtf8(req: AnyRequest): void {
  const charset = charsetOf(req);
  if (charset === undefined || /^utf-?8$/i.test(charset)) return;
  throw new ConnectFailure(Code.InvalidArgument, `Content-Type application/json must be UTF-8, got charset "${charset}"`, { status: 415 });
}

function requireProtocolVersion(req: AnyRequest): void {
  const version = req.headers['connect-protocol-version'];
  if (version === undefined) throw invalidArgument('missing header Connect-Protocol-Version: set it to 1');
  if (version !== '1') throw invalidArgument(`Connect-Protocol-Version must be 1, got "${String(version)}"`);
}

/** The body's compression when it is one answered here (none, gzip, br); undefined for another, left to connect-node. */
function compressionOf(req: AnyRequest): BodyCompression | undefined {
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  return encoding === 'identity' || encoding === 'gzip' || encoding === 'br' ? encoding : undefined;
}

/** Unary Connect POSTs (JSON or binary, plain, gzip or br) and GETs are answered here; the rest goes to connect-node. */
type Route = { kind: 'post'; binary: boolean; compression: BodyCompression } | { kind: 'get'; message: GetMessage } | { kind: 'binary' };

function routePost(req: AnyRequest): Route {
  const type = mediaType(req);
  if (type === 'application/json' || type === 'application/proto') {
    requireProtocolVersion(req);
    if (type === 'application/json') requireUtf8(req);
    const compression = compressionOf(req);
    return compression === undefined ? { kind: 'binary' } : { kind: 'post', binary: type === 'application/proto', compression };
  }
  if (GRPC_TYPE.test(type)) return { kind: 'binary' };
  throw invalidArgument(`Content-Type must be application/json (or application/proto, or a gRPC / gRPC-Web type), got ${type === '' ? 'none' : `"${type}"`}`);
}

function routeGet(entry: MethodEntry, query: string): Route {
  if (entry.operation.type !== 'query') {
    throw new ConnectFailure(Code.Unimplemented, `${entry.method.name} is a mutation: send it with POST`, { status: 405, headers: { allow: 'POST' } });
  }
  const params = new URLSearchParams(query);
  const missing = ['connect', 'encoding', 'message'].filter((name) => !params.has(name));
  if (missing.length > 0) {
    throw invalidArgument(`missing query parameter${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: a GET needs connect=v1, encoding=json and message=<URL-encoded JSON>`);
  }
  if (params.get('connect') !== 'v1') throw invalidArgument(`query parameter connect must be v1, got "${params.get('connect')}"`);
  const encoding = params.get('encoding');
  if (encoding !== 'json' && encoding !== 'proto') throw invalidArgument(`query parameter encoding must be json or proto, got "${encoding}"`);
  // Every GET is answered here: what connect-node would refuse as `internal` (bad base64, a message that does not decompress) is the client's `invalid_argument`.
  return { kind: 'get', message: getMessage(params, query) };
}

/**
 * The request target as a path and query. HTTP/1.1 servers must accept the
 * absolute form (`POST http://host/pkg.Service/Method`, RFC 9112 §3.2.2),
 * which proxies send: it is cut to its path here, for connect-node too.
 */
function originForm(req: AnyRequest): string {
  const target = req.url ?? '/';
  const absolute = /^https?:\/\/[^/?#]*/i.exec(target);
  if (!absolute) return target;
  const rest = target.slice(absolute[0].length);
  const origin = rest.startsWith('/') ? rest : `/${rest}`;
  req.url = origin;
  return origin;
}

/** The listener's request handler. */
export function createDispatcher(context: DispatchContext): (req: AnyRequest, res: AnyResponse) => void {
  const json = { router: context.router, maxBody: context.maxBody, log: context.log };
  return function dispatchConnect(req, res) {
    const url = originForm(req);
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const { table, binary } = context.current();
    const entry = table.get(path);
    try {
      if (!entry) throw new ConnectFailure(Code.NotFound, `no RPC at ${path}; paths are /<package>.<Service>/<Method>`);
      let route: Route;
      if (req.method === 'POST') route = routePost(req);
      else if (req.method === 'GET') route = routeGet(entry, q < 0 ? '' : url.slice(q + 1));
      else {
        const allow = entry.operation.type === 'query' ? 'GET, POST' : 'POST';
        throw new ConnectFailure(Code.Unimplemented, `method ${req.method} is not allowed; use ${allow.replace(', ', ' or ')}`, { status: 405, headers: { allow } });
      }
      if (route.kind === 'post') void answerJsonPost(json, entry, req, res, route.binary, route.compression);
      else if (route.kind === 'get') void answerJsonGet(json, entry, req, res, route.message);
      else binary(req, res);
    } catch (error) {
      // Drain what the client sent, so a refused request does not reset the connection.
      req.resume();
      sendFailure(res, error, context.log);
    }
  };
}
