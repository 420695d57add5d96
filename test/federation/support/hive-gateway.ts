/**
 * Hive Gateway (@graphql-hive/gateway's runtime) in-process over a supergraph
 * SDL, for differential tests: the same operations sent to it and to Switchyard.
 */
import type { GraphQLResponseBody } from '../../../src/kernel/pipeline/stages.js';

/** A running Hive Gateway runtime. */
export interface HiveGateway {
  /** Sends an operation (POST /graphql) and returns the response body. */
  query(query: string, variables?: Record<string, unknown>): Promise<GraphQLResponseBody>;
  close(): Promise<void>;
}

/** Starts Hive Gateway over the supergraph; its import is heavy, so it loads on first use. */
export async function startHiveGateway(supergraphSdl: string): Promise<HiveGateway> {
  const { createGatewayRuntime } = await import('@graphql-hive/gateway-runtime');
  const runtime = createGatewayRuntime({ supergraph: supergraphSdl, logging: false });
  return {
    async query(query, variables) {
      const response = await runtime.fetch('http://hive.test/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as GraphQLResponseBody;
    },
    async close() {
      await runtime.dispose();
    },
  };
}
