/**
 * Compiled gRPC subgraphs by execution config record: compiled when a graph
 * loads (so a broken record is logged at once and the first request is
 * fast) and reused by the transports of that graph.
 */
import type { Logger, SubgraphRecord } from '../../src/index.js';
import { compileServiceModel, type GrpcSubgraphRecord, type ServiceModel } from './service-model.js';

/** One compilation per record, kept as long as the record lives. */
export class ServiceModels {
  private readonly models = new WeakMap<GrpcSubgraphRecord, Promise<ServiceModel>>();

  constructor(private readonly log: Logger) {}

  /** The compiled subgraph; rejects (every time) when the record cannot be served. */
  get(record: GrpcSubgraphRecord): Promise<ServiceModel> {
    let model = this.models.get(record);
    if (!model) {
      model = compileServiceModel(record);
      this.models.set(record, model);
    }
    return model;
  }

  /** Compiles the gRPC subgraphs of a newly loaded graph, logging each one's outcome. */
  warm(records: Iterable<SubgraphRecord>): void {
    for (const record of records) {
      if (record.kind !== 'grpc') continue;
      this.get(record).then(
        (model) => this.log.info({ subgraph: record.name, target: record.url, service: model.mapping.service }, 'gRPC subgraph ready'),
        (error: unknown) => this.log.error({ subgraph: record.name, err: error }, 'gRPC subgraph cannot be served'),
      );
    }
  }
}
