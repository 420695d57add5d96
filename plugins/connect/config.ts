/**
 * The `connect_rpc` section of router.config.yaml. Kept apart from the
 * plugin so the config loader reads it without loading the plugin.
 */
import { hostPort, z } from '../../src/index.js';

/** Schema of `connect_rpc`. */
export const connectConfigSchema = z.strictObject({
  /** Serve the contracts of `services.path` as Connect endpoints. Default: `false`. */
  enabled: z.boolean().default(false),
  server: z
    .strictObject({
      /** Address of the Connect listener (its own port, not a route on the router's). Default: `localhost:5026`. */
      listen_addr: hostPort({ allowPortZero: true }).default('localhost:5026'),
    })
    .prefault({}),
  services: z
    .strictObject({
      /** Folder of contracts (one folder each: operations + contract.proto), relative to the working directory. Default: `./services`. */
      path: z.string().min(1).default('./services'),
    })
    .prefault({}),
});

/** `connect_rpc` as written in the file. */
export type ConnectConfigInput = z.input<typeof connectConfigSchema>;
/** `connect_rpc` with defaults filled in. */
export type ConnectConfig = z.output<typeof connectConfigSchema>;
