/**
 * The router's own error codes (kernel, CLI and SDK subpaths), by the
 * section of docs/errors.md that lists them. Plugins declare theirs beside
 * their code (`plugins/<name>/errors.ts`); this list holds the response
 * cache's two until that plugin declares them itself.
 */
import type { ErrorSpec } from './error-catalogue.js';

/** A request error's status: GraphQL over HTTP answers `application/json`-only clients with 200. */
const REQUEST_ERROR_STATUS = '400 (200 for `application/json` clients)';

const request = {
  BAD_REQUEST: {
    status: 400,
    statusText: REQUEST_ERROR_STATUS,
    description:
      'The request is not a GraphQL request: no `query`, malformed JSON, wrong content type; `variables` or `extensions` that are not valid JSON (GET parameters or a form body) or not JSON objects; `operationName`, `documentId` or `doc_id` that are not strings (or an empty id); a batch entry that is not an operation (that entry only); a malformed multipart `map`; a `Host` header no URL can hold; a request nested too deeply to be read; a batch of more operations than `limits.max_batch_size` (413); a body that does not decompress with its `Content-Encoding`; a body compressed with a coding other than `gzip`, `deflate` or `br`, compressed twice, or in a charset other than UTF-8 (415).',
    solution: 'Send `{"query": "..."}` as JSON with `Content-Type: application/json`, or a GET with `?query=` (`variables` and `extensions` as URL-encoded JSON objects).',
  },
  GRAPHQL_PARSE_FAILED: {
    status: 400,
    statusText: REQUEST_ERROR_STATUS,
    description: 'The operation text is not valid GraphQL syntax.',
    solution: 'Fix the syntax at the reported location.',
  },
  GRAPHQL_VALIDATION_FAILED: {
    status: 400,
    statusText: REQUEST_ERROR_STATUS,
    description:
      "The operation does not validate against the graph's schema (unknown field, wrong argument, introspection while it is disabled, a mutation or subscription on a graph without that root type).",
    solution: 'Fix the operation; check the schema in the playground.',
  },
  BAD_USER_INPUT: {
    status: 400,
    statusText: REQUEST_ERROR_STATUS,
    description:
      'A variable is missing or has a value of the wrong type, or its value nests lists and objects more than 256 levels deep or holds a number too large for JSON (beyond ±1.8e308, such as 1e400, which JSON would turn into null) or an integer past 2^53 that JSON would round, anywhere but an `ID` (which keeps its digits) or a `Float`, or it is an explicit null where `@skip(if:)`/`@include(if:)` reads it.',
    solution: 'Send every required variable with a value of its declared type.',
  },
  OPERATION_NOT_FOUND: {
    status: 400,
    statusText: REQUEST_ERROR_STATUS,
    description: '`operationName` names no operation in the document, or the document holds several operations and none was named.',
    solution: "Send the name of one of the document's operations.",
  },
  METHOD_NOT_ALLOWED: { status: 405, description: 'A mutation was sent with GET.', solution: 'Send mutations with POST.' },
  REQUEST_TOO_LARGE: {
    status: 413,
    description: 'The body is larger than `limits.max_request_body`.',
    solution: 'Send a smaller operation, or raise the limit.',
  },
  MAX_DEPTH_EXCEEDED: {
    status: 400,
    description: 'The operation nests fields deeper than `limits.max_depth`.',
    solution: 'Flatten the operation, or raise the limit.',
  },
  MAX_ALIASES_EXCEEDED: {
    status: 400,
    description: 'The operation uses more aliases than `limits.max_aliases`.',
    solution: 'Use fewer aliases, or raise the limit.',
  },
  MAX_TOKENS_EXCEEDED: {
    status: 400,
    description: 'The operation has more tokens than `limits.max_tokens` (comments count as tokens).',
    solution: 'Send a shorter operation, or raise the limit.',
  },
  MAX_FIELDS_EXCEEDED: {
    status: 400,
    description: "The operation selects more fields than `limits.max_fields` once its fragments are expanded (each spread counts its fragment's fields again).",
    solution: 'Select fewer fields or reuse fragments less, or raise the limit.',
  },
  CSRF_PREVENTED: {
    status: 400,
    description:
      'A POST a browser can send cross-site without a preflight (form, multipart or `text/plain` body, or no `Content-Type`) carried none of `csrf_prevention.required_headers`.',
    solution: 'Send JSON (`Content-Type: application/json`), or add one of the required headers (for example `GraphQL-Preflight: 1`).',
  },
  GRAPH_NOT_READY: {
    status: 503,
    description: 'No graph is loaded yet.',
    solution: "Wait for `/health/ready`; check the router's log for graph loading errors.",
    message: 'The router has no graph loaded yet.',
  },
  QUERY_PLANNING_FAILED: {
    status: 500,
    description: 'The router could not plan the operation over the supergraph (a supergraph the planner does not support).',
    solution: 'Report it with the supergraph and the operation (`switchyard plan`).',
  },
  PLUGIN_ERROR: {
    status: 500,
    description:
      'A plugin threw while handling the request, or a plugin is malformed (no name or setup, a name that is not kebab-case, a bad `errors` declaration); the log names the plugin.',
    solution: "Read the log line with the plugin's name; fix or disable the plugin.",
  },
  INTERNAL_SERVER_ERROR: {
    status: 500,
    description: 'An unexpected error; the log has details.',
    solution: 'Report it with the log line.',
    message: 'Internal server error.',
  },
} satisfies Record<string, ErrorSpec>;

const persistedQueries = {
  PERSISTED_QUERY_UNSUPPORTED_VERSION: {
    status: 400,
    description: '`extensions.persistedQuery.version` is not `1`, or `persistedQuery` is not an object.',
    solution: 'Send `{"persistedQuery": {"version": 1, "sha256Hash": "..."}}`.',
  },
  PERSISTED_QUERY_INVALID_HASH: {
    status: 400,
    description: '`extensions.persistedQuery.sha256Hash` is not 64 hexadecimal characters.',
    solution: 'Send the SHA-256 of the operation text, hex-encoded.',
  },
  PERSISTED_QUERY_HASH_MISMATCH: {
    status: 400,
    description: 'Text was sent with a hash, and the hash is not the SHA-256 of that text. Checked before any lookup.',
    solution: 'Hash the exact text you send (UTF-8 bytes), or send the hash alone.',
  },
  PERSISTED_QUERY_NOT_FOUND: {
    status: 200,
    statusText: '200, `Cache-Control: private, no-cache, must-revalidate`',
    description:
      'No registered operation (for that client, outside manifest mode) and no automatic persisted query has this hash. The message is `PersistedQueryNotFound`, as Apollo clients expect.',
    solution: 'Push the operation (`switchyard operations push`), wait for the next manifest poll, or send the text with the hash (APQ).',
    message: 'PersistedQueryNotFound',
  },
  PERSISTED_QUERY_NOT_SUPPORTED: {
    status: 400,
    statusText: REQUEST_ERROR_STATUS,
    description:
      'A hash was sent without text (`extensions.persistedQuery`) while neither `automatic_persisted_queries` nor `persisted_operations` is on. The message is `PersistedQueryNotSupported`, on which Apollo Client and urql turn automatic persisted queries off and send the text.',
    solution: 'Send the operation text, or turn on `automatic_persisted_queries` (or `persisted_operations` for registered operations).',
    message: 'PersistedQueryNotSupported',
  },
} satisfies Record<string, ErrorSpec>;

const PARTIAL_DATA = '200 with partial data';

const subgraph = {
  SUBGRAPH_REQUEST_FAILED: {
    statusText: PARTIAL_DATA,
    description: 'The subgraph could not be reached, reset the connection, or answered with a non-2xx status and no GraphQL body.',
    solution: 'Check that the subgraph runs at its routing URL.',
  },
  SUBGRAPH_INVALID_RESPONSE: {
    statusText: PARTIAL_DATA,
    description: 'The subgraph answered, but not with a GraphQL response the router can use (not JSON, `data` not an object, `_entities` of the wrong length, a body over 64 MiB).',
    solution: "Fix the subgraph's response.",
  },
  SUBGRAPH_TIMEOUT: {
    statusText: PARTIAL_DATA,
    description: 'The subgraph did not answer within `traffic_shaping` `request_timeout`.',
    solution: 'Make the subgraph faster, or raise its timeout.',
  },
  SUBGRAPH_CIRCUIT_OPEN: {
    statusText: PARTIAL_DATA,
    description:
      "The subgraph's circuit breaker is open (`traffic_shaping.*.circuit_breaker`): it failed `failure_threshold` times in a row, so the router stops calling it for `cooldown`.",
    solution: 'Fix the subgraph; calls resume by themselves after the cooldown.',
  },
} satisfies Record<string, ErrorSpec>;

const subscriptions = {
  SUBSCRIPTION_NOT_SUPPORTED: {
    status: 400,
    statusText: '400 over HTTP; a protocol `error` over WebSocket',
    description:
      'A subscription was sent as plain GraphQL over HTTP (an `Accept` asking for JSON, not `text/event-stream` or `multipart/mixed;subscriptionSpec="1.0"`), `subscriptions.enabled` is false, or the subscribed field\'s subgraph does not serve subscriptions over GraphQL (a gRPC subgraph), or a subscription carries uploaded files (a `multipart/form-data` request: no subgraph subscription protocol carries files).',
    solution:
      'Subscribe over WebSocket (`graphql-transport-ws` or `graphql-ws`), SSE (`Accept: text/event-stream`) or multipart on `/graphql` (docs/subscriptions.md), with `subscriptions.enabled` on; serve subscriptions from a GraphQL subgraph; upload files with a mutation.',
  },
  SUBSCRIPTION_LIMIT_EXCEEDED: {
    status: 429,
    statusText: '429 over SSE and multipart; a protocol `error` over WebSocket',
    description:
      'The connection already has `subscriptions.max_per_connection` active subscriptions, or the router `subscriptions.max_total` (WebSocket, SSE and multipart together).',
    solution: 'Complete subscriptions the client no longer needs, open another connection, or raise the limit.',
  },
  SUBSCRIPTION_UPSTREAM_FAILED: {
    statusText: 'in an event',
    description:
      "The subgraph's stream failed: it sent an `error` message (its errors in `extensions.errors`), its connection could not be opened or closed before `complete`, or (SSE) it answered other than `200 text/event-stream` or sent an event that is not a JSON result. The subscription ends; `extensions.serviceName` names the subgraph.",
    solution: "Check the subgraph's subscription server at its `subscription.url` (default: the routing URL, as `ws://` for `protocol: ws`).",
  },
  SUBSCRIPTION_CLIENT_TOO_SLOW: {
    statusText: 'in an event (WebSocket: close code 1008)',
    description:
      'The client read its subscription stream too slowly: while its socket send buffer was full, more than `subscriptions.max_queued_bytes` were queued for it (events not yet sent plus that buffer). An SSE or multipart stream ends with this error; a WebSocket connection is closed with 1008. Other clients of the same subgraph subscription keep receiving.',
    solution: 'Read events as fast as they come (or subscribe to fewer or smaller ones), or raise `subscriptions.max_queued_bytes`.',
  },
  SUBSCRIPTION_INVALIDATED: {
    statusText: 'in an event',
    description:
      "A hot reload loaded a graph that cannot serve this running subscription: its operation no longer validates, it plans to another subgraph or subgraph operation, or its subgraph's subscription endpoint (URL, protocol) changed. The message says which. Subscriptions the new graph serves keep running.",
    solution: 'Subscribe again (the new subscription runs on the new graph), changing the operation if it no longer validates.',
  },
} satisfies Record<string, ErrorSpec>;

const startup = {
  CONFIG_INVALID: {
    description: "The config file, an environment variable or a plugin's options are invalid; each line names the key path (and the variable or plugin).",
    solution: 'Fix the named key.',
  },
  SUPERGRAPH_INVALID: {
    description:
      'The graph file is not a valid execution config or Federation v2 supergraph, or names subgraphs without routing data. On hot reload the previous graph stays in service.',
    solution: 'Recompose with `switchyard compose`, or fix the file.',
  },
  COMPOSITION_FAILED: {
    description: '`switchyard compose` could not load a subgraph schema or the schemas do not compose.',
    solution: 'Fix the reported schema problems.',
  },
  PLUGIN_DUPLICATE: {
    description:
      'Two plugins share a name, two claim the same subgraph transport kind, a config section is declared twice, or two plugins declare one error code with different meanings.',
    solution: "Register each plugin once; give a plugin's own error codes a prefix of its own.",
  },
  PLUGIN_DEPENDENCY_MISSING: {
    description: 'A plugin depends on another that is not registered before it.',
    solution: 'Register the dependency first (the config file does this for built-ins).',
  },
  GRPC_GENERATION_FAILED: {
    description: '`switchyard grpc-service generate` could not generate the service: a bad package name, a schema the generator refuses, an unreadable lock file.',
    solution: 'Fix the reported problem (the message names the file and the reason).',
  },
} satisfies Record<string, ErrorSpec>;

/** The response cache's startup errors (plugins/response-cache). */
const responseCache = {
  RESPONSE_CACHE_STORE_UNAVAILABLE: {
    description:
      'The shared store (`storage_providers.sharedstore` item named by `response_cache.storage.provider_id`) could not be reached at startup, so its version could not be checked.',
    solution: "Start Redis, or fix the item's `urls` (and `cluster_enabled`).",
  },
  RESPONSE_CACHE_STORE_UNSUPPORTED: {
    description: 'The shared store runs a Redis older than 7.0 (the message names the version found).',
    solution: 'Upgrade Redis to 7.0 or newer, or use `storage.provider: memory`.',
  },
} satisfies Record<string, ErrorSpec>;

const connect = {
  CONNECT_CONTRACT_INVALID: {
    description:
      "A contract cannot be generated or served: an operation file that is anonymous, not PascalCase, aliases a root field, holds several operations or a subscription; a proto without an operation for one of its RPCs (or the reverse); a query not marked `NO_SIDE_EFFECTS`; two contracts declaring the same service; an unreadable `connect_rpc.services.path`. At startup the router does not start; on a hot reload the contract's previous version stays in service and the problem is logged.",
    solution: 'Fix the file the message names, then regenerate the contract: `switchyard grpc-service generate -i <schema> -o <dir> --connect-contract <contract folder>`.',
  },
} satisfies Record<string, ErrorSpec>;

/** The router's codes by docs/errors.md section (`<!-- errors:begin <section> -->`). */
export const kernelErrorSections = {
  request,
  'persisted-queries': persistedQueries,
  subgraph,
  subscriptions,
  startup,
  'response-cache': responseCache,
  connect,
} as const;

/** Every code the router itself raises. */
export const kernelErrors = { ...request, ...persistedQueries, ...subgraph, ...subscriptions, ...startup, ...responseCache, ...connect };
