/**
 * Reading a request's GraphQL parameters strictly: whatever a client sends,
 * a bad parameter is a 400 `BAD_REQUEST` naming it, never a server error.
 *
 * Yoga's own readers of URL parameters (GET, and form bodies) hand a
 * malformed `variables` or `extensions` straight to `JSON.parse` and answer
 * its exception with a 500; `useStrictParams` replaces them. `checkParams`
 * checks the types yoga leaves unchecked (`operationName`, `documentId`).
 */
import { GraphQLError } from 'graphql';
import type { Plugin as YogaPlugin } from 'graphql-yoga';

/** A 400 `BAD_REQUEST` about the request's parameters. */
export function badRequest(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
}

/**
 * Reads GET parameters (and `application/x-www-form-urlencoded` bodies) with
 * clear errors, and makes every other body reader's failure (a multipart
 * body's bad `operations` field, say) a 400 `BAD_REQUEST`.
 */
export function useStrictParams(): YogaPlugin {
  return {
    onRequestParse({ request, requestParser, setRequestParser }) {
      if (request.method === 'GET') {
        setRequestParser((current) => paramsFromSearch(new URLSearchParams(current.url.slice(current.url.indexOf('?') + 1 || current.url.length))));
        return;
      }
      if (request.method === 'POST' && mediaType(request.headers.get('content-type')) === 'application/x-www-form-urlencoded') {
        setRequestParser(async (current) => paramsFromSearch(new URLSearchParams(await current.text())));
        return;
      }
      if (!requestParser) return;
      const parse = requestParser;
      setRequestParser(async (current) => {
        try {
          return await parse(current);
        } catch (error) {
          throw asBadRequest(error);
        }
      });
    },
  };
}

/** A body reader's failure as the client's fault: 400, unless it carries its own HTTP status already. */
function asBadRequest(error: unknown): unknown {
  if (error instanceof GraphQLError) return error.extensions.http ? error : badRequest(error.message);
  if (error instanceof Error && (error.name === 'AbortError' || error.name === 'TimeoutError')) return error;
  return badRequest('The request body could not be read as a GraphQL request.');
}

function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(',')[0]!.split(';')[0]!.trim().toLowerCase();
}

/** The GraphQL parameters of a query string or form body. */
export function paramsFromSearch(search: URLSearchParams): Record<string, unknown> {
  const params: Record<string, unknown> = {
    query: search.get('query') || undefined,
    operationName: search.get('operationName') || undefined,
    variables: jsonParam(search, 'variables'),
    extensions: jsonParam(search, 'extensions'),
  };
  // Persisted document ids (GraphQL over HTTP's `documentId`, Relay's `doc_id`) over GET too.
  for (const name of ['documentId', 'doc_id']) {
    const value = search.get(name);
    if (value !== null) params[name] = value;
  }
  return params;
}

function jsonParam(search: URLSearchParams, name: 'variables' | 'extensions'): unknown {
  const text = search.get(name);
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof SyntaxError ? `: ${error.message}` : '';
    throw badRequest(`The "${name}" parameter is not valid JSON${reason}. Send it as a JSON object, URL-encoded.`);
  }
}

/** Refuses parameters of a type no GraphQL request has (checked per operation, batches included). */
export function checkParams(params: Readonly<Record<string, unknown>>): void {
  const { operationName } = params;
  if (operationName != null && typeof operationName !== 'string') {
    throw badRequest(`Expected "operationName" param to be a string, but given ${describe(operationName)}.`);
  }
  for (const name of ['documentId', 'doc_id']) {
    const id = params[name];
    if (id != null && (typeof id !== 'string' || id === '')) throw badRequest(`Expected "${name}" param to be a non-empty string, but given ${describe(id)}.`);
  }
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === '') return 'an empty string';
  return typeof value;
}
