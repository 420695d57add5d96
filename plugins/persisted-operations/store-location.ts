import { RouterError, type CoreConfig } from '../../src/index.js';
import type { StoreLocation } from '../../src/operations/index.js';
import type { PersistedOperationsStorageConfig } from './config.js';

/** Where `persisted_operations.storage` points; a `provider_id` must name a `storage_providers.sharedstore` entry. */
export function storeLocation(storage: PersistedOperationsStorageConfig, config: CoreConfig): StoreLocation {
  switch (storage.provider) {
    case 'file':
      return { provider: 'file', path: storage.path };
    case 'http':
      return { provider: 'http', url: storage.url };
    case 'sharedstore': {
      const providers = config.storage_providers.sharedstore;
      const provider = providers.find((candidate) => candidate.id === storage.provider_id);
      if (!provider) {
        const known = providers.length > 0 ? `declared: ${providers.map((p) => p.id).join(', ')}` : 'none is declared under storage_providers.sharedstore';
        throw new RouterError('CONFIG_INVALID', `[persisted-operations] persisted_operations.storage.provider_id: unknown shared store "${storage.provider_id}" (${known})`, {
          plugin: 'persisted-operations',
        });
      }
      return { provider: 'redis', urls: provider.urls, cluster: provider.cluster_enabled };
    }
  }
}
