/**
 * CORS for `/graphql` (`cors.*`): the policy the internal plugin
 * builtins/cors.ts applies before every lane (the JSON POST lane, the
 * general handler, streams).
 *
 * `cors.allow_origins` entries, compiled once:
 * - `*` alone: any origin, answered with `Access-Control-Allow-Origin: *`
 *   and never with `Access-Control-Allow-Credentials` (browsers refuse the
 *   pair, and echoing every origin with credentials would let any site read
 *   answers made with the user's cookies).
 * - an exact origin, `scheme://host[:port]` (`https://app.example.com`);
 *   a trailing `/` is ignored, case does not matter, a default port may be
 *   written or left out.
 * - a pattern: `*` in the host stands for one or more labels, so
 *   `https://*.example.com` matches `https://a.example.com` and
 *   `https://a.b.example.com` but not `https://example.com` or
 *   `https://evil-example.com`; `https://app-*.example.com` matches
 *   `https://app-1.example.com`. Scheme and port must match exactly; a port
 *   of `*` (`http://localhost:*`) matches any port. With `allow_credentials`
 *   the literal domain after the last `*` must have two labels at least
 *   (`*.example.com`, not `*.com`): anyone can register a name under a
 *   top-level domain. Matched by host-pattern.ts, in linear time.
 *
 * A request whose `Origin` matches an exact origin or a pattern gets that
 * origin echoed (with credentials when `allow_credentials`); otherwise, when
 * `*` is listed, `*` (no credentials); otherwise no CORS header at all.
 * `Vary: Origin` is sent whenever the answer depends on the origin.
 */
import type { CorsConfig } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import type { Logger } from '../logger.js';
import { hostMatches, type HostPattern } from './host-pattern.js';

/** Headers to add to an answer, by lower-case name. */
export type CorsHeaders = Readonly<Record<string, string>>;

/** The outcome for one request. */
export interface CorsAnswer {
  /** Headers every answer to this request carries. */
  readonly headers: CorsHeaders;
  /** Set for a preflight (`OPTIONS` with `Access-Control-Request-Method`): the complete answer. */
  readonly preflight?: { readonly status: number; readonly headers: CorsHeaders };
}

/** Longest `Origin` value matched against patterns (a host name is at most 253 characters). */
const MAX_ORIGIN_LENGTH = 300;

/** A serialized origin as browsers send it: scheme, host (a name, IPv4 or bracketed IPv6), optional port. */
const ORIGIN = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?$/;

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: '80', https: '443', ws: '80', wss: '443' };

interface OriginPattern {
  readonly scheme: string;
  /** Matches the whole host. */
  readonly host: HostPattern;
  /** Undefined: any port. */
  readonly port: string | undefined;
}

/** CORS as configured; `answer` is what the HTTP server calls per request. */
export class CorsPolicy {
  private readonly any: boolean;
  private readonly exact: ReadonlySet<string>;
  private readonly patterns: readonly OriginPattern[];
  /** Whether the answer depends on the request's origin (then `Vary: Origin`). */
  private readonly varies: boolean;
  private readonly credentials: boolean;
  private readonly preflightHeaders: CorsHeaders;
  private readonly noOrigin: CorsAnswer;

  constructor(config: CorsConfig, log?: Logger) {
    const exact = new Set<string>();
    const patterns: OriginPattern[] = [];
    let any = false;
    config.allow_origins.forEach((entry, index) => {
      const text = entry.trim();
      if (text === '*') {
        any = true;
        return;
      }
      const compiled = compileEntry(text, config.allow_credentials);
      if (typeof compiled === 'string') throw new RouterError('CONFIG_INVALID', `cors.allow_origins[${index}] "${entry}": ${compiled}`);
      if ('origin' in compiled) exact.add(compiled.origin);
      else patterns.push(compiled);
    });
    this.any = any;
    this.exact = exact;
    this.patterns = patterns;
    this.varies = exact.size > 0 || patterns.length > 0;
    this.credentials = config.allow_credentials;
    if (any && config.allow_credentials) {
      log?.warn(
        { allow_origins: config.allow_origins },
        this.varies
          ? 'cors.allow_credentials is on and cors.allow_origins lists "*": only the origins listed by name or pattern get credentials; every other origin gets "Access-Control-Allow-Origin: *" without credentials'
          : 'cors.allow_credentials is on but cors.allow_origins is "*": browsers get "Access-Control-Allow-Origin: *" without credentials; list the origins that need credentials',
      );
    }
    const preflight: Record<string, string> = {
      'access-control-allow-methods': config.allow_methods.join(', '),
      'access-control-max-age': String(Math.round(config.max_age / 1000)),
    };
    if (config.allow_headers.length > 0) preflight['access-control-allow-headers'] = config.allow_headers.join(', ');
    this.preflightHeaders = preflight;
    this.noOrigin = { headers: this.varies ? { vary: 'Origin' } : {} };
  }

  /**
   * The CORS headers for a request to `/graphql`, and the whole answer when
   * it is a preflight. `origin` and `requestMethod` are the request's
   * `Origin` and `Access-Control-Request-Method` headers.
   */
  answer(method: string, origin: string | undefined, requestMethod: string | undefined): CorsAnswer {
    const headers = this.headersFor(origin);
    if (method !== 'OPTIONS' || origin === undefined || requestMethod === undefined) return headers;
    const allowed = headers.headers['access-control-allow-origin'] !== undefined;
    return {
      headers: headers.headers,
      preflight: { status: 204, headers: allowed ? { ...headers.headers, ...this.preflightHeaders } : headers.headers },
    };
  }

  private headersFor(origin: string | undefined): CorsAnswer {
    if (origin === undefined || origin === '') return this.noOrigin;
    if (this.varies && this.matches(origin)) {
      const headers: Record<string, string> = { 'access-control-allow-origin': origin, vary: 'Origin' };
      if (this.credentials) headers['access-control-allow-credentials'] = 'true';
      return { headers };
    }
    if (this.any) return { headers: this.varies ? ANY_VARYING : ANY };
    return this.noOrigin;
  }

  /** Whether an origin is listed by name or pattern (`*` aside). */
  matches(origin: string): boolean {
    if (origin.length > MAX_ORIGIN_LENGTH) return false;
    const parsed = ORIGIN.exec(origin.toLowerCase());
    if (!parsed) return false;
    const [, scheme, host, port] = parsed as unknown as [string, string, string, string | undefined];
    const effectivePort = port ?? DEFAULT_PORTS[scheme];
    if (this.exact.has(serialize(scheme, host, effectivePort))) return true;
    for (const pattern of this.patterns) {
      if (pattern.scheme !== scheme) continue;
      if (pattern.port !== undefined && pattern.port !== effectivePort) continue;
      if (hostMatches(pattern.host, host)) return true;
    }
    return false;
  }
}

const ANY: CorsHeaders = { 'access-control-allow-origin': '*' };
const ANY_VARYING: CorsHeaders = { 'access-control-allow-origin': '*', vary: 'Origin' };

/** `scheme://host` plus `:port` unless it is the scheme's default. */
function serialize(scheme: string, host: string, port: string | undefined): string {
  return port === undefined || port === DEFAULT_PORTS[scheme] ? `${scheme}://${host}` : `${scheme}://${host}:${port}`;
}

/** Why an `allow_origins` entry would stop the router from starting, or undefined when it is usable (`config migrate` checks with it). */
export function corsOriginProblem(entry: string, credentials: boolean): string | undefined {
  const text = entry.trim();
  if (text === '*') return undefined;
  const compiled = compileEntry(text, credentials);
  return typeof compiled === 'string' ? compiled : undefined;
}

/** An exact origin (normalized) or a pattern; a string says why the entry is not usable. */
function compileEntry(entry: string, credentials: boolean): { origin: string } | OriginPattern | string {
  const text = entry.replace(/\/$/, '').toLowerCase();
  const parts = /^([a-z][a-z0-9+.-]*):\/\/([^/:?#]+|\[[^\]]*\])(?::(\d{1,5}|\*))?$/.exec(text);
  if (!parts) return 'expected "*", an origin such as "https://app.example.com", or a pattern such as "https://*.example.com" (scheme://host[:port], no path)';
  const [, scheme, host, port] = parts as unknown as [string, string, string, string | undefined];
  if (port !== undefined && port !== '*' && Number(port) > 65535) return `port ${port} is out of range`;
  const effectivePort = port === '*' ? undefined : (port ?? DEFAULT_PORTS[scheme]);
  if (!host.includes('*') && port !== '*') {
    if (!ORIGIN.test(serialize(scheme, host, effectivePort))) return 'the host is not a valid host name or address';
    return { origin: serialize(scheme, host, effectivePort) };
  }
  const pieces = host.split('*');
  if (pieces.some((piece) => !/^[a-z0-9.-]*$/.test(piece)) || /\.\./.test(host) || host.startsWith('.') || host.endsWith('.') || host.includes('**')) {
    return 'a pattern may use "*" only in place of host labels or parts of a label, as in "https://*.example.com"';
  }
  if (pieces.length > 1 && !/^[a-z0-9-]*\.[a-z0-9-]+(?:\.[a-z0-9-]+)*$/.test(pieces[pieces.length - 1]!)) {
    return 'a pattern must end in a literal domain after its last "*", as in "https://*.example.com" ("*" alone allows every origin, without credentials)';
  }
  const tail = pieces[pieces.length - 1]!;
  // `.localhost` names only this machine (RFC 6761): nobody can register a site under it.
  if (credentials && pieces.length > 1 && !/\..*\./.test(tail) && tail !== '.localhost') {
    return 'with cors.allow_credentials on, a pattern must end in "." and a domain of two labels at least after its last "*" ("https://*.example.com" or "http://*.localhost", not "https://*.com" or "https://*example.com"): anyone can register a site matching it and read answers made with your users\' cookies';
  }
  return { scheme, host: { pieces }, port: effectivePort };
}
