/** The `automatic_persisted_queries` section of router.config.yaml (read without loading the plugin). */
import { defineConfigSection, duration, z, type SwitchyardPlugin } from '../../src/index.js';

/** Lifetime of a text in the shared store when `cache.ttl` is not set: clients anyone runs register texts, so none stays forever. */
export const APQ_SHARED_DEFAULT_TTL_MS = 24 * 60 * 60 * 1000;

/** Schema of `automatic_persisted_queries`. */
export const automaticPersistedQueriesConfigSchema = z.strictObject({
  /** Accept Apollo's automatic persisted queries. Default: `false`. */
  enabled: z.boolean().default(false),
  /** The in-memory cache of registered queries (per router process). */
  cache: z
    .strictObject({
      /** Queries kept (LRU). Default: `1000`. */
      size: z.int().min(1).default(1000),
      /** How long a query is kept after it was registered, in ms. Default: none (until evicted). */
      ttl: duration({ min: '1ms', timer: false }).optional(),
    })
    .prefault({}),
  /** Where registered queries are shared between replicas. Default: nowhere (each process keeps its own). */
  storage: z
    .strictObject({
      /**
       * `id` of a `storage_providers.sharedstore` entry: texts are kept in that
       * Redis (keys `switchyard:apq:<sha256>`, expiring after `cache.ttl`, or
       * after 24 h when it is not set) behind the in-process cache, so a hash registered on one replica
       * runs on every other. An unknown id stops startup.
       */
      provider_id: z.string().min(1).optional(),
    })
    .prefault({}),
});

/** `automatic_persisted_queries` as written in the file. */
export type AutomaticPersistedQueriesConfigInput = z.input<typeof automaticPersistedQueriesConfigSchema>;
/** `automatic_persisted_queries` with defaults filled in (durations in ms). */
export type AutomaticPersistedQueriesConfig = z.output<typeof automaticPersistedQueriesConfigSchema>;

/** The `automatic_persisted_queries` section: the plugin is on when `enabled`. */
export const automaticPersistedQueriesSection = defineConfigSection({
  key: 'automatic_persisted_queries',
  plugin: 'automatic-persisted-queries',
  schema: automaticPersistedQueriesConfigSchema,
  async fromConfig(section): Promise<SwitchyardPlugin[]> {
    if (!section?.enabled) return [];
    const { useAutomaticPersistedQueries } = await import('./index.js');
    return [useAutomaticPersistedQueries.fromParsed(section)];
  },
});
