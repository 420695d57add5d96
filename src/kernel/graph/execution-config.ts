/**
 * The graph a router serves, read from `execution_config.file.path`: our
 * versioned execution config (`router.execution.config.json`), the execution
 * config Cosmo's `wgc router compose` writes (cosmo-execution-config.ts), or a
 * plain Federation v2 supergraph SDL. Format reference: docs/execution-config.md.
 */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GraphQLError, Kind, buildASTSchema, parse, validateSchema, type ConstDirectiveNode, type DocumentNode, type EnumValueDefinitionNode } from 'graphql';
import { RouterError } from '../errors.js';
import { fetchRemoteText, type RemoteText } from '../remote-text.js';
import { stripUrlCredentials } from '../url-credentials.js';
import { cosmoGraphSource, isCosmoExecutionConfig } from './cosmo-execution-config.js';

/** The only execution config version this router reads and writes. */
export const EXECUTION_CONFIG_VERSION = 1;

/**
 * How a subgraph serves subscriptions, in the terms of Cosmo's compose file
 * (`subscription: {url, protocol, websocket_subprotocol}`).
 */
export interface SubscriptionSettings {
  /** Where subscriptions are sent (`ws(s)://` or `http(s)://`); Cosmo's default is the routing URL. */
  url: string;
  /** `ws` (WebSocket), `sse` (Server-Sent Events over GET) or `sse_post` (over POST). */
  protocol: 'ws' | 'sse' | 'sse_post';
  /** WebSocket subprotocol; `auto` negotiates. */
  websocketSubprotocol: 'auto' | 'graphql-ws' | 'graphql-transport-ws';
}

/** A subgraph served over GraphQL-over-HTTP. */
export interface GraphQLSubgraphRecord {
  /** Discriminator: this subgraph speaks GraphQL over HTTP. */
  kind: 'graphql';
  /** Subgraph name; equals a `@join__graph(name:)` of the supergraph. */
  name: string;
  /** Routing URL the router sends this subgraph's fetches to (http or https). */
  url: string;
  /** Subscription transport, when the file says (Cosmo's execution config always does). Default: none. */
  subscription?: SubscriptionSettings;
}

/**
 * A gRPC service federated as a subgraph (docs/grpc.md). Served by the `grpc`
 * plugin, which turns each fetch into RPCs described by `proto` and `mapping`.
 */
export interface GrpcSubgraphRecord {
  /** Discriminator: this subgraph is a gRPC service generated from a GraphQL schema. */
  kind: 'grpc';
  /** Subgraph name; equals a `@join__graph(name:)` of the supergraph. */
  name: string;
  /** gRPC target the router dials: `dns:///host:port`, `host:port`, `ipv4:...`, `ipv6:...` or `unix:...`. */
  url: string;
  /** The subgraph's GraphQL schema (SDL), the source the service was generated from. */
  sdl: string;
  /** `service.proto` text: the package, the service and its messages. */
  proto: string;
  /** `mapping.json`, parsed: root fields, entities and field names to RPCs and proto fields. */
  mapping: Record<string, unknown>;
}

/**
 * One subgraph of the graph, discriminated on `kind`. New kinds join this
 * union without changing the shape of the records already here.
 */
export type SubgraphRecord = GraphQLSubgraphRecord | GrpcSubgraphRecord;

/** The subgraph kinds this build can load. */
export type SubgraphKind = SubgraphRecord['kind'];

/** Facts about the composition that produced an execution config. */
export interface ComposeInfo {
  /** When the graph was composed, as an ISO 8601 timestamp; optional. */
  composedAt?: string;
}

/** `router.execution.config.json`, version 1. */
export interface ExecutionConfig {
  /** Format version; always `1` here. Any other value is refused. */
  version: typeof EXECUTION_CONFIG_VERSION;
  /** The composed supergraph (Federation v2 join spec) as SDL text. */
  supergraph: string;
  /** One record per `join__Graph` value of the supergraph: same names, none missing, none extra. */
  subgraphs: SubgraphRecord[];
  /** Composition metadata; optional when read, always written by `switchyard compose`. */
  compose?: ComposeInfo;
}

/** What the router loads: the supergraph and how to reach each subgraph. */
export interface GraphSource {
  /** The supergraph SDL text, as read. */
  supergraphSdl: string;
  /** Subgraphs in file order (execution config) or `join__Graph` order (SDL). */
  subgraphs: SubgraphRecord[];
  /** Where it came from: an absolute file path or the URL given. */
  origin: string;
}

/** One value of the supergraph's `join__Graph` enum. */
export interface JoinGraph {
  /** The enum value the supergraph's `@join__*` directives refer to, e.g. `ACCOUNTS`. */
  enumValue: string;
  /** The subgraph name from `@join__graph(name:)`, e.g. `accounts`. */
  name: string;
  /** The routing URL from `@join__graph(url:)`; may be empty. */
  url: string;
}

const SDL_EXTENSIONS = new Set(['.graphql', '.graphqls', '.gql']);
const JOIN_SPEC = /^https:\/\/specs\.apollo\.dev\/join\/v\d+\.\d+\/?$/;
const FEDERATION_SPEC = /^https:\/\/specs\.apollo\.dev\/federation\//;
const FETCH_TIMEOUT_MS = 30_000;

function invalid(message: string, cause?: unknown): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', message, { cause });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const GRPC_TARGET = /^(dns:(\/\/[^/]*\/)?|ipv4:|ipv6:)?\[?[A-Za-z0-9_.:-]*[A-Za-z0-9\]]:\d{1,5}$/;

/**
 * Whether a routing URL is a gRPC target the router can dial: `dns:///host:port`
 * (Cosmo's form), `dns:host:port`, `host:port`, `ipv4:addr:port`,
 * `ipv6:[addr]:port` or `unix:/path` (also `unix:///path`).
 */
export function isGrpcTarget(value: string): boolean {
  if (value.startsWith('unix:')) return value.length > 'unix:'.length;
  return GRPC_TARGET.test(value);
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function extensionOf(origin: string): string {
  const path = isHttpUrl(origin) ? new URL(origin).pathname : origin;
  return extname(path).toLowerCase();
}

function describeSyntaxError(error: unknown): string {
  if (!(error instanceof GraphQLError)) return error instanceof Error ? error.message : String(error);
  const at = error.locations?.[0];
  const reason = error.message.replace(/^Syntax Error: /, '');
  return at ? `syntax error at line ${at.line}, column ${at.column}: ${reason}` : `syntax error: ${reason}`;
}

function stringArgument(directive: ConstDirectiveNode, name: string): string | undefined {
  const argument = directive.arguments?.find((arg) => arg.name.value === name);
  return argument?.value.kind === Kind.STRING ? argument.value.value : undefined;
}

/** The `@link`-ed name of the join spec (`join` unless imported with `as:`), if linked. */
function joinSpecPrefix(document: DocumentNode): string | undefined {
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.SCHEMA_DEFINITION && definition.kind !== Kind.SCHEMA_EXTENSION) continue;
    for (const directive of definition.directives ?? []) {
      if (directive.name.value !== 'link') continue;
      const url = stringArgument(directive, 'url');
      if (url && JOIN_SPEC.test(url)) return stringArgument(directive, 'as') ?? 'join';
    }
  }
  return undefined;
}

function linksFederationSpec(document: DocumentNode): boolean {
  return document.definitions.some(
    (definition) =>
      (definition.kind === Kind.SCHEMA_DEFINITION || definition.kind === Kind.SCHEMA_EXTENSION) &&
      (definition.directives ?? []).some((d) => d.name.value === 'link' && FEDERATION_SPEC.test(stringArgument(d, 'url') ?? '')),
  );
}

function joinGraphOf(value: EnumValueDefinitionNode, prefix: string, origin: string): JoinGraph {
  const directive = value.directives?.find((d) => d.name.value === `${prefix}__graph`);
  const name = directive && stringArgument(directive, 'name');
  const url = directive && stringArgument(directive, 'url');
  if (!directive || name === undefined || url === undefined) {
    throw invalid(`${origin}: ${prefix}__Graph value ${value.name.value} has no @${prefix}__graph(name: "...", url: "...")`);
  }
  return { enumValue: value.name.value, name, url };
}

/**
 * The subgraphs a parsed supergraph declares in its `join__Graph` enum.
 * Throws `SUPERGRAPH_INVALID` when the document is not a Federation v2 join-spec supergraph.
 */
export function joinGraphsOf(document: DocumentNode, origin = 'supergraph'): JoinGraph[] {
  const prefix = joinSpecPrefix(document);
  if (prefix === undefined) {
    const hint = linksFederationSpec(document) ? '; this looks like a subgraph schema: compose subgraphs with `switchyard compose` first' : '';
    throw invalid(`${origin}: not a Federation v2 supergraph: no @link(url: "https://specs.apollo.dev/join/v0.x") on the schema${hint}`);
  }
  const enumName = `${prefix}__Graph`;
  const values = document.definitions.flatMap((definition) =>
    (definition.kind === Kind.ENUM_TYPE_DEFINITION || definition.kind === Kind.ENUM_TYPE_EXTENSION) && definition.name.value === enumName ? (definition.values ?? []) : [],
  );
  if (values.length === 0) {
    throw invalid(`${origin}: not a join-spec supergraph: no enum ${enumName} listing its subgraphs`);
  }
  const graphs = values.map((value) => joinGraphOf(value, prefix, origin));
  const seen = new Set<string>();
  for (const { name } of graphs) {
    if (seen.has(name)) throw invalid(`${origin}: subgraph name "${name}" appears twice in enum ${enumName}`);
    seen.add(name);
  }
  return graphs;
}

function parseSupergraph(sdl: string, origin: string, notSdlPrefix: string): DocumentNode {
  let document: DocumentNode;
  try {
    document = parse(sdl);
  } catch (error) {
    throw invalid(`${origin}: ${notSdlPrefix}${describeSyntaxError(error)}`, error);
  }
  const executable = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION || d.kind === Kind.FRAGMENT_DEFINITION);
  if (executable) {
    const line = executable.loc?.startToken.line;
    throw invalid(`${origin}: an operation or fragment${line ? ` at line ${line}` : ''} is not schema SDL; expected a supergraph`);
  }
  return document;
}

function assertValidSchema(document: DocumentNode, origin: string): void {
  let problems: readonly Error[];
  try {
    problems = validateSchema(buildASTSchema(document));
  } catch (error) {
    // buildASTSchema joins its SDL validation errors with blank lines.
    const message = error instanceof Error ? error.message.split(/\n\n+/).join('; ') : String(error);
    throw invalid(`${origin}: invalid supergraph schema: ${message}`, error);
  }
  if (problems.length > 0) {
    throw invalid(`${origin}: invalid supergraph schema: ${problems.map((p) => p.message).join('; ')}`);
  }
}

function loadSupergraph(sdl: string, origin: string, notSdlPrefix = 'supergraph SDL '): JoinGraph[] {
  const document = parseSupergraph(sdl, origin, notSdlPrefix);
  const graphs = joinGraphsOf(document, origin);
  assertValidSchema(document, origin);
  return graphs;
}

function subgraphsFromSdl(graphs: JoinGraph[], origin: string): SubgraphRecord[] {
  return graphs.map(({ name, url }) => {
    if (url === '') {
      throw invalid(`${origin}: subgraph "${name}" has no routing URL (its @join__graph url is empty); set routing_url in router.compose.yaml or use an execution config`);
    }
    if (!isHttpUrl(url)) {
      const hint = isGrpcTarget(url)
        ? ' (a gRPC subgraph needs its proto and mapping: serve the execution config written by `switchyard compose -o router.execution.config.json`)'
        : '';
      throw invalid(`${origin}: subgraph "${name}": routing URL "${stripUrlCredentials(url)}" is not an http(s) URL${hint}`);
    }
    return { kind: 'graphql', name, url };
  });
}

const KINDS = 'graphql, grpc';

function readGrpcRecord(value: Record<string, unknown>, name: string, subgraph: string): GrpcSubgraphRecord {
  const { url, sdl, proto, mapping } = value;
  if (typeof url !== 'string' || !isGrpcTarget(url)) {
    throw invalid(`${subgraph}: url: required, a gRPC target such as dns:///localhost:50051`);
  }
  if (typeof sdl !== 'string' || sdl.trim() === '') throw invalid(`${subgraph}: sdl: required, the subgraph's GraphQL schema`);
  if (typeof proto !== 'string' || proto.trim() === '') throw invalid(`${subgraph}: proto: required, the text of service.proto`);
  if (!isRecord(mapping) || typeof mapping.service !== 'string' || mapping.service === '') {
    throw invalid(`${subgraph}: mapping: required, the content of mapping.json (an object naming its "service")`);
  }
  return { kind: 'grpc', name, url, sdl, proto, mapping };
}

const PROTOCOLS: ReadonlyArray<SubscriptionSettings['protocol']> = ['ws', 'sse', 'sse_post'];
const SUBPROTOCOLS: ReadonlyArray<SubscriptionSettings['websocketSubprotocol']> = ['auto', 'graphql-ws', 'graphql-transport-ws'];

function readSubscription(value: unknown, subgraph: string): SubscriptionSettings {
  if (!isRecord(value)) throw invalid(`${subgraph}: subscription: expected an object {url, protocol, websocketSubprotocol}`);
  const { url, protocol = 'ws', websocketSubprotocol = 'auto' } = value;
  if (typeof url !== 'string' || !/^(wss?|https?):\/\//i.test(url)) throw invalid(`${subgraph}: subscription.url: required, a ws(s) or http(s) URL`);
  const knownProtocol = PROTOCOLS.find((candidate) => candidate === protocol);
  if (knownProtocol === undefined) throw invalid(`${subgraph}: subscription.protocol: expected one of ${PROTOCOLS.join(', ')}`);
  const knownSubprotocol = SUBPROTOCOLS.find((candidate) => candidate === websocketSubprotocol);
  if (knownSubprotocol === undefined) throw invalid(`${subgraph}: subscription.websocketSubprotocol: expected one of ${SUBPROTOCOLS.join(', ')}`);
  return { url, protocol: knownProtocol, websocketSubprotocol: knownSubprotocol };
}

function readSubgraphRecord(value: unknown, index: number, origin: string): SubgraphRecord {
  const at = `${origin}: subgraphs[${index}]`;
  if (!isRecord(value)) throw invalid(`${at}: expected an object {name, kind, ...}`);
  const { name, kind } = value;
  if (typeof name !== 'string' || name === '') throw invalid(`${at}.name: required, a non-empty string`);
  const subgraph = `${origin}: subgraph "${name}"`;
  if (typeof kind !== 'string') throw invalid(`${subgraph}: kind: required (supported kinds: ${KINDS})`);
  switch (kind) {
    case 'graphql': {
      const { url, subscription } = value;
      if (typeof url !== 'string' || !isHttpUrl(url)) {
        throw invalid(`${subgraph}: url: required, an http(s) URL such as http://127.0.0.1:4001/graphql`);
      }
      if (subscription === undefined) return { kind, name, url };
      return { kind, name, url, subscription: readSubscription(subscription, subgraph) };
    }
    case 'grpc':
      return readGrpcRecord(value, name, subgraph);
    default:
      throw invalid(`${subgraph}: unknown kind "${kind}" (supported kinds: ${KINDS})`);
  }
}

function parseExecutionConfig(json: unknown, origin: string): GraphSource {
  if (!isRecord(json)) throw invalid(`${origin}: an execution config must be a JSON object`);
  // Cosmo's execution config (`wgc router compose`), told apart by its `engineConfig`.
  if (isCosmoExecutionConfig(json)) return cosmoGraphSource(json, origin);
  const { version, supergraph, subgraphs, compose } = json;
  if (version === undefined) throw invalid(`${origin}: version: required (expected ${EXECUTION_CONFIG_VERSION})`);
  if (version !== EXECUTION_CONFIG_VERSION) {
    throw invalid(`${origin}: unsupported execution config version ${JSON.stringify(version)}; this router reads version ${EXECUTION_CONFIG_VERSION}`);
  }
  if (typeof supergraph !== 'string' || supergraph.trim() === '') {
    throw invalid(`${origin}: supergraph: required, the supergraph SDL as a string`);
  }
  if (!Array.isArray(subgraphs)) throw invalid(`${origin}: subgraphs: required, a list of subgraph records`);
  if (compose !== undefined) {
    if (!isRecord(compose)) throw invalid(`${origin}: compose: expected an object`);
    const { composedAt } = compose;
    if (composedAt !== undefined && (typeof composedAt !== 'string' || Number.isNaN(Date.parse(composedAt)))) {
      throw invalid(`${origin}: compose.composedAt: expected an ISO 8601 timestamp`);
    }
  }
  const records = subgraphs.map((value: unknown, index) => readSubgraphRecord(value, index, origin));
  const graphs = loadSupergraph(supergraph, `${origin} (supergraph)`);
  assertSameSubgraphs(records, graphs, origin);
  return { supergraphSdl: supergraph, subgraphs: records, origin };
}

function assertSameSubgraphs(records: SubgraphRecord[], graphs: JoinGraph[], origin: string): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const { name } of records) {
    if (seen.has(name)) problems.push(`subgraph "${name}" is listed twice`);
    seen.add(name);
  }
  const declared = new Set(graphs.map((graph) => graph.name));
  for (const name of seen) {
    if (!declared.has(name)) problems.push(`unknown subgraph "${name}" (not in the supergraph's join__Graph)`);
  }
  for (const name of declared) {
    if (!seen.has(name)) problems.push(`missing subgraph "${name}" (in the supergraph's join__Graph, not in subgraphs)`);
  }
  if (problems.length > 0) {
    throw invalid(`${origin}: subgraphs do not match the supergraph: ${problems.join('; ')}`);
  }
}

function looksLikeJson(text: string, origin: string): boolean {
  const extension = extensionOf(origin);
  if (extension === '.json') return true;
  if (SDL_EXTENSIONS.has(extension)) return false;
  return text.trimStart().startsWith('{');
}

/**
 * Parses an execution config (JSON) or a supergraph SDL from its text. Pure:
 * `origin` only names the source in errors and picks the format by extension
 * (`.json` or `.graphql`/`.graphqls`/`.gql`); otherwise text starting with `{`
 * is JSON and anything else SDL. Throws `RouterError` `SUPERGRAPH_INVALID`.
 */
export function parseGraphSource(text: string, origin: string): GraphSource {
  const content = text.replace(/^\uFEFF/, '');
  if (content.trim() === '') {
    throw invalid(`${origin}: empty; expected an execution config (JSON) or a supergraph SDL`);
  }
  if (looksLikeJson(content, origin)) {
    let json: unknown;
    try {
      json = JSON.parse(content);
    } catch (error) {
      throw invalid(`${origin}: not valid JSON: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    return parseExecutionConfig(json, origin);
  }
  const notSdlPrefix = SDL_EXTENSIONS.has(extensionOf(origin)) ? 'supergraph SDL ' : 'neither an execution config (JSON) nor a supergraph SDL: ';
  const graphs = loadSupergraph(content, origin, notSdlPrefix);
  return { supergraphSdl: content, subgraphs: subgraphsFromSdl(graphs, origin), origin };
}

function errorCode(error: unknown): string | undefined {
  return isRecord(error) && typeof error.code === 'string' ? error.code : undefined;
}

async function readFromFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT') throw invalid(`supergraph file not found: ${path}`, error);
    if (code === 'EISDIR') throw invalid(`${path} is a directory, not an execution config or supergraph file`, error);
    if (code === 'EACCES') throw invalid(`cannot read ${path}: permission denied`, error);
    throw invalid(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

/** Longest supergraph or execution config read from a URL (a local file has no cap). */
export const MAX_GRAPH_URL_BYTES = 256 * 1024 * 1024;

/** Deadline and size cap for a graph read from a URL; tests lower them. */
export interface GraphUrlLimits {
  /** Default 30 s, body included. */
  readonly timeoutMs?: number;
  /** Default `MAX_GRAPH_URL_BYTES` (256 MiB). */
  readonly maxBytes?: number;
}

/**
 * Fetches a graph; `shown` (the URL without userinfo) names it in errors.
 * Credentials in the URL go as HTTP Basic authorization.
 */
export async function readFromUrl(url: string, { timeoutMs = FETCH_TIMEOUT_MS, maxBytes = MAX_GRAPH_URL_BYTES }: GraphUrlLimits = {}): Promise<string> {
  const shown = stripUrlCredentials(url);
  let response: RemoteText;
  try {
    response = await fetchRemoteText(url, {
      headers: { accept: 'application/json, application/graphql, text/plain;q=0.9, */*;q=0.8' },
      timeoutMs,
      maxBytes,
    });
  } catch (error) {
    throw invalid(`could not fetch ${shown}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  if (!response.ok) {
    throw invalid(`could not fetch ${shown}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
  }
  return response.text;
}

/**
 * Reads the graph from a file path or an http(s) URL (`file:` URLs too).
 * Accepts an execution config or a plain supergraph SDL; see `parseGraphSource`.
 */
export async function readGraphSource(pathOrUrl: string): Promise<GraphSource> {
  if (/^https?:\/\//i.test(pathOrUrl)) return parseGraphSource(await readFromUrl(pathOrUrl), stripUrlCredentials(pathOrUrl));
  const path = pathOrUrl.startsWith('file:') ? fileURLToPath(pathOrUrl) : resolve(pathOrUrl);
  return parseGraphSource(await readFromFile(path), path);
}
