/**
 * The spec's Cache-Control decision rules for one subgraph response, in
 * their order: errors, missing header, `no-store`, `no-cache`/`private`,
 * `s-maxage`, `max-age`, the fallback directives, then 0 and invalid values.
 */

/** What the rules decided for one response. */
export type CachePolicy =
  | {
      readonly store: true;
      /** Lifetime in milliseconds (> 0). */
      readonly ttlMs: number;
      /** The header carried `public`. */
      readonly isPublic: boolean;
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
/** RFC 9111: a delta-seconds too large to represent is taken as 2^31. */
const MAX_DELTA_SECONDS = 2_147_483_648;

/**
 * Applies the rules to a response. `hasErrors`: the response carried
 * GraphQL errors (rule 1). `header`: its `Cache-Control` value, if any.
 */
export function decideCaching(header: string | undefined, hasErrors: boolean, fallbackTtlMs: number): CachePolicy {
  if (hasErrors) return refuse('the response has GraphQL errors');
  if (header === undefined || header.trim() === '') return refuse('no Cache-Control header');
  const directives = parseCacheControl(header);
  if (directives.has('no-store')) return refuse('no-store');
  if (directives.has('no-cache')) return refuse('no-cache');
  if (directives.has('private')) return refuse('private');
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

function refuse(reason: string): CachePolicy {
  return { store: false, reason };
}
