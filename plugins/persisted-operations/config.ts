/**
 * The `persisted_operations` section of router.config.yaml. Kept apart from
 * the plugin so the config loader reads it without loading the plugin.
 */
import { ConfigError, defineConfigSection, duration, url, z, type SwitchyardPlugin } from '../../src/index.js';

const storageSchema = z.discriminatedUnion('provider', [
  z.strictObject({
    /** A directory on disk, as `switchyard operations --store <dir>` writes it. */
    provider: z.literal('file'),
    /** The store's directory; relative to the working directory. Default: `.switchyard/operations`. */
    path: z.string().min(1).default('.switchyard/operations'),
  }),
  z.strictObject({
    /** Redis, through a `storage_providers.sharedstore` entry. */
    provider: z.literal('sharedstore'),
    /** `id` of the `storage_providers.sharedstore` entry; an unknown id fails startup. */
    provider_id: z.string().min(1),
  }),
  z.strictObject({
    /** A read-only `http(s)://` base URL serving a store's files (a CDN or static host). */
    provider: z.literal('http'),
    /** Base URL of the store; a `user:password@` in it is sent as HTTP Basic authorization, never in the URL, and never logged. */
    url: url(),
  }),
]);

/** Schema of `persisted_operations`. */
export const persistedOperationsConfigSchema = z.strictObject({
  /** Run operations by their SHA-256 id. Default: `false`. */
  enabled: z.boolean().default(false),
  /** Where operations are read from. Default: `{provider: file, path: .switchyard/operations}`. */
  storage: storageSchema.prefault({ provider: 'file' }),
  /** Manifest mode: load the graph's `manifest.json` at startup and poll it. Default: off. */
  manifest: z
    .strictObject({
      /** Serve from the manifest only (no per-request lookups; client names do not restrict). Default: `false`. */
      enabled: z.boolean().default(false),
      /** Time between polls, in ms. Default: `10s`. */
      poll_interval: duration({ min: '10ms' }).prefault('10s'),
      /** Up to this much is added at random to each interval, so replicas do not poll together, in ms. Default: `5s`. */
      poll_jitter: duration().prefault('5s'),
    })
    .prefault({}),
  /** Reject free-form operations that are not registered (403 `QUERY_NOT_IN_SAFELIST`). Default: `false`. */
  safelist: z.boolean().default(false),
  /** Log free-form operations that are not registered (they are still served unless `safelist`). Default: `false`. */
  log_unknown: z.boolean().default(false),
  /** Cache of per-request lookups outside manifest mode. */
  lookup_cache: z
    .strictObject({
      /** Operations kept (LRU). Default: `10000`. */
      size: z.int().min(1).default(10_000),
      /** How long a found operation is kept, in ms; a deletion takes effect within it. Default: `1m`. */
      ttl: duration({ min: '1ms', timer: false }).prefault('1m'),
    })
    .prefault({}),
});

/** `persisted_operations` as written in the file. */
export type PersistedOperationsConfigInput = z.input<typeof persistedOperationsConfigSchema>;
/** `persisted_operations` with defaults filled in (durations in ms). */
export type PersistedOperationsConfig = z.output<typeof persistedOperationsConfigSchema>;
/** `persisted_operations.storage` with defaults filled in. */
export type PersistedOperationsStorageConfig = PersistedOperationsConfig['storage'];

/** The `persisted_operations` section: the plugin is on when `enabled`; an unknown shared store stops startup. */
export const persistedOperationsSection = defineConfigSection({
  key: 'persisted_operations',
  plugin: 'persisted-operations',
  schema: persistedOperationsConfigSchema,
  async fromConfig(section, { core }): Promise<SwitchyardPlugin[]> {
    if (!section?.enabled) return [];
    const { storage } = section;
    if (storage.provider === 'sharedstore' && !core.storage_providers.sharedstore.some((provider) => provider.id === storage.provider_id)) {
      const message = `unknown shared store "${storage.provider_id}"; declare it under storage_providers.sharedstore`;
      throw new ConfigError([{ path: 'persisted_operations.storage.provider_id', message, plugin: 'persisted-operations' }]);
    }
    const { usePersistedOperations } = await import('./index.js');
    return [usePersistedOperations.fromParsed(section)];
  },
});
