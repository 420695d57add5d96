import { createHash } from 'node:crypto';
import type { JsonObject, SubgraphRequest } from '../../src/index.js';

/**
 * Version of the key layout and stored value format; bumped when either
 * changes, so a new router never reads entries an older one wrote.
 */
export const CACHE_KEY_VERSION = 'v1';

/** Type label of root entries in keys and metrics. */
export const ROOT_TYPE = 'Query';

/**
 * Cache keys. Entity entries: one per entity and selection set
 * (`<prefix>v1:entity:<subgraph>:<__typename>:<hash>`); root entries: one
 * per operation text and variable values (`<prefix>v1:root:<subgraph>:<hash>`).
 * Forwarded headers are never part of a key.
 */
export class CacheKeys {
  constructor(
    /** `key_prefix` (shared store) or `''` (memory). */
    readonly prefix: string,
  ) {}

  /** The key of a root query fetch: operation name, text and every variable value. */
  root(request: SubgraphRequest): string {
    const hash = createHash('sha256')
      .update(request.operationName ?? '')
      .update('\0')
      .update(request.query)
      .update('\0')
      .update(stableStringify(request.variables))
      .digest('base64url');
    return `${this.prefix}${CACHE_KEY_VERSION}:root:${request.subgraph}:${hash}`;
  }

  /**
   * Keys of an entity fetch's representations. The selection set and the
   * other variables (field arguments) are hashed once per fetch; each
   * representation (key fields and `@requires` fields) adds its own part.
   */
  entities(request: SubgraphRequest, representations: readonly JsonObject[]): string[] {
    const { representations: _sent, ...others } = request.variables;
    const fetchDigest = createHash('sha256').update(request.selectionSet).update('\0').update(stableStringify(others)).digest();
    const base = `${this.prefix}${CACHE_KEY_VERSION}:entity:${request.subgraph}:`;
    return representations.map(function entityKey(representation) {
      const hash = createHash('sha256').update(fetchDigest).update(stableStringify(representation)).digest('base64url');
      return `${base}${typenameOf(representation)}:${hash}`;
    });
  }

  /** Subgraph and type a key belongs to (for metrics); undefined for a key of another layout. */
  describe(key: string): { subgraph: string; type: string } | undefined {
    const head = `${this.prefix}${CACHE_KEY_VERSION}:`;
    if (!key.startsWith(head)) return undefined;
    const rest = key.slice(head.length);
    const lastColon = rest.lastIndexOf(':');
    if (rest.startsWith('root:') && lastColon > 5) return { subgraph: rest.slice(5, lastColon), type: ROOT_TYPE };
    if (!rest.startsWith('entity:')) return undefined;
    const withoutHash = rest.slice(7, lastColon);
    const typeColon = withoutHash.lastIndexOf(':');
    if (typeColon < 0) return undefined;
    return { subgraph: withoutHash.slice(0, typeColon), type: withoutHash.slice(typeColon + 1) };
  }
}

/** The `__typename` of a representation (`_Unknown` when it has none). */
export function typenameOf(representation: JsonObject): string {
  const typename = representation.__typename;
  return typeof typename === 'string' && typename !== '' ? typename : '_Unknown';
}

/** JSON with object keys sorted, so equal values give equal text whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object)
    .filter((key) => object[key] !== undefined)
    .sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${stableStringify(object[key])}`).join(',')}}`;
}
