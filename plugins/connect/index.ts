/**
 * `connect`: serves the operations of Connect contracts as RPCs on their
 * own listener (config section `connect_rpc`, docs/connect.md). Each
 * contract is a folder under `services.path` with named GraphQL operations
 * and the `contract.proto` that `switchyard grpc-service generate
 * --connect-contract` wrote for them; each RPC runs its operation through
 * the router. Connect with JSON (POST, and GET for queries) is the main
 * form; `application/proto`, gRPC and gRPC-Web work on the same paths.
 *
 * ```ts
 * import { useConnect } from 'switchyard/plugins/connect';
 * const router = await createRouter({
 *   plugins: [useConnect({ enabled: true, services: { path: './services' } })],
 *   graph: 'router.execution.config.json',
 * });
 * ```
 */
import { definePlugin } from '../../src/index.js';
import { connectConfigSchema, connectSection } from './config.js';

export { connectConfigSchema, type ConnectConfig, type ConnectConfigInput } from './config.js';

/** Serves Connect contracts; disabled (`enabled: false`) it opens nothing and loads nothing. */
export const useConnect = definePlugin({
  name: 'connect',
  config: connectSection,
  options: connectConfigSchema,
  async setup(context, options) {
    if (!options.enabled) return {};
    // The protobuf and Connect libraries load only when the plugin is on.
    const { startConnectService } = await import('./connect-service.js');
    const service = await startConnectService(context, options);
    return { stop: () => service.stop() };
  },
});
