/**
 * `persisted-operations`: runs operations registered with
 * `switchyard operations push` by their SHA-256 id, or a Cosmo manifest's
 * own ids (`extensions.persistedQuery.sha256Hash` or `documentId`, and the
 * client name: `graphql-client-name`, `apollographql-client-name`, else
 * `unknown`), from the
 * store per request or from the graph's manifest (manifest mode, polled and
 * hot-swapped); optionally rejects (`safelist`) or logs (`log_unknown`)
 * free-form operations that are not registered. docs/persisted-operations.md
 */
import { definePlugin } from '../../src/index.js';
import { MAX_OPERATION_FILE_BYTES, openOperationsStore } from '../../src/operations/index.js';
import { persistedOperationsConfigSchema, persistedOperationsSection } from './config.js';
import { persistedOperationsErrors } from './errors.js';
import { LookupSource } from './lookup-source.js';
import { startManifestSource } from './manifest-source.js';
import type { OperationSource } from './operation-source.js';
import { persistedOperationsHook } from './request-hook.js';
import { storeLocation } from './store-location.js';

export {
  persistedOperationsConfigSchema,
  type PersistedOperationsConfig,
  type PersistedOperationsConfigInput,
  type PersistedOperationsStorageConfig,
} from './config.js';

/** The plugin's error codes (docs/errors.md); exported so its `ErrorCodes` augmentation reaches the published types. */
export { persistedOperationsErrors } from './errors.js';

/** `usePersistedOperations(options)`: options as the `persisted_operations` section. */
export const usePersistedOperations = definePlugin({
  name: 'persisted-operations',
  config: persistedOperationsSection,
  options: persistedOperationsConfigSchema,
  errors: persistedOperationsErrors,
  async setup(ctx, options) {
    if (!options.enabled) return {};
    const graph = ctx.config.graph.name;
    // An operation file may hold what one request body may (escaped in JSON: up to twice its bytes).
    const maxOperationBytes = Math.max(MAX_OPERATION_FILE_BYTES, 2 * ctx.config.limits.max_request_body);
    const store = await openOperationsStore(storeLocation(options.storage, ctx.config), { maxOperationBytes });
    let source: OperationSource;
    try {
      source = options.manifest.enabled
        ? await startManifestSource({
            store,
            graph,
            pollIntervalMs: options.manifest.poll_interval,
            pollJitterMs: options.manifest.poll_jitter,
            normalize: options.safelist || options.log_unknown,
            log: ctx.log,
          })
        : new LookupSource({ store, graph, cacheSize: options.lookup_cache.size, cacheTtlMs: options.lookup_cache.ttl });
    } catch (error) {
      await store.close();
      throw error;
    }
    ctx.log.info(
      { graph, mode: options.manifest.enabled ? 'manifest' : 'lookup', storage: store.location, safelist: options.safelist, log_unknown: options.log_unknown },
      'Persisted operations enabled',
    );
    const requests = ctx.metrics.counter('persisted_operations_requests_total', 'Persisted-operation resolutions and free-form checks, by result', ['result']);
    return {
      hooks: { onRequest: persistedOperationsHook({ source, safelist: options.safelist, logUnknown: options.log_unknown, requests }) },
      stop: () => source.stop(),
    };
  },
});
