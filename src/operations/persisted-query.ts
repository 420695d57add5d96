/**
 * The persisted-query request protocol shared by the `persisted-operations`
 * and `automatic-persisted-queries` plugins: reading
 * `extensions.persistedQuery`, the error answers INTERFACES.md fixes, and how
 * several resolvers cooperate on one request.
 *
 * Cooperation: a plugin that resolves a hash sets the query text with
 * `setInput` and marks the request with `persistedQueryResolved`. A plugin
 * that cannot resolve it does not answer at once (a later plugin may know the
 * hash); it returns `answerUnlessResolved(...)` as its after-hook. The first
 * such after-hook to run, in registration order, answers when nobody resolved.
 */
import { RouterError, toGraphQLErrorJSON, type ErrorCode } from '../kernel/errors.js';
import type { AfterStageHook } from '../kernel/pipeline/hooks.js';
import type { OperationRequest, OperationResponse } from '../kernel/pipeline/stages.js';
import { StateKey } from '../kernel/pipeline/state.js';
import { isRecord } from './json-value.js';
import { isSha256Hex, sha256Hex } from './operation-id.js';

/** What a request says about persisted queries. */
export type PersistedQueryRead =
  /** No `extensions.persistedQuery`: a free-form operation (or none). */
  | { readonly kind: 'none' }
  /** A hash without text: to be resolved. `hash` is lower-case. */
  | { readonly kind: 'hash'; readonly hash: string }
  /** A document id without text (`documentId` / Relay's `doc_id`): a SHA-256 id (lower-case) or an alias. */
  | { readonly kind: 'document'; readonly id: string }
  /** A hash with text, and the text matches it (APQ registration). */
  | { readonly kind: 'text'; readonly hash: string; readonly text: string }
  /** The extension is malformed or the hash does not match: answer with `response`. */
  | { readonly kind: 'error'; readonly response: OperationResponse };

/** Set to true by the plugin that turned a hash into query text. */
export const persistedQueryResolved = new StateKey<true>('persisted-query-resolved');
/** Set once an unresolved hash has been answered (first after-hook wins). */
const persistedQueryAnswered = new StateKey<true>('persisted-query-answered');

/** `Cache-Control` of a not-found answer: clients and proxies must not keep it (the hash may be registered next). */
export const NOT_FOUND_CACHE_CONTROL = 'private, no-cache, must-revalidate';

/**
 * Reads `extensions.persistedQuery` (or, without it, a `documentId`). Checks, in this order: an object,
 * `version` 1, `sha256Hash` of 64 hex characters, and when text is sent too,
 * that the hash matches it (before any lookup).
 */
export function readPersistedQuery(request: OperationRequest): PersistedQueryRead {
  const extension = request.extensions?.persistedQuery;
  if (extension === undefined || extension === null) return request.documentId !== undefined && request.query === undefined ? readDocumentId(request.documentId) : NONE;
  if (!isRecord(extension)) {
    return errorRead('PERSISTED_QUERY_UNSUPPORTED_VERSION', 'extensions.persistedQuery must be an object {"version": 1, "sha256Hash": "<64 hex characters>"}.');
  }
  if (extension.version !== 1) {
    return errorRead('PERSISTED_QUERY_UNSUPPORTED_VERSION', `Unsupported persisted query version ${versionText(extension.version)}; only version 1 is supported.`);
  }
  if (!isSha256Hex(extension.sha256Hash)) {
    return errorRead('PERSISTED_QUERY_INVALID_HASH', 'extensions.persistedQuery.sha256Hash must be a SHA-256 hash: 64 hexadecimal characters.');
  }
  const hash = extension.sha256Hash.toLowerCase();
  const text = request.query;
  if (text === undefined) return { kind: 'hash', hash };
  if (sha256Hex(text) !== hash) return errorRead('PERSISTED_QUERY_HASH_MISMATCH', 'The sha256Hash does not match the SHA-256 of the query text.');
  return { kind: 'text', hash, text };
}

/**
 * A client's `version` as an error quotes it: numbers and booleans as they are, a string cut to 20
 * characters, anything else by its kind (never serialized: a value nested thousands deep would
 * overflow the stack, and an error must not echo a large client value back).
 */
function versionText(version: unknown): string {
  if (typeof version === 'number' || typeof version === 'boolean') return String(version);
  if (typeof version === 'string') return JSON.stringify(version.length > 20 ? `${version.slice(0, 20)}…` : version);
  if (version === undefined || version === null) return 'null';
  return Array.isArray(version) ? '(an array)' : '(an object)';
}

/** The answer for a hash nobody knows: 200, `PersistedQueryNotFound`, not cacheable. */
export function persistedQueryNotFound(): OperationResponse {
  return errorResponse('PERSISTED_QUERY_NOT_FOUND', 'PersistedQueryNotFound', 200, { 'cache-control': NOT_FOUND_CACHE_CONTROL });
}

/** A 4xx answer with one coded error. */
export function errorResponse(code: ErrorCode, message: string, status: number, headers: Readonly<Record<string, string>> = {}): OperationResponse {
  return { body: { errors: [toGraphQLErrorJSON(new RouterError(code, message))] }, status, headers };
}

/**
 * An after-hook for the request stage: answers with `response()` unless some
 * plugin resolved the hash or answered it already (or a plugin short-circuited).
 */
export function answerUnlessResolved(response: () => OperationResponse): AfterStageHook<'request'> {
  return function answerUnresolvedPersistedQuery(after) {
    if (after.shortCircuitedBy !== undefined || after.state.get(persistedQueryResolved) || after.state.get(persistedQueryAnswered)) return;
    after.state.set(persistedQueryAnswered, true);
    after.setOutput(response());
  };
}

const NONE: PersistedQueryRead = { kind: 'none' };

/** `sha256:<hex>` (GraphQL over HTTP's form) or bare hex names a SHA-256 id; anything else is an alias. */
function readDocumentId(documentId: string): PersistedQueryRead {
  const id = documentId.startsWith('sha256:') ? documentId.slice('sha256:'.length) : documentId;
  return { kind: 'document', id: isSha256Hex(id) ? id.toLowerCase() : documentId };
}

function errorRead(code: ErrorCode, message: string): PersistedQueryRead {
  return { kind: 'error', response: errorResponse(code, message, 400) };
}
