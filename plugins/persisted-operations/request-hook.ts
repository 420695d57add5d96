/**
 * The request-stage hook: turns `extensions.persistedQuery.sha256Hash` into
 * query text, and checks free-form operations against the registered ones
 * (`safelist`, `log_unknown`).
 */
import { clientValue, RouterError, type AfterStageHook, type Counter, type MaybePromise, type OperationResponse, type StageEvent, type StageHook } from '../../src/index.js';
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

function notInSafelist(): OperationResponse {
  return errorResponse('QUERY_NOT_IN_SAFELIST', 'The operation is not registered: only persisted operations may run on this router.', 403);
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
      if (checksText) checkTextResolvedLater(event);
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
    if (refuses(event, text)) event.respondWith(notInSafelist());
  }

  /** Reports an unregistered text; true when the safelist refuses it. */
  function refuses(event: RequestEvent, text: string): boolean {
    reportUnknown(event, text);
    if (!safelist) return false;
    requests.inc({ result: 'rejected' });
    return true;
  }

  /**
   * An id this plugin does not know may still be resolved by a plugin whose hook runs after this one
   * (automatic persisted queries, a third party's). Whatever text the request finally carries is checked
   * just before the operation runs, after every before-hook, so the safelist holds in any plugin order.
   */
  function checkTextResolvedLater(event: RequestEvent): void {
    event.aroundStage(async function checkResolvedText(input, perform) {
      if (input.query === undefined) return perform(input);
      const registered = await Promise.resolve(source.isRegistered(clientNameOf(input), input.query)).catch(storeUnreadable);
      if (!registered && refuses(event, input.query)) return notInSafelist();
      return perform(input);
    });
  }

  function reportUnknown(event: RequestEvent, text: string): void {
    requests.inc({ result: 'unknown' });
    if (!logUnknown) return;
    // The client chose the names: cut, so that a line does not grow with the request (a 1 MB operationName).
    event.log.warn(
      {
        client_name: clientValue(clientNameOf(event.input)),
        operation_name: clientValue(event.input.operationName),
        sha256: sha256Hex(text),
        query: text.slice(0, LOGGED_QUERY_LENGTH),
      },
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
        if (!checksText) return;
        const text = event.input.query;
        if (text !== undefined) return checkText(event, text);
        // No text yet: another plugin may supply one (from its own extension, say).
        checkTextResolvedLater(event);
        return;
      }
    }
  };
}
