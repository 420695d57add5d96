/**
 * Cosmo's execution config: the JSON `wgc router compose` writes (and Cosmo's
 * CDN serves), read as a Switchyard graph. Recognised by shape: an object with
 * an `engineConfig` object (ours has `version: 1` and `supergraph`).
 *
 * Cosmo's file carries no join-spec supergraph: `engineConfig.graphqlSchema` is
 * the client schema without the `@join__*` directives a planner needs. What it
 * does carry is each subgraph's own SDL (`customGraphql.federation.serviceSdl`),
 * so the supergraph is composed here from those SDLs with the composition
 * library `switchyard compose` uses; the result equals what `switchyard compose`
 * writes for the same subgraphs. Format notes: docs/execution-config.md, "Cosmo's
 * execution config".
 */
import { composeServices } from './compose-services.js';
import { GraphQLError, parse, type DocumentNode } from 'graphql';
import { RouterError } from '../errors.js';
import type { GraphSource, GraphQLSubgraphRecord, GrpcSubgraphRecord, SubgraphRecord, SubscriptionSettings } from './execution-config.js';
import { stripUrlCredentials } from '../url-credentials.js';

/** Environment read for `ENV_CONFIGURATION_VARIABLE` values (Cosmo's `${VAR}` routing URLs). */
export type CosmoEnv = Readonly<Record<string, string | undefined>>;

function invalid(message: string, cause?: unknown): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', message, { cause });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether parsed JSON has the shape of Cosmo's execution config (`RouterConfig`). */
export function isCosmoExecutionConfig(json: unknown): boolean {
  return isRecord(json) && isRecord(json.engineConfig) && json.supergraph === undefined;
}

const SUBSCRIPTION_PROTOCOLS: Record<string, SubscriptionSettings['protocol']> = {
  GRAPHQL_SUBSCRIPTION_PROTOCOL_WS: 'ws',
  GRAPHQL_SUBSCRIPTION_PROTOCOL_SSE: 'sse',
  GRAPHQL_SUBSCRIPTION_PROTOCOL_SSE_POST: 'sse_post',
  0: 'ws',
  1: 'sse',
  2: 'sse_post',
};

const WEBSOCKET_SUBPROTOCOLS: Record<string, SubscriptionSettings['websocketSubprotocol']> = {
  GRAPHQL_WEBSOCKET_SUBPROTOCOL_AUTO: 'auto',
  GRAPHQL_WEBSOCKET_SUBPROTOCOL_WS: 'graphql-ws',
  GRAPHQL_WEBSOCKET_SUBPROTOCOL_TRANSPORT_WS: 'graphql-transport-ws',
  0: 'auto',
  1: 'graphql-ws',
  2: 'graphql-transport-ws',
};

/**
 * The value of a Cosmo `ConfigurationVariable`: static content, or an
 * environment variable (with its default). `undefined` when absent or empty.
 */
function variableValue(value: unknown, env: CosmoEnv, at: string): string | undefined {
  if (!isRecord(value)) return undefined;
  const kind = value.kind ?? 'STATIC_CONFIGURATION_VARIABLE';
  if (kind === 'STATIC_CONFIGURATION_VARIABLE' || kind === 0) {
    return typeof value.staticVariableContent === 'string' && value.staticVariableContent !== '' ? value.staticVariableContent : undefined;
  }
  if (kind === 'ENV_CONFIGURATION_VARIABLE' || kind === 1) {
    const name = value.environmentVariableName;
    if (typeof name !== 'string' || name === '') throw invalid(`${at}: an environment variable value without environmentVariableName`);
    const fromEnv = env[name];
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
    const fallback = value.environmentVariableDefaultValue;
    return typeof fallback === 'string' && fallback !== '' ? fallback : undefined;
  }
  throw invalid(`${at}: configuration variable kind ${JSON.stringify(kind)} is not supported (only static values and environment variables)`);
}

interface CosmoSubgraph {
  readonly id: string;
  readonly name: string;
  readonly routingUrl?: string;
}

function readSubgraphList(json: Record<string, unknown>, origin: string): Map<string, CosmoSubgraph> {
  const { subgraphs } = json;
  if (!Array.isArray(subgraphs)) throw invalid(`${origin}: subgraphs: required, the list of {id, name, routingUrl} wgc writes`);
  const byId = new Map<string, CosmoSubgraph>();
  subgraphs.forEach((value: unknown, index) => {
    const at = `${origin}: subgraphs[${index}]`;
    if (!isRecord(value)) throw invalid(`${at}: expected an object {id, name, routingUrl}`);
    const { id, name, routingUrl } = value;
    if (typeof id !== 'string' || id === '') throw invalid(`${at}.id: required, a non-empty string`);
    if (typeof name !== 'string' || name === '') throw invalid(`${at}.name: required, a non-empty string`);
    if (byId.has(id)) throw invalid(`${at}.id: "${id}" is used twice`);
    byId.set(id, { id, name, ...(typeof routingUrl === 'string' && routingUrl !== '' ? { routingUrl } : {}) });
  });
  return byId;
}

function subscriptionOf(value: unknown, fetchUrl: string, env: CosmoEnv, at: string): SubscriptionSettings | undefined {
  if (!isRecord(value) || value.enabled !== true) return undefined;
  const url = variableValue(value.url, env, `${at}.url`) ?? fetchUrl;
  const protocolName = value.protocol ?? (value.useSSE === true ? 'GRAPHQL_SUBSCRIPTION_PROTOCOL_SSE' : 'GRAPHQL_SUBSCRIPTION_PROTOCOL_WS');
  const protocol = SUBSCRIPTION_PROTOCOLS[String(protocolName)];
  if (protocol === undefined) throw invalid(`${at}.protocol: unknown subscription protocol ${JSON.stringify(protocolName)}`);
  const subprotocolName = value.websocketSubprotocol ?? 'GRAPHQL_WEBSOCKET_SUBPROTOCOL_AUTO';
  const websocketSubprotocol = WEBSOCKET_SUBPROTOCOLS[String(subprotocolName)];
  if (websocketSubprotocol === undefined) throw invalid(`${at}.websocketSubprotocol: unknown WebSocket subprotocol ${JSON.stringify(subprotocolName)}`);
  return { url, protocol, websocketSubprotocol };
}

function assertNoHeaders(fetch: Record<string, unknown>, at: string): void {
  const { header } = fetch;
  if (isRecord(header) && Object.keys(header).length > 0) {
    throw invalid(
      `${at}.header: static subgraph request headers in the execution config are not supported (${Object.keys(header).join(', ')}); set them with headers.subgraphs.<name>.request[] ({op: set, name, value}) in router.config.yaml`,
    );
  }
}

interface ConvertedDataSource {
  readonly record: SubgraphRecord;
  readonly sdl: string;
}

function convertDataSource(value: unknown, index: number, subgraphs: Map<string, CosmoSubgraph>, env: CosmoEnv, origin: string): ConvertedDataSource {
  const at = `${origin}: engineConfig.datasourceConfigurations[${index}]`;
  if (!isRecord(value)) throw invalid(`${at}: expected an object`);
  const { id, kind, customGraphql } = value;
  if (typeof id !== 'string' || id === '') throw invalid(`${at}.id: required, the id of an entry of subgraphs[]`);
  const subgraph = subgraphs.get(id);
  if (subgraph === undefined) throw invalid(`${at}.id: "${id}" names no entry of subgraphs[]`);
  const named = `${origin}: subgraph "${subgraph.name}"`;
  if (kind === 'PUBSUB' || kind === 2) {
    throw invalid(`${named}: an event-driven (EDFS: Kafka, NATS, Redis) data source; Switchyard does not serve event-driven subgraphs`);
  }
  if (kind !== 'GRAPHQL' && kind !== 1) {
    throw invalid(`${named}: data source kind ${JSON.stringify(kind ?? 'STATIC')} is not supported (only GRAPHQL)`);
  }
  if (!isRecord(customGraphql)) throw invalid(`${named}: customGraphql: required for a GRAPHQL data source`);
  const federation = customGraphql.federation;
  const sdl = isRecord(federation) && typeof federation.serviceSdl === 'string' ? federation.serviceSdl : '';
  if (sdl.trim() === '') {
    throw invalid(`${named}: customGraphql.federation.serviceSdl: required; the subgraph's SDL is what the supergraph is composed from`);
  }
  const fetch = isRecord(customGraphql.fetch) ? customGraphql.fetch : {};
  assertNoHeaders(fetch, `${named}: customGraphql.fetch`);
  const url = variableValue(fetch.url, env, `${named}: customGraphql.fetch.url`) ?? subgraph.routingUrl;
  const { grpc } = customGraphql;
  if (isRecord(grpc) && (grpc.mapping !== undefined || grpc.protoSchema !== undefined || grpc.plugin !== undefined)) {
    if (grpc.plugin !== undefined) {
      throw invalid(
        `${named}: a Cosmo router plugin (customGraphql.grpc.plugin); Switchyard cannot run Cosmo plugin binaries: serve the gRPC service yourself and compose it as a grpc subgraph (routing_url dns:///host:port)`,
      );
    }
    if (url === undefined) throw invalid(`${named}: no routing URL (customGraphql.fetch.url and subgraphs[].routingUrl are empty)`);
    const { mapping, protoSchema } = grpc;
    if (typeof protoSchema !== 'string' || protoSchema.trim() === '') throw invalid(`${named}: customGraphql.grpc.protoSchema: required, the text of service.proto`);
    if (!isRecord(mapping) || typeof mapping.service !== 'string' || mapping.service === '') {
      throw invalid(`${named}: customGraphql.grpc.mapping: required, the mapping (an object naming its "service")`);
    }
    const record: GrpcSubgraphRecord = { kind: 'grpc', name: subgraph.name, url, sdl, proto: protoSchema, mapping };
    return { record, sdl };
  }
  if (url === undefined) throw invalid(`${named}: no routing URL (customGraphql.fetch.url and subgraphs[].routingUrl are empty)`);
  if (!/^https?:\/\//i.test(url)) throw invalid(`${named}: routing URL "${stripUrlCredentials(url)}" is not an http(s) URL`);
  const subscription = subscriptionOf(customGraphql.subscription, url, env, `${named}: customGraphql.subscription`);
  const record: GraphQLSubgraphRecord = { kind: 'graphql', name: subgraph.name, url, ...(subscription ? { subscription } : {}) };
  return { record, sdl };
}

function parseSubgraphSdl(sdl: string, name: string, origin: string): DocumentNode {
  try {
    return parse(sdl);
  } catch (error) {
    const where = error instanceof GraphQLError && error.locations?.[0] ? ` at line ${error.locations[0].line}` : '';
    throw invalid(`${origin}: subgraph "${name}": its serviceSdl is not valid SDL${where}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
}

/**
 * Converts Cosmo's execution config (parsed JSON) into the graph the router
 * serves: subgraph records from `engineConfig.datasourceConfigurations[]` and
 * `subgraphs[]`, the supergraph composed from their SDLs. Throws
 * `SUPERGRAPH_INVALID` naming the subgraph and key for anything it cannot serve
 * (event-driven data sources, Cosmo plugins, feature flags, static headers).
 */
export function cosmoGraphSource(json: Record<string, unknown>, origin: string, env: CosmoEnv = process.env): GraphSource {
  const engineConfig = json.engineConfig as Record<string, unknown>;
  const flags = json.featureFlagConfigs;
  if (isRecord(flags) && isRecord(flags.configByFeatureFlagName) && Object.keys(flags.configByFeatureFlagName).length > 0) {
    const names = Object.keys(flags.configByFeatureFlagName).join(', ');
    throw invalid(`${origin}: featureFlagConfigs: feature flags (${names}) are not supported by Switchyard; compose without feature_flags`);
  }
  const subgraphs = readSubgraphList(json, origin);
  const { datasourceConfigurations } = engineConfig;
  if (!Array.isArray(datasourceConfigurations) || datasourceConfigurations.length === 0) {
    throw invalid(`${origin}: engineConfig.datasourceConfigurations: required, one entry per subgraph`);
  }
  const converted = datasourceConfigurations.map((value: unknown, index) => convertDataSource(value, index, subgraphs, env, origin));
  const names = new Set<string>();
  for (const { record } of converted) {
    if (names.has(record.name)) throw invalid(`${origin}: subgraph "${record.name}" has two data sources`);
    names.add(record.name);
  }
  const result = composeServices(converted.map(({ record, sdl }) => ({ name: record.name, url: record.url, typeDefs: parseSubgraphSdl(sdl, record.name, origin) })));
  if (result.errors) {
    const lines = result.errors.map((error) => `${typeof error.extensions?.code === 'string' ? error.extensions.code : 'COMPOSITION_ERROR'}: ${error.message}`);
    throw invalid(`${origin}: the subgraph SDLs of this Cosmo execution config do not compose:\n${lines.join('\n')}`);
  }
  return { supergraphSdl: result.supergraphSdl, subgraphs: converted.map(({ record }) => record), origin };
}
