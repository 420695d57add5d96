/**
 * The OpenAPI 3.1 document of a contract: every RPC as the Connect protocol
 * serves it with JSON, `POST /<package>.<Service>/<Method>` for all and
 * `GET` with `connect`, `encoding` and `message` for queries, the
 * `Connect-Protocol-Version` header and the Connect error body. Written for
 * API tools to import (docs/connect.md).
 */
import type { DescMethod, DescService } from '@bufbuild/protobuf';
import { MethodOptions_IdempotencyLevel } from '@bufbuild/protobuf/wkt';
import { messageComponents, schemaRef, type Comments, type JsonSchema } from './openapi-schemas.js';

/** Options of `openApiDocument`. */
export interface OpenApiOptions {
  /** Comments of messages and fields (descriptions). Default: none. */
  readonly comments?: Comments;
  /** GraphQL text of each operation, by RPC name, shown in the method's description. Default: none. */
  readonly operations?: ReadonlyMap<string, string>;
  /** Base URL in `servers`. Default: `http://localhost:5026` (the default `connect_rpc.server.listen_addr`). */
  readonly serverUrl?: string;
}

/** The Connect error codes, in the order of the protocol's table. */
export const CONNECT_CODES = [
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
] as const;

/** Header carrying the GraphQL errors of a failed call (Cosmo's error metadata name). */
export const GRAPHQL_ERRORS_HEADER = 'GraphQL-Errors';

const ERROR_SCHEMA = 'connect.error';
const ERROR_DETAIL_SCHEMA = 'connect.error_details.Any';

const CONNECT_SCHEMAS: Record<string, JsonSchema> = {
  [ERROR_SCHEMA]: {
    title: 'Connect error',
    description: 'The body of every error answer (Connect protocol). The HTTP status follows the code: see docs/connect.md.',
    type: 'object',
    properties: {
      code: { type: 'string', enum: [...CONNECT_CODES], description: 'The error code.' },
      message: { type: 'string', description: 'A message for developers.' },
      details: {
        type: 'array',
        items: { $ref: `#/components/schemas/${ERROR_DETAIL_SCHEMA}` },
        description: 'For GraphQL errors, one `google.protobuf.Struct` per GraphQL error.',
      },
    },
    additionalProperties: true,
  },
  [ERROR_DETAIL_SCHEMA]: {
    title: 'Connect error detail',
    description: 'A protobuf message: its type, its binary form in base64, and its JSON form in `debug`.',
    type: 'object',
    properties: {
      type: { type: 'string', description: 'Full name of the message type, e.g. `google.protobuf.Struct`.' },
      value: { type: 'string', contentEncoding: 'base64', description: 'The message in the protobuf binary encoding.' },
      debug: { description: 'The message in JSON, for people reading the error (here: the GraphQL error).' },
    },
    additionalProperties: true,
  },
};

const PARAMETERS: Record<string, JsonSchema> = {
  'connect-protocol-version': {
    name: 'Connect-Protocol-Version',
    in: 'header',
    required: true,
    description: 'Connect protocol version; requests without it are refused with `invalid_argument`.',
    schema: { type: 'string', const: '1' },
  },
  'connect-timeout-ms': {
    name: 'Connect-Timeout-Ms',
    in: 'header',
    required: false,
    description: 'Deadline of the call in milliseconds; past it the call ends with `deadline_exceeded`.',
    schema: { type: 'integer', minimum: 1 },
  },
  connect: {
    name: 'connect',
    in: 'query',
    required: true,
    description: 'Connect protocol version of a GET request.',
    schema: { type: 'string', const: 'v1' },
  },
  encoding: {
    name: 'encoding',
    in: 'query',
    required: true,
    description: 'Encoding of `message`.',
    schema: { type: 'string', const: 'json' },
  },
};

const ERROR_RESPONSE = {
  description:
    'A Connect error: the status follows the code (invalid_argument 400, not_found 404, resource_exhausted 429, unknown and internal 500, unimplemented 501, unavailable 503, deadline_exceeded 504).',
  headers: {
    'Error-Classification': { description: 'When GraphQL errors failed the call: CRITICAL (no data) or PARTIAL (data and errors).', schema: { type: 'string' } },
    [GRAPHQL_ERRORS_HEADER]: { description: 'When GraphQL errors failed the call: the errors, as a JSON array.', schema: { type: 'string' } },
    'GraphQL-Partial-Data': { description: 'With PARTIAL: the GraphQL data, as JSON.', schema: { type: 'string' } },
  },
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
};

function isQuery(method: DescMethod): boolean {
  return method.idempotency === MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS;
}

function description(method: DescMethod, operations: ReadonlyMap<string, string> | undefined): string {
  const kind = isQuery(method) ? 'query' : 'mutation';
  const text = operations?.get(method.name);
  const lead = `Runs the GraphQL ${kind} \`${method.name}\` on the graph and answers with its result.`;
  return text === undefined ? lead : `${lead}\n\n\`\`\`graphql\n${text.trim()}\n\`\`\``;
}

function success(method: DescMethod, withCacheControl: boolean): JsonSchema {
  const headers: Record<string, JsonSchema> = {};
  if (withCacheControl) {
    headers['Cache-Control'] = {
      description: 'How long caches (CDNs, browsers) may keep this answer, from the Cache-Control of the subgraph answers when the response cache knows them.',
      schema: { type: 'string' },
    };
  }
  return {
    description: 'The operation result, as the response message in JSON.',
    headers,
    content: { 'application/json': { schema: schemaRef(method.output) } },
  };
}

function postOperation(service: DescService, method: DescMethod, options: OpenApiOptions): JsonSchema {
  return {
    tags: [service.typeName],
    summary: method.name,
    description: description(method, options.operations),
    operationId: `${service.typeName}.${method.name}`,
    parameters: [{ $ref: '#/components/parameters/connect-protocol-version' }, { $ref: '#/components/parameters/connect-timeout-ms' }],
    requestBody: {
      required: true,
      description: 'The operation arguments (`{}` when there are none).',
      content: { 'application/json': { schema: schemaRef(method.input) } },
    },
    responses: { '200': success(method, false), default: ERROR_RESPONSE },
  };
}

function getOperation(service: DescService, method: DescMethod, options: OpenApiOptions): JsonSchema {
  return {
    tags: [service.typeName],
    summary: `${method.name} (GET)`,
    description: `${description(method, options.operations)}\n\nThe GET form: cacheable by CDNs and browsers.`,
    operationId: `${service.typeName}.${method.name}.get`,
    parameters: [
      { $ref: '#/components/parameters/connect' },
      { $ref: '#/components/parameters/encoding' },
      {
        name: 'message',
        in: 'query',
        required: true,
        description: 'The operation arguments as URL-encoded JSON (`{}` when there are none).',
        content: { 'application/json': { schema: schemaRef(method.input) } },
      },
      { $ref: '#/components/parameters/connect-timeout-ms' },
    ],
    responses: { '200': success(method, true), default: ERROR_RESPONSE },
  };
}

/** Builds the OpenAPI 3.1 document of a contract's service. */
export function openApiDocument(service: DescService, options: OpenApiOptions = {}): Record<string, unknown> {
  const paths: Record<string, JsonSchema> = {};
  for (const method of service.methods) {
    paths[`/${service.typeName}/${method.name}`] = isQuery(method)
      ? { get: getOperation(service, method, options), post: postOperation(service, method, options) }
      : { post: postOperation(service, method, options) };
  }
  const version = service.file.proto.package.split('.').pop() ?? 'v1';
  const messages = service.methods.flatMap((method) => [method.input, method.output]);
  return {
    openapi: '3.1.0',
    info: {
      title: service.typeName,
      version,
      description: `Connect endpoints of the ${service.typeName} contract: each RPC runs one GraphQL operation on the federated graph (Connect protocol, JSON encoding).`,
    },
    servers: [{ url: options.serverUrl ?? 'http://localhost:5026' }],
    tags: [{ name: service.typeName }],
    paths,
    components: {
      schemas: { ...messageComponents(messages, options.comments ?? new Map()), ...CONNECT_SCHEMAS },
      parameters: PARAMETERS,
    },
  };
}
