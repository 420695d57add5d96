/**
 * Apollo's automatic persisted queries: a client first sends only the hash;
 * an unknown hash is answered `PersistedQueryNotFound`, the client sends the
 * hash with the text, and the router keeps the text (after checking the hash)
 * for the next hash-only request.
 */
import type { LRUCache } from 'lru-cache';
import type { Counter, StageHook } from '../../src/index.js';
import { answerUnlessResolved, persistedQueryNotFound, persistedQueryResolved, readPersistedQuery } from '../../src/operations/index.js';

/** Builds the `onRequest` hook over a cache of query text by SHA-256. */
export function automaticPersistedQueriesHook(cache: LRUCache<string, string>, requests: Counter): StageHook<'request'> {
  return function resolveAutomaticPersistedQuery(event) {
    const read = readPersistedQuery(event.input);
    switch (read.kind) {
      case 'none':
      case 'document':
        // Document ids (`documentId`, `doc_id`) are registered operations, not part of the APQ protocol.
        return;
      case 'error':
        event.respondWith(read.response);
        return;
      case 'text':
        requests.inc({ result: 'registered' });
        cache.set(read.hash, read.text);
        return;
      case 'hash': {
        const text = cache.get(read.hash);
        if (text === undefined) {
          requests.inc({ result: 'miss' });
          return answerUnlessResolved(persistedQueryNotFound);
        }
        requests.inc({ result: 'hit' });
        event.setInput({ ...event.input, query: text });
        event.state.set(persistedQueryResolved, true);
        return;
      }
    }
  };
}
