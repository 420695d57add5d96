/**
 * `grpc`: serves gRPC subgraphs, services generated from a GraphQL schema
 * (`switchyard grpc-service generate`) and composed as subgraph kind `grpc`.
 * Registers the fetch-stage transport for that kind: every fetch to such a
 * subgraph becomes RPCs over @grpc/grpc-js, with messages built from the
 * proto embedded in the execution config (docs/grpc.md).
 *
 * The `switchyard router` command registers it for every router: it has no
 * config section and costs nothing until the graph has a gRPC subgraph
 * (@grpc/grpc-js and protobufjs load on first use). In code:
 *
 * ```ts
 * import { useGrpc } from 'switchyard/plugins/grpc';
 * const router = await createRouter({ config, plugins: [useGrpc()], graph: 'router.execution.config.json' });
 * ```
 */
import { definePlugin, z, type CoreConfig } from '../../src/index.js';
import { GrpcChannels } from './grpc-channels.js';
import { createGrpcTransport } from './grpc-transport.js';
import { ServiceModels } from './service-models.js';

export { GRPC_STATUS_NAMES } from './grpc-channels.js';
export type { GrpcSubgraphRecord } from './service-model.js';

/** Options of `useGrpc`: none; deadlines come from `traffic_shaping`. */
export const grpcOptionsSchema = z.strictObject({});

/** Options of `useGrpc` (none today). */
export type GrpcOptions = z.input<typeof grpcOptionsSchema>;

/** Shortest time between two `gRPC subgraph unreachable` lines for one subgraph. */
const UNREACHABLE_LOG_INTERVAL_MS = 10_000;

function timeoutFor(config: CoreConfig, subgraph: string): number {
  return config.traffic_shaping.subgraphs[subgraph]?.request_timeout ?? config.traffic_shaping.all.request_timeout;
}

/** Sends the fetches of `grpc` subgraphs as RPCs. */
export const useGrpc = definePlugin({
  name: 'grpc',
  options: grpcOptionsSchema,
  setup(context) {
    const channels = new GrpcChannels();
    const models = new ServiceModels(context.log);
    // Why a service was unreachable goes to the log (clients get only UNAVAILABLE), at most once per subgraph every 10 s.
    const lastLogged = new Map<string, number>();
    const unreachable = (subgraph: string, details: string): void => {
      const now = Date.now();
      if (now - (lastLogged.get(subgraph) ?? -Infinity) < UNREACHABLE_LOG_INTERVAL_MS) return;
      lastLogged.set(subgraph, now);
      context.log.warn({ subgraph, reason: details.slice(0, 500) }, 'gRPC subgraph unreachable');
    };
    const unsubscribe = context.router.onGraphChange((graph) => models.warm([...graph.subgraphs.values()].map((subgraph) => subgraph.record)));
    return {
      transports: {
        grpc: (subgraph) => createGrpcTransport({ subgraph, channels, models, timeoutMs: timeoutFor(context.config, subgraph.name), unreachable }),
      },
      stop() {
        unsubscribe();
        channels.close();
      },
    };
  },
});
