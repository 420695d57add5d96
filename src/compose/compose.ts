/**
 * Composition: compose file -> each subgraph's SDL -> Federation v2 supergraph
 * (@theguild/federation-composition). gRPC subgraphs also bring their proto and
 * mapping, which the execution config embeds.
 */
import { readFile } from 'node:fs/promises';
import type { ServiceDefinition } from '@theguild/federation-composition';
import { GraphQLError, parse, type DocumentNode } from 'graphql';
import { RouterError } from '../kernel/errors.js';
import { composeServices } from '../kernel/graph/compose-services.js';
import type { SubgraphRecord, SubscriptionSettings } from '../kernel/graph/execution-config.js';
import { readComposeFile, type ComposeSubgraph } from './compose-file.js';
import { loadGrpcSubgraph } from './grpc-subgraph.js';
import { introspectSubgraph } from './introspect.js';
import { stripUrlCredentials } from '../kernel/url-credentials.js';

/** The result of a successful composition. */
export interface ComposedGraph {
  /** The supergraph SDL (join spec), with each subgraph's routing URL in `@join__graph(url:)`. */
  supergraphSdl: string;
  /** The subgraphs, in compose file order. */
  subgraphs: SubgraphRecord[];
}

/** Options of `composeGraph`. */
export interface ComposeGraphOptions {
  /** Timeout of each introspection request in milliseconds; default 10 000. */
  introspectionTimeoutMs?: number;
}

/** One composition error as the library reports it. */
export interface CompositionProblem {
  /** The library's error code, e.g. `FIELD_TYPE_MISMATCH`; `COMPOSITION_ERROR` when it gives none. */
  code: string;
  /** The library's message. */
  message: string;
}

function failed(message: string, extensions?: Record<string, unknown>): RouterError {
  return new RouterError('COMPOSITION_FAILED', message, { extensions });
}

async function readSchemaFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const missing = error instanceof Error && 'code' in error && error.code === 'ENOENT';
    throw new Error(missing ? `schema file not found: ${file}` : `cannot read ${file}: ${String(error)}`, { cause: error });
  }
}

async function loadSubgraph(subgraph: ComposeSubgraph, options: ComposeGraphOptions): Promise<SubgraphSdl & { origin: string }> {
  const base = { name: subgraph.name, url: subgraph.routingUrl, ...(subgraph.subscription ? { subscription: subgraph.subscription } : {}) };
  switch (subgraph.kind) {
    case 'schema':
      return { ...base, sdl: await readSchemaFile(subgraph.schemaFile), origin: subgraph.schemaFile };
    case 'introspection': {
      const sdl = await introspectSubgraph(subgraph.introspectionUrl, {
        headers: subgraph.headers,
        timeoutMs: options.introspectionTimeoutMs,
      });
      return { ...base, sdl, origin: stripUrlCredentials(subgraph.introspectionUrl) };
    }
    case 'grpc': {
      const { sdl, proto, mapping } = await loadGrpcSubgraph(subgraph);
      return { ...base, sdl, origin: subgraph.schemaFile, grpc: { proto, mapping } };
    }
  }
}

function parseSdl(sdl: string, origin: string): DocumentNode {
  try {
    return parse(sdl);
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    const at = error.locations?.[0];
    const where = at ? `${origin}:${at.line}:${at.column}` : origin;
    throw new Error(`${where}: ${error.message}`, { cause: error });
  }
}

async function loadService(subgraph: ComposeSubgraph, options: ComposeGraphOptions): Promise<LoadedService> {
  try {
    const loaded = await loadSubgraph(subgraph, options);
    return { definition: { name: loaded.name, url: loaded.url, typeDefs: parseSdl(loaded.sdl, loaded.origin) }, subgraph: loaded };
  } catch (error) {
    throw new Error(`subgraph "${subgraph.name}": ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** Formats composition problems as `CODE: message`, one per line. */
export function formatCompositionProblems(problems: readonly CompositionProblem[]): string {
  return problems.map(({ code, message }) => `${code}: ${message}`).join('\n');
}

function problemOf(error: GraphQLError): CompositionProblem {
  const code = error.extensions?.code;
  return { code: typeof code === 'string' ? code : 'COMPOSITION_ERROR', message: error.message };
}

/**
 * Reads `router.compose.yaml`, loads every subgraph's SDL (files, or running
 * subgraphs over HTTP, in parallel) and composes them. Throws `RouterError`:
 * `CONFIG_INVALID` for a bad compose file, `COMPOSITION_FAILED` when a schema
 * cannot be loaded or the subgraphs do not compose; its message has one line
 * per problem and, for composition errors, `extensions.problems` lists them.
 */
export async function composeGraph(composeFilePath: string, options: ComposeGraphOptions = {}): Promise<ComposedGraph> {
  const file = await readComposeFile(composeFilePath);
  const loaded = await Promise.allSettled(file.subgraphs.map((subgraph) => loadService(subgraph, options)));
  const loadErrors = loaded.flatMap((result) => (result.status === 'rejected' ? [result.reason] : []));
  if (loadErrors.length > 0) {
    const lines = loadErrors.map((error: unknown) => (error instanceof Error ? error.message : String(error)));
    throw failed([`cannot compose ${file.path}:`, ...lines].join('\n'));
  }
  const services = loaded.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  return composeServiceDefinitions(services, file.path);
}

/** One subgraph's SDL with its name and routing URL, for `composeSubgraphs`. */
export interface SubgraphSdl {
  readonly name: string;
  /** Routing URL: http(s) for GraphQL subgraphs, a gRPC target (`dns:///host:port`) with `grpc`. */
  readonly url: string;
  readonly sdl: string;
  /** Set for a gRPC service: its generated `service.proto` text and parsed `mapping.json`. Default: none (GraphQL over HTTP). */
  readonly grpc?: { readonly proto: string; readonly mapping: Record<string, unknown> };
  /** How the subgraph serves subscriptions (compose file's `subscription`). Default: none. */
  readonly subscription?: SubscriptionSettings;
}

/** A subgraph ready to compose, with what its execution config record needs. */
interface LoadedService {
  readonly definition: ServiceDefinition;
  readonly subgraph: SubgraphSdl;
}

/**
 * Composes subgraph SDLs given in code (the testing kit and examples use it).
 * Throws `COMPOSITION_FAILED` with one line per problem.
 */
export function composeSubgraphs(subgraphs: readonly SubgraphSdl[], origin = 'subgraphs'): ComposedGraph {
  const services = subgraphs.map((s) => ({ definition: { name: s.name, url: s.url, typeDefs: parseSdl(s.sdl, s.name) }, subgraph: s }));
  return composeServiceDefinitions(services, origin);
}

function recordOf({ name, url, sdl, grpc, subscription }: SubgraphSdl): SubgraphRecord {
  if (grpc) return { kind: 'grpc', name, url, sdl, proto: grpc.proto, mapping: grpc.mapping };
  return subscription ? { kind: 'graphql', name, url, subscription } : { kind: 'graphql', name, url };
}

function composeServiceDefinitions(loaded: readonly LoadedService[], origin: string): ComposedGraph {
  const result = composeServices(loaded.map((service) => service.definition));
  if (result.errors) {
    const problems = result.errors.map(problemOf);
    const count = `${problems.length} error${problems.length === 1 ? '' : 's'}`;
    throw failed(`composition of ${origin} failed with ${count}:\n${formatCompositionProblems(problems)}`, { problems });
  }
  const subgraphs = loaded.map((service) => recordOf(service.subgraph));
  return { supergraphSdl: result.supergraphSdl, subgraphs };
}
