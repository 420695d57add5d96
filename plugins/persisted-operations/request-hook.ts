/**
 * The request-stage hook: turns `extensions.persistedQuery.sha256Hash` into
 * query text, and checks free-form operations against the registered ones
 * (`safelist`, `log_unknown`).
 */
import { RouterError, type AfterStageHook, type Counter, type MaybePromise, type StageEvent, type StageHook } from '../../src/index.js';
import {
  answerUnlessResolved,
  errorResponse,
  persistedQueryNotFound,
  persistedQueryResolved,
  readPersistedQuery,
  sha256Hex,
  type ResolvedOperation,
} from '../../src/operations/index.js';
import type { OperationSource } from './operation-source.js';

/** Options of `persistedOperationsHook`. */
export interface RequestHookOptions {
  /** The manifest (manifest mode) or the store (lookup mode). */
  readonly source: OperationSource;
  /** Reject unregistered free-form operations. */
  readonly safelist: boolean;
  /** Log unregistered free-form operations. */
  readonly logUnknown: boolean;
  /** Counts requests by `result`: `hit`, `miss`, `unknown`, `rejected`. */
  readonly requests: Counter;
}

type RequestEvent = StageEvent<'request'>;
type HookResult = MaybePromise<void | AfterStageHook<'request'>>;

/** Longest query text a `log_unknown` line carries. */
const LOGGED_QUERY_LENGTH = 2_000;

/** The client name of a request that names none, as Cosmo Router names it. */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * The client a request's operations are looked up for, as Cosmo Router reads it: the first non-empty
 * of `graphql-client-name` and `apollographql-client-name`, else `unknown`.
 */
export function clientNameOf(input: RequestEvent['input']): string {
  if (input.clientName) return input.clientName;
  const apollo = input.headers['apollographql-client-name'];
  return apollo ? apollo : UNKNOWN_CLIENT;
}

/** The client learns that the store failed, not where it is; the log (PLUGIN_ERROR) has the reason. */
function storeUnreadable(cause: unknown): never {
  throw new RouterError('PLUGIN_ERROR', '[persisted-operations] the operations store could not be read; the router log has the reason', {
    status: 500,
    plugin: 'persisted-operations',
    cause,
  });
}

/** Builds the `onRequest` hook of the plugin. */
export function persistedOperationsHook({ source, safelist, logUnknown, requests }: RequestHookOptions): StageHook<'request'> {
  const checksText = safelist || logUnknown;

  /** Resolves an id (a SHA-256, or an id a Cosmo manifest or file uses) or an alias sent as a document id. */
  function resolveId(event: RequestEvent, key: string): HookResult {
    const found = source.resolve(clientNameOf(event.input), key);
    return found instanceof Promise ? found.then((operation) => applyResolved(event, operation), storeUnreadable) : applyResolved(event, found);
  }

  function applyResolved(event: RequestEvent, operation: ResolvedOperation | undefined): HookResult {
    if (!operation) {
      requests.inc({ result: 'miss' });
      return answerUnlessResolved(persistedQueryNotFound);
    }
    requests.inc({ result: 'hit' });
    event.setInput({ ...event.input, query: operation.body });
    event.state.set(persistedQueryResolved, true);
  }

  function checkText(event: RequestEvent, text: string): HookResult {
    const registered = source.isRegistered(clientNameOf(event.input), text);
    if (registered instanceof Promise) return registered.then((known) => (known ? undefined : rejectUnknown(event, text)), storeUnreadable);
    if (!registered) rejectUnknown(event, text);
  }

  function rejectUnknown(event: RequestEvent, text: string): void {
    reportUnknown(event, text);
    if (!safelist) return;
    requests.inc({ result: 'rejected' });
    event.respondWith(errorResponse('QUERY_NOT_IN_SAFELIST', 'The operation is not registered: only persisted operations may run on this router.', 403));
  }

  function reportUnknown(event: RequestEvent, text: string): void {
    requests.inc({ result: 'unknown' });
    if (!logUnknown) return;
    const { operationName } = event.input;
    event.log.warn(
      { client_name: clientNameOf(event.input), operation_name: operationName, sha256: sha256Hex(text), query: text.slice(0, LOGGED_QUERY_LENGTH) },
      'Unknown operation: not a registered persisted operation',
    );
  }

  return function resolvePersistedOperation(event) {
    const read = readPersistedQuery(event.input);
    switch (read.kind) {
      case 'error':
        event.respondWith(read.response);
        return;
      case 'hash':
        return resolveId(event, read.hash);
      case 'document':
        return resolveId(event, read.id);
      case 'text':
        return checksText ? checkText(event, read.text) : undefined;
      case 'none': {
        const text = event.input.query;
        return checksText && text !== undefined ? checkText(event, text) : undefined;
      }
    }
  };
}
