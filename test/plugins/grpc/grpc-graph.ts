/**
 * A router over real subgraphs for the grpc plugin's tests: gRPC services
 * generated from their SDL (as `switchyard grpc-service generate` does) and
 * served by @grpc/grpc-js, next to HTTP subgraphs from the testing kit.
 */
import { useGrpc } from '../../../plugins/grpc/index.js';
import { generateService, type GeneratedService } from '../../../src/grpc/generate.js';
import {
  composeSubgraphs,
  createLogger,
  type Logger,
  createRouter,
  type CoreConfigInput,
  type GraphQLResponseBody,
  type Router,
  type SubgraphRecord,
  type SwitchyardPlugin,
} from '../../../src/index.js';
import { startSubgraph, type SubgraphOptions, type TestSubgraph } from '../../../src/testing/index.js';
import { startGrpcService, type Handlers, type TestGrpcService } from './grpc-test-service.js';

/** A gRPC subgraph of a test graph. */
export interface GrpcSubgraphDefinition {
  readonly name: string;
  readonly sdl: string;
  readonly handlers: Handlers;
  readonly delayMs?: number;
}

/** A running test graph. */
export interface TestGraph {
  readonly router: Router;
  readonly grpc: Readonly<Record<string, TestGrpcService>>;
  readonly http: Readonly<Record<string, TestSubgraph>>;
  /** Sends a GraphQL request; returns the HTTP status and body. */
  query(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<{ status: number; body: GraphQLResponseBody }>;
  close(): Promise<void>;
}

const generated = new Map<string, Promise<GeneratedService>>();

/** The generated proto and mapping of a schema (memoized: generation loads Cosmo's composition library). */
export function generatedServiceOf(sdl: string): Promise<GeneratedService> {
  let result = generated.get(sdl);
  if (!result) generated.set(sdl, (result = generateService({ sdl })));
  return result;
}

/** Starts the services and subgraphs, composes them and starts a router with the grpc plugin. */
export async function startGraph({
  grpc = [],
  http = [],
  config = {},
  mapRecords = (records) => records,
  plugins = [],
  logger = createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
}: {
  grpc?: readonly GrpcSubgraphDefinition[];
  http?: readonly SubgraphOptions[];
  config?: Omit<CoreConfigInput, 'version'>;
  /** Changes the composed subgraph records before the router loads them (to break one). */
  mapRecords?: (records: SubgraphRecord[]) => SubgraphRecord[];
  /** More plugins, after the grpc one. */
  plugins?: readonly SwitchyardPlugin[];
  /** The router's logger; default silent (LOG_LEVEL). */
  logger?: Logger;
}): Promise<TestGraph> {
  const services: Record<string, TestGrpcService> = {};
  const subgraphs: Record<string, TestSubgraph> = {};
  const records = [];
  for (const definition of grpc) {
    const service = await generatedServiceOf(definition.sdl);
    const running = await startGrpcService({ proto: service.proto, service: service.serviceName, handlers: definition.handlers, delayMs: definition.delayMs });
    services[definition.name] = running;
    records.push({
      name: definition.name,
      url: running.target,
      sdl: definition.sdl,
      grpc: { proto: service.proto, mapping: JSON.parse(service.mappingText) as Record<string, unknown> },
    });
  }
  for (const options of http) {
    const running = await startSubgraph(options);
    subgraphs[options.name] = running;
    records.push({ name: options.name, url: running.url, sdl: options.typeDefs });
  }
  const composed = composeSubgraphs(records);
  const router = await createRouter({
    config: { ...config, execution_config: { file: { watch: false } } },
    plugins: [useGrpc(), ...plugins],
    graph: { supergraphSdl: composed.supergraphSdl, subgraphs: mapRecords(composed.subgraphs), origin: 'test' },
    logger,
  });
  return {
    router,
    grpc: services,
    http: subgraphs,
    async query(query, variables, headers = {}) {
      const response = await router.handle(
        new Request('http://router.test/graphql', {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
          body: JSON.stringify({ query, variables }),
        }),
      );
      return { status: response.status, body: (await response.json()) as GraphQLResponseBody };
    },
    async close() {
      await router.close();
      await Promise.all([...Object.values(services).map((s) => s.close()), ...Object.values(subgraphs).map((s) => s.close())]);
    },
  };
}
