/**
 * Outside manifest mode: each id is looked up in the store, per client, on
 * first use and kept in a bounded cache (LRU with a TTL, so a deletion takes
 * effect within `lookup_cache.ttl`). Concurrent lookups of one id share one
 * store read; misses are remembered for a second so a flood of one unknown
 * id does not become a flood of store reads. Misses are kept apart from
 * found operations: a client sending many unknown ids never evicts the
 * operations other clients use. Ids and client names that no push
 * could have stored (too long, control characters; see `keyProblem`) are not
 * found without reading the store or taking a cache slot.
 */
import { LRUCache } from 'lru-cache';
import { keyProblem, nameProblem, normalizedId, sha256Hex, type OperationsStore, type ResolvedOperation } from '../../src/operations/index.js';
import type { OperationSource } from './operation-source.js';

/** Options of `LookupSource`. */
export interface LookupSourceOptions {
  /** The store operations are looked up in. */
  readonly store: OperationsStore;
  /** Federated graph name (`graph.name`). */
  readonly graph: string;
  /** Operations kept. */
  readonly cacheSize: number;
  /** Lifetime of a found operation, in ms. */
  readonly cacheTtlMs: number;
}

const MISS_TTL_MS = 1_000;

/** Per-request lookups in the store, cached. */
export class LookupSource implements OperationSource {
  private readonly found: LRUCache<string, ResolvedOperation>;
  /** Ids the store did not have, lately: their own LRU, so unknown ids never push out found ones. */
  private readonly missing: LRUCache<string, true>;
  private readonly inFlight = new Map<string, Promise<ResolvedOperation | undefined>>();

  constructor(private readonly options: LookupSourceOptions) {
    this.found = new LRUCache<string, ResolvedOperation>({ max: options.cacheSize, ttl: options.cacheTtlMs });
    this.missing = new LRUCache<string, true>({ max: options.cacheSize, ttl: Math.min(MISS_TTL_MS, options.cacheTtlMs) });
  }

  resolve(client: string, key: string): ResolvedOperation | undefined | Promise<ResolvedOperation | undefined> {
    // An id or client name no push could have stored is not found: no store read, no cache entry.
    if (keyProblem(key) !== undefined || nameProblem('client', client) !== undefined) return undefined;
    const cacheKey = `${client}\n${key}`;
    const cached = this.found.get(cacheKey);
    if (cached !== undefined) return cached;
    if (this.missing.get(cacheKey)) return undefined;
    let pending = this.inFlight.get(cacheKey);
    if (!pending) {
      pending = this.options.store.lookup(this.options.graph, client, key).then(
        (found) => {
          this.inFlight.delete(cacheKey);
          if (found) this.found.set(cacheKey, found);
          else this.missing.set(cacheKey, true);
          return found;
        },
        (error: unknown) => {
          this.inFlight.delete(cacheKey);
          throw error;
        },
      );
      this.inFlight.set(cacheKey, pending);
    }
    return pending;
  }

  /**
   * Whether the client pushed this text (or one that normalizes to the same). Judged by the text found,
   * not by the key that found it: a Relay alias or a Cosmo id may be the SHA-256 of another text.
   */
  async isRegistered(client: string, text: string): Promise<boolean> {
    const hash = sha256Hex(text);
    const exact = await this.resolve(client, hash);
    if (exact && textIds(exact).hash === hash) return true;
    const normalized = normalizedId(text);
    if (normalized === undefined) return false;
    if (exact && textIds(exact).normalized === normalized) return true;
    const found = await this.resolve(client, normalized);
    return found !== undefined && textIds(found).normalized === normalized;
  }

  async stop(): Promise<void> {
    await this.options.store.close();
  }
}

/** SHA-256 of a found operation's text and of its normalized form, worked out once per cached entry. */
const textIdsOf = new WeakMap<ResolvedOperation, { readonly hash: string; readonly normalized: string | undefined }>();

function textIds(operation: ResolvedOperation): { readonly hash: string; readonly normalized: string | undefined } {
  let ids = textIdsOf.get(operation);
  if (!ids) textIdsOf.set(operation, (ids = { hash: sha256Hex(operation.body), normalized: normalizedId(operation.body) }));
  return ids;
}
