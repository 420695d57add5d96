/**
 * Apollo's automatic persisted queries: a client first sends only the hash;
 * an unknown hash is answered `PersistedQueryNotFound`, the client sends the
 * hash with the text, and the router keeps the text (after checking the hash)
 * for the next hash-only request, unless the text was refused (see `refused`).
 */
import type { LRUCache } from 'lru-cache';
import type { AfterStageEvent, Counter, StageHook } from '../../src/index.js';
import type { ApqSharedStore } from './shared-store.js';
import { answerUnlessResolved, persistedQueryNotFound, persistedQueryResolved, readPersistedQuery } from '../../src/operations/index.js';

/** Query text kept across the cache, in bytes (two a character, JavaScript strings' worst case). */
export const APQ_CACHE_BYTES = 64 * 1024 * 1024;
/** A text above this (256 K characters) is answered but not kept: its hash-only requests get PersistedQueryNotFound. */
export const APQ_ENTRY_BYTES = 512 * 1024;

/** A cached text's size for APQ_CACHE_BYTES. */
export function queryBytes(text: string): number {
  return Math.max(1, text.length * 2);
}

/**
 * Whether a text was refused rather than run: another plugin answered instead (the persisted-operations
 * safelist's 403, an authentication plugin's 401), or the text itself failed (syntax, limits, validation,
 * variables, a body too large: a 4xx). A refused text is not kept: it would not run by hash either.
 */
function refused(after: AfterStageEvent<'request'>): boolean {
  const { output } = after;
  return after.shortCircuitedBy !== undefined || output.requestError === true || (output.status >= 400 && output.status < 500);
}

/**
 * Builds the `onRequest` hook over a cache of query text by SHA-256; with a
 * shared store, the in-process cache is its front: a registered text goes to
 * both, and a hash missing in process is looked up in the store.
 */
export function automaticPersistedQueriesHook(cache: LRUCache<string, string>, requests: Counter, shared?: ApqSharedStore): StageHook<'request'> {
  return async function resolveAutomaticPersistedQuery(event) {
    const read = readPersistedQuery(event.input);
    switch (read.kind) {
      case 'none':
      case 'document':
        // Document ids (`documentId`, `doc_id`) are registered operations, not part of the APQ protocol.
        return;
      case 'error':
        event.respondWith(read.response);
        return;
      case 'text': {
        const { hash, text } = read;
        return function registerAutomaticPersistedQuery(after) {
          if (refused(after)) return;
          requests.inc({ result: 'registered' });
          cache.set(hash, text);
          if (shared && queryBytes(text) <= APQ_ENTRY_BYTES) return shared.set(hash, text);
        };
      }
      case 'hash': {
        let text = cache.get(read.hash);
        let fromSharedStore = false;
        if (text === undefined && shared) {
          text = await shared.get(read.hash);
          fromSharedStore = text !== undefined;
        }
        if (text === undefined) {
          requests.inc({ result: 'miss' });
          return answerUnlessResolved(persistedQueryNotFound);
        }
        requests.inc({ result: 'hit' });
        event.setInput({ ...event.input, query: text });
        event.state.set(persistedQueryResolved, true);
        if (!fromSharedStore) return;
        // Copied into this process only once the text ran: a safelist may still refuse it.
        const found = text;
        return function keepSharedQuery(after) {
          if (!refused(after)) cache.set(read.hash, found);
        };
      }
    }
  };
}
