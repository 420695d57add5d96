import type { HeaderRule, HeadersConfig } from '../config/core-schema.js';

/** Headers that describe one hop and must never be copied to a subgraph. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'accept',
  'accept-encoding',
]);

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
    for (const apply of compiled) apply(clientHeaders, out);
    return out;
  };
}

type CompiledRule = (client: Readonly<Record<string, string>>, out: Record<string, string>) => void;

function selector(rule: { named?: string | undefined; matching?: string | undefined }): (name: string) => boolean {
  if (rule.named !== undefined) {
    const named = rule.named.toLowerCase();
    return (name) => name === named;
  }
  const pattern = new RegExp(rule.matching ?? '^$', 'i');
  return (name) => pattern.test(name);
}

function compileRule(rule: HeaderRule): CompiledRule {
  switch (rule.op) {
    case 'set': {
      const name = rule.name.toLowerCase();
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
      return (client, out) => {
        let found = false;
        for (const [name, value] of Object.entries(client)) {
          if (HOP_BY_HOP.has(name) || !matches(name)) continue;
          out[rename ?? name] = value;
          found = true;
        }
        if (!found && named !== undefined && rule.default !== undefined) out[rename ?? named] = rule.default;
      };
    }
  }
}
