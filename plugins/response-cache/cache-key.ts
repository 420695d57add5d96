import { createHash } from 'node:crypto';
import { setOwn, type JsonObject, type SubgraphRequest } from '../../src/index.js';

/**
 * Version of the key layout; bumped when it changes, so a new router never
 * reads entries an older one wrote. The stored value has a version of its
 * own (`STORED_VALUE_FORMAT`), so that a value format change keeps the keys,
 * and with them the indexes that invalidations read, shared between router
 * versions during a rolling deploy.
 */
export const CACHE_KEY_VERSION = 'v1';

/** Type label of root entries in keys and metrics. */
export const ROOT_TYPE = 'Query';

/** Representations longer than this (as JSON) are hashed in keys; shorter ones are kept as they are. */
const INLINE_REPRESENTATION = 96;

/**
 * Cache keys. Entity entries: one per entity and selection set
 * (`<prefix>v1:entity:<subgraph>:<__typename>:<fetch hash>:<representation>`);
 * root entries: one per operation text and variable values
 * (`<prefix>v1:root:<subgraph>:<hash>`). Forwarded headers are never part
 * of a key. Subgraph names are assumed to hold no `:`.
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
   * The part of entity keys shared by one fetch's entities: its selection
   * set and other variables (field arguments, among them a client's own
   * `$representations` when the representations went under another name).
   */
  fetchHash(request: Pick<SubgraphRequest, 'selectionSet' | 'variables' | 'representationsVariable'>): string {
    const sent = representationsVariableOf(request);
    const others: Record<string, unknown> = {};
    for (const name in request.variables) if (name !== sent) setOwn(others, name, request.variables[name]);
    // 128 bits of the digest: collisions stay out of reach, keys stay short.
    return createHash('sha256').update(request.selectionSet).update('\0').update(stableStringify(others)).digest('base64url').slice(0, 22);
  }

  /**
   * Keys of an entity fetch's representations, given the fetch's
   * `fetchHash` (hashed once per fetch, not per entity). Each representation
   * (key fields and `@requires` fields) is added as JSON, or hashed when long.
   */
  entityKeys(subgraph: string, fetchHash: string, representations: readonly JsonObject[]): string[] {
    const base = `${this.prefix}${CACHE_KEY_VERSION}:entity:${subgraph}:`;
    return representations.map(function entityKey(representation) {
      const json = stableStringify(representation);
      const part = json.length <= INLINE_REPRESENTATION ? json : createHash('sha256').update(json).digest('base64url');
      return `${base}${typenameOf(representation)}:${fetchHash}:${part}`;
    });
  }

  /** Subgraph and type a key belongs to (for metrics); undefined for a key of another layout. */
  describe(key: string): { subgraph: string; type: string } | undefined {
    const head = `${this.prefix}${CACHE_KEY_VERSION}:`;
    if (!key.startsWith(head)) return undefined;
    const [kind, subgraph, type] = key.slice(head.length).split(':', 3);
    if (subgraph === undefined) return undefined;
    if (kind === 'root') return { subgraph, type: ROOT_TYPE };
    return kind === 'entity' && type !== undefined ? { subgraph, type } : undefined;
  }
}

/** The variable of an entity request (or part) holding its representations: the kernel names it only when it is not `representations`. */
export function representationsVariableOf(request: { readonly representationsVariable?: string }): string {
  return request.representationsVariable ?? 'representations';
}

/** The `__typename` of a representation (`_Unknown` when it has none). */
export function typenameOf(representation: JsonObject): string {
  const typename = representation.__typename;
  return typeof typename === 'string' && typename !== '' ? typename : '_Unknown';
}

/** JSON with object keys sorted, so equal values give equal text whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) {
    let text = '[';
    for (let i = 0; i < value.length; i++) text += (i === 0 ? '' : ',') + stableStringify(value[i]);
    return `${text}]`;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  if (keys.length > 1) keys.sort();
  let text = '{';
  for (const key of keys) {
    const item = object[key];
    if (item === undefined) continue;
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${stableStringify(item)}`;
  }
  return `${text}}`;
}
