import { Agent, request, errors as undiciErrors } from 'undici';
import { RouterError } from '../errors.js';
import type { JsonObject, SubgraphRequest, SubgraphResponse, Transport } from './subgraph-types.js';

/** Options of the HTTP transport of one subgraph. */
export interface HttpTransportOptions {
  /** Subgraph URL (`http://host:port/graphql`). */
  readonly url: string;
  /** Give up after this many milliseconds (`traffic_shaping`). */
  readonly timeoutMs: number;
  /** Keep-alive connection pool, shared by every subgraph. */
  readonly agent: Agent;
  /** Largest response body accepted, in bytes. Default: 64 MiB. */
  readonly maxResponseBytes?: number;
}

/** A keep-alive pool for subgraph connections. */
export function createSubgraphAgent(): Agent {
  return new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256, pipelining: 1 });
}

/**
 * GraphQL over HTTP POST to a subgraph, through a shared keep-alive pool.
 * No answer (refused, reset, timed out, not 2xx without a GraphQL body)
 * throws a RouterError with a code users can act on.
 */
export function createHttpTransport({ url, timeoutMs, agent, maxResponseBytes = 64 * 1024 * 1024 }: HttpTransportOptions): Transport {
  return async function sendToSubgraph(subgraphRequest: SubgraphRequest, signal: AbortSignal): Promise<SubgraphResponse> {
    const body = JSON.stringify({
      query: subgraphRequest.query,
      operationName: subgraphRequest.operationName,
      variables: subgraphRequest.variables,
    });
    const timeout = AbortSignal.timeout(timeoutMs);
    let response;
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          ...subgraphRequest.headers,
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
        },
        body,
        signal: AbortSignal.any([signal, timeout]),
      });
    } catch (error) {
      throw transportError(subgraphRequest.subgraph, error, timeout, timeoutMs);
    }
    let text: string;
    try {
      const declared = Number(response.headers['content-length'] ?? 0);
      if (declared > maxResponseBytes) {
        response.body.destroy();
        throw new RouterError('SUBGRAPH_INVALID_RESPONSE', `Subgraph "${subgraphRequest.subgraph}" sent a response larger than ${maxResponseBytes} bytes.`);
      }
      text = await readLimited(response.body, maxResponseBytes, subgraphRequest.subgraph);
    } catch (error) {
      if (error instanceof RouterError) throw error;
      throw transportError(subgraphRequest.subgraph, error, timeout, timeoutMs);
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (typeof value === 'string') headers[name] = value;
      else if (Array.isArray(value)) headers[name] = value.join(', ');
    }
    const parsed = parseBody(text);
    const ok = response.statusCode >= 200 && response.statusCode < 300;
    if (!parsed) {
      if (!ok) throw httpError(subgraphRequest.subgraph, response.statusCode);
      throw new RouterError('SUBGRAPH_INVALID_RESPONSE', `Subgraph "${subgraphRequest.subgraph}" sent a response that is not GraphQL JSON.`);
    }
    if (!ok && parsed.data === undefined && parsed.errors === undefined) throw httpError(subgraphRequest.subgraph, response.statusCode);
    return { ...parsed, headers };
  };
}

async function readLimited(body: AsyncIterable<Buffer>, limit: number, subgraph: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      // Stop reading: the rest of an oversized body is never buffered.
      (body as AsyncIterable<Buffer> & { destroy?: () => void }).destroy?.();
      throw new RouterError('SUBGRAPH_INVALID_RESPONSE', `Subgraph "${subgraph}" sent a response larger than ${limit} bytes.`);
    }
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
}

function parseBody(text: string): { data?: JsonObject | null; errors?: SubgraphResponse['errors']; extensions?: JsonObject } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const object = value as Record<string, unknown>;
  const result: { data?: JsonObject | null; errors?: SubgraphResponse['errors']; extensions?: JsonObject } = {};
  if ('data' in object) {
    const data = object.data;
    if (data !== null && (typeof data !== 'object' || Array.isArray(data))) return undefined;
    result.data = data as JsonObject | null;
  }
  if (object.errors !== undefined) {
    if (!Array.isArray(object.errors)) return undefined;
    result.errors = object.errors.map((e: unknown) =>
      e !== null && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string'
        ? (e as NonNullable<SubgraphResponse['errors']>[number])
        : { message: 'Subgraph sent a malformed error.' },
    );
  }
  if (object.extensions !== null && typeof object.extensions === 'object' && !Array.isArray(object.extensions)) {
    result.extensions = object.extensions as JsonObject;
  }
  return result;
}

function httpError(subgraph: string, status: number): RouterError {
  return new RouterError('SUBGRAPH_REQUEST_FAILED', `Subgraph "${subgraph}" answered with HTTP ${status}.`, {
    extensions: { http: { status } },
  });
}

function transportError(subgraph: string, error: unknown, timeout: AbortSignal, timeoutMs: number): RouterError {
  if (timeout.aborted || error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new RouterError('SUBGRAPH_TIMEOUT', `Subgraph "${subgraph}" did not answer within ${timeoutMs}ms.`, { cause: error });
  }
  const reason = error instanceof Error ? (error as Error & { code?: string }).code ?? error.message : String(error);
  return new RouterError('SUBGRAPH_REQUEST_FAILED', `Request to subgraph "${subgraph}" failed: ${reason}.`, { cause: error });
}
