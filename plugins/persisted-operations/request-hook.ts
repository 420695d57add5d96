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

const clientNameRequired = () =>
  errorResponse('PERSISTED_QUERY_CLIENT_NAME_REQUIRED', 'Persisted operations are registered per client: send the graphql-client-name header.', 400);

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

  /** Resolves a SHA-256 id, or an alias sent as a document id. */
  function resolveId(event: RequestEvent, key: string): HookResult {
    const client = event.input.clientName;
    if (source.needsClientName && client === undefined) return answerUnlessResolved(clientNameRequired);
    const found = source.resolve(client, key);
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
    const client = event.input.clientName;
    if (source.needsClientName && client === undefined) {
      if (safelist) {
        event.respondWith(clientNameRequired());
        return;
      }
      reportUnknown(event, text);
      return;
    }
    const registered = source.isRegistered(client, text);
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
    const { clientName, operationName } = event.input;
    event.log.warn(
      { client_name: clientName, operation_name: operationName, sha256: sha256Hex(text), query: text.slice(0, LOGGED_QUERY_LENGTH) },
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
