import type { HeaderRule, HeadersConfig } from '../config/core-schema.js';
import { compileHeaderNamePattern } from '../config/header-name-pattern.js';

/**
 * Headers no rule ever sends to a subgraph, whatever it names or matches
 * (compare Cosmo's `ignoredHeaders` and Apollo Router's reserved headers):
 * - hop-by-hop headers (RFC 9110 §7.6.1), which describe the client's
 *   connection to the router, and `proxy-connection`, their old
 *   non-standard cousin; also every header the client's `Connection`
 *   header names;
 * - what the router's HTTP client decides for its own request: target
 *   (`host`), body framing and encoding (`content-length`,
 *   `content-encoding`, `transfer-encoding`, `expect`: the router sends its
 *   whole body at once and its client refuses `Expect`, so a propagated
 *   `Expect: 100-continue` would fail every call), content negotiation
 *   (`content-type`, `accept*`);
 * - a WebSocket handshake's headers, which belong to the client's upgrade;
 * - response headers a client has no business sending on (`alt-svc`, `vary`),
 *   and `grpc-*`, reserved for the gRPC protocol's own metadata (a client's
 *   `grpc-timeout` is not the router's deadline), as Cosmo skips them.
 */
const NEVER_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
  'content-length',
  'content-encoding',
  'content-type',
  'accept',
  'accept-charset',
  'accept-encoding',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-protocol',
  'sec-websocket-extensions',
  'alt-svc',
  'vary',
]);

/** Whether a header (lower-case name) may never be sent to a subgraph; HTTP/2 pseudo-headers (`:path`) and `grpc-*` neither. */
export function neverForwarded(name: string): boolean {
  return NEVER_FORWARDED.has(name) || name.startsWith(':') || name.startsWith('grpc-');
}

/** Turns a client's headers into the headers sent to one subgraph. */
export type HeaderPropagation = (clientHeaders: Readonly<Record<string, string>>) => Readonly<Record<string, string>>;

/** Whether any `headers` rule exists (for any subgraph). */
export function hasHeaderRules(config: HeadersConfig): boolean {
  return config.all.request.length > 0 || Object.values(config.subgraphs).some((own) => (own?.request.length ?? 0) > 0);
}

/**
 * Compiles the `headers` rules (Cosmo's shape) for one subgraph: `all`
 * rules first, then the subgraph's own, in order. Undefined when no rule
 * applies to it (nothing is forwarded then).
 */
export function compileHeaderRules(config: HeadersConfig, subgraph: string): HeaderPropagation | undefined {
  const rules = [...config.all.request, ...(config.subgraphs[subgraph]?.request ?? [])];
  if (rules.length === 0) return undefined;
  const compiled = rules.map(compileRule);
  return function propagateHeaders(clientHeaders) {
    const out: Record<string, string> = {};
    const skip = skipped(clientHeaders);
    for (const apply of compiled) apply(clientHeaders, out, skip);
    return out;
  };
}

/** Which client headers are never copied: `NEVER_FORWARDED`, and those this client's `Connection` header names. */
function skipped(client: Readonly<Record<string, string>>): (name: string) => boolean {
  const connection = client.connection;
  if (connection === undefined) return neverForwarded;
  const named = new Set(connection.split(',').map((token) => token.trim().toLowerCase()));
  return (name) => neverForwarded(name) || named.has(name);
}

type CompiledRule = (client: Readonly<Record<string, string>>, out: Record<string, string>, skip: (name: string) => boolean) => void;

/** A rule that does nothing: one that would only send a header that is never sent. */
const NOTHING: CompiledRule = () => {};

function selector(rule: { named?: string | undefined; matching?: string | undefined }): (name: string) => boolean {
  if (rule.named !== undefined) {
    const named = rule.named.toLowerCase();
    return (name) => name === named;
  }
  const pattern = compileHeaderNamePattern(rule.matching ?? '^$');
  return (name) => pattern.test(name);
}

function compileRule(rule: HeaderRule): CompiledRule {
  switch (rule.op) {
    case 'set': {
      const name = rule.name.toLowerCase();
      if (neverForwarded(name)) return NOTHING;
      return (_client, out) => {
        out[name] = rule.value;
      };
    }
    case 'remove': {
      const matches = selector(rule);
      return (_client, out) => {
        for (const name of Object.keys(out)) if (matches(name)) delete out[name];
      };
    }
    case 'propagate': {
      const matches = selector(rule);
      const rename = rule.rename?.toLowerCase();
      const named = rule.named?.toLowerCase();
      const target = rename ?? named;
      if (target !== undefined && neverForwarded(target)) return NOTHING;
      return (client, out, skip) => {
        let found = false;
        for (const [name, value] of Object.entries(client)) {
          if (skip(name) || !matches(name)) continue;
          out[target ?? name] = value;
          found = true;
        }
        if (!found && named !== undefined && rule.default !== undefined) out[rename ?? named] = rule.default;
      };
    }
  }
}
