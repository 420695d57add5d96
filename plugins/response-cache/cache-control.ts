/**
 * The spec's Cache-Control decision rules for one subgraph response, in
 * their order: errors, missing header, `no-store`, `no-cache`/`private`,
 * `s-maxage`, `max-age`, the fallback directives, then 0 and invalid values.
 *
 * One deviation, from RFC 9111 §3.5 (docs/response-cache.md): the answer to a
 * subgraph request that carried `Authorization` is stored only when it says
 * `public`, `s-maxage` or `must-revalidate`. The cache key holds no header,
 * so without this one user's answer would be served to another.
 */

/** What the rules decided for one response. */
export type CachePolicy =
  | {
      readonly store: true;
      /** Lifetime in milliseconds (> 0). */
      readonly ttlMs: number;
      /** The header carried `public`. */
      readonly isPublic: boolean;
      /** The header carried `private`: stored only per user, never shared (`private_entries`). */
      readonly isPrivate?: boolean;
    }
  | {
      readonly store: false;
      /** Why, for debug logs. */
      readonly reason: string;
    };

/** Parsed directives: name (lower case) -> value (undefined when the directive had none). */
type Directives = Map<string, string | undefined>;

/** Directives whose presence, without a lifetime, selects `fallback_ttl`. */
const FALLBACK_FLAGS = ['public', 'must-revalidate', 'proxy-revalidate'] as const;
/** Fallback directives that must carry a valid duration. */
const FALLBACK_DURATIONS = ['stale-if-error', 'stale-while-revalidate'] as const;
/** Every directive the rules read a duration from. */
const DURATION_DIRECTIVES = ['s-maxage', 'max-age', ...FALLBACK_DURATIONS] as const;
/** RFC 9111 §3.5: the directives that let a shared cache store the answer to a request with `Authorization`. */
const AUTHORIZED_STORE_FLAGS = ['public', 's-maxage', 'must-revalidate'] as const;
/** RFC 9111: a delta-seconds too large to represent is taken as 2^31. */
const MAX_DELTA_SECONDS = 2_147_483_648;

/**
 * Applies the rules to a response. `hasErrors`: the response carried
 * GraphQL errors (rule 1). `header`: its `Cache-Control` value, if any.
 * `authorized`: the subgraph request carried an `Authorization` header
 * (see `carriesAuthorization`); then only an answer with `public`,
 * `s-maxage` or `must-revalidate` may be stored (RFC 9111 §3.5).
 * `allowPrivate`: the request's user is known (`private_entries`), so a
 * `private` answer may be stored for that user alone: its lifetime is
 * `max-age` (`s-maxage` is for shared caches), else `fallback_ttl`.
 */
export function decideCaching(header: string | undefined, hasErrors: boolean, fallbackTtlMs: number, authorized = false, allowPrivate = false): CachePolicy {
  if (hasErrors) return refuse('the response has GraphQL errors');
  if (header === undefined || header.trim() === '') return refuse('no Cache-Control header');
  const directives = parseCacheControl(header);
  if (directives.has('no-store')) return refuse('no-store');
  if (directives.has('no-cache')) return refuse('no-cache');
  if (directives.has('private')) return allowPrivate ? decidePrivate(directives, fallbackTtlMs) : refuse('private');
  if (authorized && !AUTHORIZED_STORE_FLAGS.some((name) => directives.has(name))) {
    return refuse('the request carried Authorization and the answer has neither public, s-maxage nor must-revalidate');
  }
  const durations = new Map<string, number>();
  for (const name of DURATION_DIRECTIVES) {
    if (!directives.has(name)) continue;
    const seconds = parseDeltaSeconds(directives.get(name));
    if (seconds === undefined) return refuse(`invalid ${name} value`);
    durations.set(name, seconds);
  }
  const isPublic = directives.has('public');
  const lifetime = durations.get('s-maxage') ?? durations.get('max-age');
  if (lifetime !== undefined) {
    // A selected lifetime of 0 refuses; it does not fall through to the fallback.
    if (lifetime === 0) return refuse('lifetime 0');
    return { store: true, ttlMs: lifetime * 1000, isPublic };
  }
  const fallback = FALLBACK_FLAGS.some((name) => directives.has(name)) || FALLBACK_DURATIONS.some((name) => durations.has(name));
  if (fallback) return { store: true, ttlMs: fallbackTtlMs, isPublic };
  return refuse('no recognized caching directive');
}

/** Whether request headers hold `Authorization` (any letter case, any value, an empty one included). */
export function carriesAuthorization(headers: Readonly<Record<string, string>> | undefined): boolean {
  if (!headers) return false;
  // The kernel sends lower-case names: the common answer costs one lookup.
  if (Object.hasOwn(headers, 'authorization')) return true;
  for (const name in headers) {
    if (name.length === 13 && name.toLowerCase() === 'authorization' && Object.hasOwn(headers, name)) return true;
  }
  return false;
}

/** Splits a Cache-Control value into directives; names are case-insensitive, the first occurrence wins. */
export function parseCacheControl(header: string): Directives {
  const directives: Directives = new Map();
  for (const part of splitDirectives(header)) {
    const equals = part.indexOf('=');
    const name = (equals < 0 ? part : part.slice(0, equals)).trim().toLowerCase();
    if (name === '' || directives.has(name)) continue;
    let value = equals < 0 ? undefined : part.slice(equals + 1).trim();
    if (value !== undefined && value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    directives.set(name, value);
  }
  return directives;
}

/** Splits on commas outside quoted strings (`no-cache="a, b"` stays one directive). */
function splitDirectives(header: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    if (char === ',' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}

/** Digits only (RFC 9111 delta-seconds); anything else is invalid. */
function parseDeltaSeconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d+$/.test(value)) return undefined;
  return Math.min(Number(value), MAX_DELTA_SECONDS);
}

/** A `private` answer for one user's entries: as a private cache reads it (RFC 9111 §5.2.2.7), Authorization allowed. */
function decidePrivate(directives: Directives, fallbackTtlMs: number): CachePolicy {
  if (!directives.has('max-age')) return { store: true, ttlMs: fallbackTtlMs, isPublic: false, isPrivate: true };
  const seconds = parseDeltaSeconds(directives.get('max-age'));
  if (seconds === undefined) return refuse('invalid max-age value');
  if (seconds === 0) return refuse('lifetime 0');
  return { store: true, ttlMs: seconds * 1000, isPublic: false, isPrivate: true };
}

function refuse(reason: string): CachePolicy {
  return { store: false, reason };
}
