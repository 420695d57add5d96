/**
 * Access logs: one line per request through the router's logger (pino, JSON),
 * written once the request is over, whatever answered it.
 */

import { clientValue, RouterError, StateKey, type Hooks, type Logger, type OperationRequest, type OperationResponse } from '../../src/index.js';
import { cacheCounts } from './cache-status.js';
import { operationFacts, type OperationFacts } from './operation-facts.js';

/** The `msg` of every access log line. */
export const ACCESS_LOG_MESSAGE = 'Request completed';

/** One request as the access log follows it. */
interface AccessRecord {
  readonly started: number;
  readonly request: OperationRequest;
  facts: OperationFacts | undefined;
  /** Fetches that reached a subgraph (failed ones included); not those a plugin answered (cache hits). */
  subgraphCalls: number;
}

const ACCESS = new StateKey<AccessRecord>('access-logs');

/** Fields of one access log line (snake_case, as every router log field). */
export interface AccessLogLine {
  readonly operation_name: string | undefined;
  readonly operation_type: string | undefined;
  readonly operation_hash: string | undefined;
  readonly client_name: string | undefined;
  readonly client_version: string | undefined;
  readonly method: string;
  readonly origin: string;
  readonly status: number;
  readonly duration_ms: number;
  readonly subgraph_calls: number;
  readonly cache_hits: number;
  readonly errors: number;
  readonly error_code?: string;
}

/** The hooks of `access-logs`: they observe and never change a request. */
export function accessLogHooks(log: Logger): Hooks {
  return {
    onRequest(event) {
      const record: AccessRecord = { started: performance.now(), request: event.input, facts: undefined, subgraphCalls: 0 };
      event.state.set(ACCESS, record);
      event.whenSettled((outcome) => {
        const response = outcome.ok ? outcome.output : undefined;
        log.info(lineOf(record, response, outcome.ok ? undefined : outcome.error, event.state), ACCESS_LOG_MESSAGE);
      });
    },
    onParse(event) {
      const record = event.state.get(ACCESS);
      if (!record) return;
      event.whenSettled((outcome) => {
        if (outcome.ok && record.facts === undefined) record.facts = operationFacts(outcome.output, record.request.operationName);
      });
    },
    onPlan(event) {
      // The plan's operation name is the one the router ran (a plugin may have set it after the request arrived).
      const record = event.state.get(ACCESS);
      if (record) record.facts = operationFacts(event.input.document, event.input.operationName);
    },
    onFetch(event) {
      const record = event.state.get(ACCESS);
      if (!record) return;
      event.whenSettled((outcome) => {
        if (!outcome.ok || outcome.shortCircuitedBy === undefined) record.subgraphCalls++;
      });
    },
  };
}

function lineOf(record: AccessRecord, response: OperationResponse | undefined, error: unknown, state: Parameters<typeof cacheCounts>[0]): AccessLogLine {
  const { request, facts } = record;
  const cache = cacheCounts(state);
  const status = response?.status ?? (error instanceof RouterError && error.status !== undefined ? error.status : 500);
  const errors = response?.body.errors;
  const code = errors?.[0]?.extensions?.code ?? (error instanceof RouterError ? error.code : undefined);
  const line: AccessLogLine = {
    operation_name: clientValue(facts?.name ?? request.operationName),
    operation_type: facts?.type,
    operation_hash: facts?.hash,
    client_name: clientValue(request.clientName),
    client_version: clientValue(request.headers['graphql-client-version']),
    method: request.method,
    origin: request.origin,
    status,
    duration_ms: Math.round((performance.now() - record.started) * 1000) / 1000,
    subgraph_calls: record.subgraphCalls,
    cache_hits: cache?.hits ?? 0,
    errors: errors?.length ?? (error === undefined ? 0 : 1),
  };
  return typeof code === 'string' ? { ...line, error_code: code } : line;
}
