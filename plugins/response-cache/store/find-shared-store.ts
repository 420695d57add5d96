import { ConfigError, type CoreConfig } from '../../../src/index.js';

/** One `storage_providers.sharedstore[]` item. */
export type SharedStoreProvider = CoreConfig['storage_providers']['sharedstore'][number];

/** The shared store `response_cache.storage.provider_id` names; an unknown id stops startup. */
export function findSharedStore(config: CoreConfig, providerId: string | undefined): SharedStoreProvider {
  const declared = config.storage_providers.sharedstore;
  const provider = declared.find((item) => item.id === providerId);
  if (provider) return provider;
  const known = declared.length === 0 ? 'none are declared' : `declared: ${declared.map((item) => item.id).join(', ')}`;
  throw new ConfigError([{ path: 'response_cache.storage.provider_id', plugin: 'response-cache', message: `"${providerId}" is not in storage_providers.sharedstore (${known})` }]);
}
