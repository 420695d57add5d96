/**
 * `router.compose.yaml`: the list of subgraphs to compose, in Cosmo's shape so a
 * file moves between `wgc router compose` and `switchyard compose`.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { YAMLParseError, parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { RouterError } from '../kernel/errors.js';
import { isGrpcTarget, type SubscriptionSettings } from '../kernel/graph/execution-config.js';

/** Fields every subgraph of a compose file has. */
interface ComposeSubgraphBase {
  /** Subgraph name, unique in the file; becomes the `join__Graph` name. */
  name: string;
  /** URL the router sends this subgraph's fetches to (`routing_url`). */
  routingUrl: string;
  /** `subscription: {url, protocol, websocket_subprotocol}`; the URL defaults to `routing_url`. Default: none (WebSocket at the routing URL). */
  subscription?: SubscriptionSettings;
}

/** A subgraph whose schema is read from a local SDL file (`schema: {file}`). */
export interface SchemaFileSubgraph extends ComposeSubgraphBase {
  /** Discriminator: the schema comes from a file. */
  kind: 'schema';
  /** Absolute path of the SDL file (relative paths resolve against the compose file's folder). */
  schemaFile: string;
}

/** A subgraph whose schema is read from the running subgraph (`introspection: {url, headers}`). */
export interface IntrospectionSubgraph extends ComposeSubgraphBase {
  /** Discriminator: the schema is fetched with `{ _service { sdl } }`. */
  kind: 'introspection';
  /** URL the introspection query is POSTed to; defaults to `routing_url`. */
  introspectionUrl: string;
  /** Extra request headers for the introspection request; default none. */
  headers: Record<string, string>;
}

/** A gRPC-backed subgraph (`grpc: {schema_file, proto_file, mapping_file}`); served by the grpc plugin. */
export interface GrpcSubgraph extends ComposeSubgraphBase {
  /** Discriminator: a gRPC service, not a GraphQL server. */
  kind: 'grpc';
  /** Absolute path of the GraphQL schema the service implements. */
  schemaFile: string;
  /** Absolute path of the generated `service.proto`. */
  protoFile: string;
  /** Absolute path of the generated `mapping.json`. */
  mappingFile: string;
}

/** One subgraph of a compose file, discriminated on where its schema comes from. */
export type ComposeSubgraph = SchemaFileSubgraph | IntrospectionSubgraph | GrpcSubgraph;

/** A validated `router.compose.yaml`. */
export interface ComposeFile {
  /** Absolute path of the compose file. */
  path: string;
  /** Subgraphs in file order. */
  subgraphs: ComposeSubgraph[];
}

/** Keys Cosmo's compose file knows that Switchyard does not (yet); named in the error instead of "unknown key". */
const COSMO_ONLY_KEYS: Readonly<Record<string, string>> = {
  plugin: 'Cosmo router plugins are not supported; use a grpc subgraph',
  feature_flags: 'feature flags are not supported by Switchyard yet',
  raw: 'only `{ _service { sdl } }` introspection is supported',
};

const nonEmpty = z.string().min(1, 'must not be empty');

/**
 * Subgraph names compose accepts: those Cosmo's registry accepts (letters,
 * digits and `_ - . @ /`, at most 100 characters) and `[A-Za-z_][A-Za-z0-9_-]*`. A name
 * travels into logs, errors, plans, metric labels and cache keys, so quotes,
 * backslashes, spaces, control and non-ASCII characters are refused here.
 * Supergraphs other tools composed load whatever their names.
 */
export const SUBGRAPH_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.@/-]{0,99}$/;

const subgraphName = nonEmpty.regex(SUBGRAPH_NAME, {
  error: 'must start with a letter, digit or _ and hold only letters, digits and _ - . @ / (at most 100 characters)',
});

const subgraphSchema = z
  .strictObject({
    name: subgraphName,
    routing_url: nonEmpty,
    schema: z.strictObject({ file: nonEmpty }).optional(),
    introspection: z.strictObject({ url: nonEmpty.optional(), headers: z.record(z.string(), z.string()).optional() }).optional(),
    grpc: z.strictObject({ schema_file: nonEmpty, proto_file: nonEmpty, mapping_file: nonEmpty }).optional(),
    subscription: z
      .strictObject({
        url: nonEmpty.optional(),
        protocol: z.enum(['ws', 'sse', 'sse_post']).optional(),
        websocket_subprotocol: z.enum(['auto', 'graphql-ws', 'graphql-transport-ws']).optional(),
      })
      .optional(),
  })
  .superRefine((subgraph, ctx) => {
    const sources = (['schema', 'introspection', 'grpc'] as const).filter((key) => subgraph[key] !== undefined);
    if (sources.length > 1) {
      ctx.addIssue({ code: 'custom', message: `set only one of schema, introspection or grpc (found ${sources.join(' and ')})` });
    }
    if (subgraph.grpc === undefined && !isHttpUrl(subgraph.routing_url)) {
      ctx.addIssue({ code: 'custom', path: ['routing_url'], message: 'must be an http(s) URL, e.g. http://localhost:4001/graphql' });
    }
    if (subgraph.grpc !== undefined && !isGrpcTarget(subgraph.routing_url)) {
      ctx.addIssue({ code: 'custom', path: ['routing_url'], message: 'must be a gRPC target for a grpc subgraph, e.g. dns:///localhost:50051' });
    }
    const url = subgraph.introspection?.url;
    if (url !== undefined && !isHttpUrl(url)) {
      ctx.addIssue({ code: 'custom', path: ['introspection', 'url'], message: 'must be an http(s) URL' });
    }
    const subscriptionUrl = subgraph.subscription?.url;
    if (subscriptionUrl !== undefined && !/^(wss?|https?):\/\//i.test(subscriptionUrl)) {
      ctx.addIssue({ code: 'custom', path: ['subscription', 'url'], message: 'must be a ws(s) or http(s) URL' });
    }
    if (subgraph.subscription !== undefined && subgraph.grpc !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['subscription'], message: 'a grpc subgraph serves no subscriptions' });
    }
  });

const composeFileSchema = z
  .strictObject({
    version: z.literal([1, '1'], { error: 'must be 1' }),
    subgraphs: z.array(subgraphSchema).min(1, 'list at least one subgraph'),
  })
  .superRefine(({ subgraphs }, ctx) => {
    const seen = new Set<string>();
    subgraphs.forEach(({ name }, index) => {
      if (seen.has(name)) ctx.addIssue({ code: 'custom', path: ['subgraphs', index, 'name'], message: `${quoteName(name)} is used twice; names must be unique` });
      seen.add(name);
    });
  });

type RawComposeFile = z.infer<typeof composeFileSchema>;
type RawSubgraph = z.infer<typeof subgraphSchema>;

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function invalid(message: string, cause?: unknown): RouterError {
  return new RouterError('CONFIG_INVALID', message, { cause });
}

/** A name as a quoted, printable-ASCII string, cut to 100 characters: a refused name may hold anything. */
function quoteName(name: string): string {
  const cut = name.length > 100 ? `${name.slice(0, 100)}...` : name;
  return JSON.stringify(cut).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `subgraphs[1] ("products").routing_url`: the issue path, with the subgraph's name where the input has one. */
function formatPath(path: ReadonlyArray<PropertyKey>, input: unknown): string {
  let text = '';
  let node: unknown = input;
  for (const key of path) {
    text += typeof key === 'number' ? `[${key}]` : `${text === '' ? '' : '.'}${String(key)}`;
    node = typeof node === 'object' && node !== null ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    const name = typeof node === 'object' && node !== null ? (node as Record<string, unknown>).name : undefined;
    if (typeof key === 'number' && typeof name === 'string') text += ` (${quoteName(name)})`;
  }
  return text === '' ? '(top level)' : text;
}

function describeIssue(issue: z.core.$ZodIssue, input: unknown): string[] {
  const at = formatPath(issue.path, input);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => {
      const where = at === '(top level)' ? key : `${at}.${key}`;
      const hint = COSMO_ONLY_KEYS[key];
      return `${where}: ${hint ? `not supported: ${hint}` : 'unknown key'}`;
    });
  }
  return [`${at}: ${issue.message}`];
}

/** Zod's messages, reworded where a user of the file reads them ("required" rather than "received undefined"). */
function errorMap(issue: z.core.$ZodRawIssue): string | undefined {
  if (issue.code === 'invalid_type') {
    return issue.input === undefined ? `required (${issue.expected})` : `expected ${issue.expected}`;
  }
  return undefined;
}

function toSubgraph(raw: RawSubgraph, folder: string): ComposeSubgraph {
  const base: ComposeSubgraphBase = { name: raw.name, routingUrl: raw.routing_url };
  if (raw.subscription) {
    const { url = raw.routing_url, protocol = 'ws', websocket_subprotocol = 'auto' } = raw.subscription;
    base.subscription = { url, protocol, websocketSubprotocol: websocket_subprotocol };
  }
  if (raw.schema) return { ...base, kind: 'schema', schemaFile: resolve(folder, raw.schema.file) };
  if (raw.grpc) {
    const { schema_file, proto_file, mapping_file } = raw.grpc;
    return {
      ...base,
      kind: 'grpc',
      schemaFile: resolve(folder, schema_file),
      protoFile: resolve(folder, proto_file),
      mappingFile: resolve(folder, mapping_file),
    };
  }
  // Neither schema nor grpc: introspect, as Cosmo does (the URL defaults to routing_url).
  const introspection = raw.introspection ?? {};
  return { ...base, kind: 'introspection', introspectionUrl: introspection.url ?? raw.routing_url, headers: introspection.headers ?? {} };
}

/**
 * Validates a compose file's text. `path` names the file in errors and is the
 * folder relative paths resolve against. Throws `CONFIG_INVALID` with one line
 * per problem (`<path>: <key path>: <reason>`).
 */
export function parseComposeFile(text: string, path: string): ComposeFile {
  const file = resolve(path);
  let input: unknown;
  try {
    input = parseYaml(text);
  } catch (error) {
    // The parser's message goes on with a code excerpt; its first line has the reason and position.
    const reason = error instanceof YAMLParseError ? error.message.split('\n')[0].replace(/:$/, '') : String(error);
    throw invalid(`${file}: invalid YAML: ${reason}`, error);
  }
  if (input === null || input === undefined) throw invalid(`${file}: the compose file is empty`);
  const result = composeFileSchema.safeParse(input, { error: errorMap });
  if (!result.success) {
    const lines = result.error.issues.flatMap((issue) => describeIssue(issue, input));
    throw invalid(lines.map((line) => `${file}: ${line}`).join('\n'), result.error);
  }
  const raw: RawComposeFile = result.data;
  return { path: file, subgraphs: raw.subgraphs.map((subgraph) => toSubgraph(subgraph, dirname(file))) };
}

/** Reads and validates a compose file; see `parseComposeFile`. */
export async function readComposeFile(path: string): Promise<ComposeFile> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT';
    throw invalid(missing ? `compose file not found: ${file}` : `cannot read ${file}: ${String(error)}`, error);
  }
  return parseComposeFile(text, file);
}
