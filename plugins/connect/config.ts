/**
 * The `connect_rpc` section of router.config.yaml. Kept apart from the
 * plugin so the config loader reads it without loading the plugin.
 * Cosmo's keys are accepted with Cosmo's meaning: `storage.provider_id`
 * names a `storage_providers.file_system[]` folder (instead of
 * `services.path`), and `server.base_url` is the address clients reach the
 * listener at.
 */
import { ConfigError, defineConfigSection, hostPort, url, z, type CoreConfig, type SwitchyardPlugin } from '../../src/index.js';

/** The services folder when neither `services.path` nor `storage.provider_id` is set. */
export const DEFAULT_SERVICES_PATH = './services';

/** Schema of `connect_rpc`. */
export const connectConfigSchema = z
  .strictObject({
    /** Serve the contracts of the services folder as Connect endpoints. Default: `false`. */
    enabled: z.boolean().default(false),
    server: z
      .strictObject({
        /** Address of the Connect listener (its own port, not a route on the router's). Default: `localhost:5026`. */
        listen_addr: hostPort({ allowPortZero: true }).default('localhost:5026'),
        /** URL clients reach the listener at (behind a proxy), `http(s)://host[:port]`; shown in the startup log. Default: none (the listener's own address). */
        base_url: url().optional(),
      })
      .prefault({}),
    services: z
      .strictObject({
        /** Folder of contracts (one folder each: a proto + operations, found at any depth), relative to the working directory. Default: `./services` (unless `storage.provider_id` is set). */
        path: z.string().min(1).optional(),
      })
      .prefault({}),
    storage: z
      .strictObject({
        /** Cosmo's way to name the services folder: the `id` of a `storage_providers.file_system[]` entry. Default: none. */
        provider_id: z.string().min(1),
      })
      .optional(),
  })
  .superRefine(function oneServicesFolder(section, ctx) {
    if (section.storage !== undefined && section.services.path !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['storage', 'provider_id'],
        message: 'and connect_rpc.services.path both name the services folder; keep one of them',
        input: section.storage.provider_id,
      });
    }
  });

/** `connect_rpc` as written in the file. */
export type ConnectConfigInput = z.input<typeof connectConfigSchema>;
/** `connect_rpc` with defaults filled in. */
export type ConnectConfig = z.output<typeof connectConfigSchema>;

/**
 * The services folder the section names: `storage.provider_id`'s
 * `file_system` provider, else `services.path`, else `./services`. Throws
 * `CONFIG_INVALID` for a provider id that is not declared.
 */
export function servicesFolder(section: Pick<ConnectConfig, 'services' | 'storage'>, core: Pick<CoreConfig, 'storage_providers'>): string {
  const id = section.storage?.provider_id;
  if (id === undefined) return section.services.path ?? DEFAULT_SERVICES_PATH;
  const provider = (core.storage_providers.file_system ?? []).find((candidate) => candidate.id === id);
  if (provider) return provider.path;
  const sharedStore = core.storage_providers.sharedstore.some((candidate) => candidate.id === id);
  const why = sharedStore
    ? `"${id}" is a shared store (Redis); the services folder must be a storage_providers.file_system entry`
    : `unknown storage provider "${id}"; declare it under storage_providers.file_system as {id, path}`;
  throw new ConfigError([{ path: 'connect_rpc.storage.provider_id', message: why, plugin: 'connect' }]);
}

/** The `connect_rpc` section: the plugin is on when `enabled`. */
export const connectSection = defineConfigSection({
  key: 'connect_rpc',
  plugin: 'connect',
  schema: connectConfigSchema,
  async fromConfig(section, { core }): Promise<SwitchyardPlugin[]> {
    if (!section?.enabled) return [];
    // An undeclared storage provider is a config error now, not a failed start later.
    servicesFolder(section, core);
    const { useConnect } = await import('./index.js');
    return [useConnect.fromParsed(section)];
  },
});
