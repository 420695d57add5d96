/**
 * A federated graph for conformance tests: real subgraphs on loopback, composed
 * and served by a router, started once per test file.
 */
import { parse } from 'graphql';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { createLogger } from '../../../src/kernel/logger.js';
import type { GraphQLResponseBody } from '../../../src/kernel/pipeline/stages.js';
import { createRouter, type Router } from '../../../src/kernel/router/router.js';
import { startSubgraph, startTestRouter, type SubgraphCall, type SubgraphOptions, type TestSubgraph } from '../../../src/testing/index.js';

/** A started graph: the router, its subgraphs and what they saw. */
export interface FederatedGraph {
  readonly router: Router;
  readonly subgraphs: ReadonlyMap<string, TestSubgraph>;
  /** The composed supergraph SDL, with the subgraphs' routing URLs. */
  readonly supergraphSdl: string;
  /** Sends an operation and returns the response body (the HTTP status must be 200). */
  query(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponseBody>;
  /** Sends an operation (POST) and returns status and body. */
  send(body: Record<string, unknown>, headers?: Record<string, string>): Promise<{ status: number; body: GraphQLResponseBody }>;
  /** Calls one subgraph received since the last reset (every test starts with none). */
  calls(subgraph: string): readonly SubgraphCall[];
  /** The `representations` of each `_entities` call one subgraph received, in order. */
  representations(subgraph: string): unknown[][];
  close(): Promise<void>;
}

/** Options of `startFederatedGraph`. */
export interface FederatedGraphOptions {
  /**
   * Which composition builds the supergraph. Default `guild`
   * (@theguild/federation-composition, as the testing kit and `switchyard
   * compose` do); `apollo` (@apollo/composition) where the guild's output is
   * known to be wrong for the feature under test.
   */
  readonly composition?: 'guild' | 'apollo';
}

/** Composes with @apollo/composition (loaded only here: most graphs do not need it); throws its errors. */
async function composeWithApollo(subgraphs: readonly TestSubgraph[]): Promise<string> {
  const { composeServices } = await import('@apollo/composition');
  const result = composeServices(subgraphs.map((s) => ({ name: s.name, url: s.url, typeDefs: parse(s.typeDefs) })));
  if (result.errors) throw new Error(`composition failed: ${result.errors.map((e) => e.message).join('; ')}`);
  return result.supergraphSdl;
}

async function startRouter(subgraphs: readonly TestSubgraph[], options: FederatedGraphOptions): Promise<{ router: Router; supergraphSdl: string }> {
  if (options.composition === 'apollo') {
    const supergraphSdl = await composeWithApollo(subgraphs);
    const router = await createRouter({
      config: { execution_config: { file: { watch: false } } },
      graph: { supergraphSdl, subgraphs: subgraphs.map((s) => ({ kind: 'graphql', name: s.name, url: s.url })), origin: 'test' },
      logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
    });
    return { router, supergraphSdl };
  }
  const supergraphSdl = composeSubgraphs(subgraphs.map((s) => ({ name: s.name, url: s.url, sdl: s.typeDefs }))).supergraphSdl;
  return { router: (await startTestRouter({ subgraphs })).router, supergraphSdl };
}

/** Starts the subgraphs and a router over them. */
export async function startFederatedGraph(definitions: readonly SubgraphOptions[], options: FederatedGraphOptions = {}): Promise<FederatedGraph> {
  const started = await Promise.all(definitions.map((definition) => startSubgraph(definition)));
  const subgraphs = new Map(started.map((s) => [s.name, s]));
  const { router, supergraphSdl } = await startRouter(started, options);
  const subgraph = (name: string): TestSubgraph => {
    const found = subgraphs.get(name);
    if (!found) throw new Error(`no subgraph "${name}" in this graph`);
    return found;
  };
  const send = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const response = await router.handle(
      new Request('http://router.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
        body: JSON.stringify(body),
      }),
    );
    return { status: response.status, body: (await response.json()) as GraphQLResponseBody };
  };
  return {
    router,
    subgraphs,
    supergraphSdl,
    send,
    async query(query, variables) {
      const response = await send({ query, variables });
      if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(response.body)}`);
      return response.body;
    },
    calls: (name) => subgraph(name).calls,
    representations: (name) =>
      subgraph(name)
        .calls.filter((call) => Array.isArray(call.variables.representations))
        .map((call) => call.variables.representations as unknown[]),
    async close() {
      await router.close();
      await Promise.all(started.map((s) => s.close()));
    },
  };
}
