/**
 * `cors.allow_headers` in our terms for a Cosmo file that leaves the key
 * out: config.go's default (Origin, Content-Length, Content-Type) and what
 * router.go's defaultCorsHeaders adds to any list (Authorization, client
 * name and version, trace context), less Cosmo's own `x-wg-*` headers.
 * Copied from Cosmo's source, not from ours: the tests compare the two.
 */
export const COSMO_DEFAULT_ALLOW_HEADERS = [
  'Origin',
  'Content-Length',
  'Content-Type',
  'Authorization',
  'Graphql-Client-Name',
  'Graphql-Client-Version',
  'Apollographql-Client-Name',
  'Apollographql-Client-Version',
  'Traceparent',
  'Tracestate',
];
