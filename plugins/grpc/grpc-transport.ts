/**
 * The fetch-stage transport of one gRPC subgraph: compiles the subgraph's
 * schema, proto and mapping once, then runs each fetch as RPCs.
 */
import { RouterError, type SubgraphConfig, type Transport } from '../../src/index.js';
import { FetchDocuments } from './fetch-document.js';
import type { GrpcChannels } from './grpc-channels.js';
import { runGrpcFetch } from './grpc-fetch.js';
import type { ServiceModels } from './service-models.js';

/** What a gRPC transport is made of. */
export interface GrpcTransportOptions {
  readonly subgraph: SubgraphConfig;
  /** Connections, shared by all gRPC subgraphs. */
  readonly channels: GrpcChannels;
  /** Compiled subgraphs, shared with the graph-change warm-up. */
  readonly models: ServiceModels;
  /** `traffic_shaping` request timeout of this subgraph, in ms. */
  readonly timeoutMs: number;
  /** Told why the service could not be reached (clients get the status alone). */
  readonly unreachable?: (subgraph: string, details: string) => void;
}

/** A transport sending a gRPC subgraph's fetches as RPCs. */
export function createGrpcTransport({ subgraph, channels, models, timeoutMs, unreachable }: GrpcTransportOptions): Transport {
  const record = subgraph.record;
  const documents = new FetchDocuments();
  return async function sendToGrpcSubgraph(request, signal) {
    if (record.kind !== 'grpc') throw new RouterError('SUBGRAPH_REQUEST_FAILED', `Subgraph "${subgraph.name}" is not a gRPC subgraph.`);
    let model;
    try {
      model = await models.get(record);
    } catch (error) {
      throw new RouterError('SUBGRAPH_REQUEST_FAILED', `Subgraph "${subgraph.name}" cannot be served over gRPC: ${(error as Error).message}`, { cause: error });
    }
    let document;
    try {
      document = documents.get(request.query, request.operationName);
    } catch (error) {
      throw new RouterError('SUBGRAPH_REQUEST_FAILED', `Subgraph "${subgraph.name}": cannot read the fetch: ${(error as Error).message}`, { cause: error });
    }
    return runGrpcFetch({ model, channels, target: record.url, document, request, signal, timeoutMs, unreachable });
  };
}
