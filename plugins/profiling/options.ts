/**
 * The `profiler` section of `router.config.yaml` and the plugin's options.
 * Kept free of heavy imports: the CLI reads this schema before it knows
 * whether profiling is on at all.
 */

import { duration, hostPort, url, z } from '../../src/index.js';

/** Application name pushed when `profiler.application_name` is not set. */
export const DEFAULT_APPLICATION_NAME = 'io.switchyard.router';

/** Tags the plugin attaches itself; a user tag of the same name is refused. */
export const RESERVED_TAGS = ['hostname', 'version'] as const;

const TAG_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Characters that would break the `name{k=v,...}` form the profile server parses.
const NAME_TEXT = /^[^\s{},=]+$/;

const sectionShape = {
  /** Pushes CPU and heap profiles to `server_address` every `upload_interval`. Default: false. */
  enabled: z.boolean().default(false),
  /** Base URL of a Pyroscope-compatible profile server (`/ingest` is appended). Required when `enabled`. Default: none. */
  server_address: url().optional(),
  /** Basic authentication for the pushes; set both or neither. Default: none. */
  basic_auth: z
    .strictObject({
      /** User (for Grafana Cloud, the stack's profiles user id). Default: none. */
      username: z.string().min(1).optional(),
      /** Password or access token with profile-write permission; never logged. Default: none. */
      password: z.string().min(1).optional(),
    })
    .prefault({}),
  /** Extra tags on every push; `hostname` and `version` are always attached. Default: none. */
  tags: z
    .record(z.string(), z.string().regex(NAME_TEXT, { error: 'tag values must be non-empty, without spaces or any of { } , =' }))
    .superRefine(function checkTagNames(tags, ctx) {
      for (const name of Object.keys(tags)) {
        if (!TAG_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: 'tag names are letters, digits and "_", not starting with a digit', input: name });
      }
    })
    .default({}),
  /** Name the profiles are stored under. Default: `io.switchyard.router`. */
  application_name: z.string().regex(NAME_TEXT, { error: 'must be non-empty, without spaces or any of { } , =' }).default(DEFAULT_APPLICATION_NAME),
  /** How often profiles are pushed (each push covers one interval). Default: `15s`. */
  upload_interval: duration({ min: '100ms' }).prefault('15s'),
};

interface SectionFields {
  readonly enabled: boolean;
  readonly server_address?: string | undefined;
  readonly basic_auth: { readonly username?: string | undefined; readonly password?: string | undefined };
  readonly tags: Readonly<Record<string, string>>;
}

/** Rules across keys; messages never repeat the address or the password. */
function checkSection(section: SectionFields, ctx: z.core.$RefinementCtx): void {
  if (section.enabled && section.server_address === undefined) {
    ctx.addIssue({ code: 'custom', path: ['server_address'], message: 'is required when profiler.enabled is true', input: undefined });
  }
  if (section.server_address !== undefined && URL.canParse(section.server_address)) {
    const address = new URL(section.server_address);
    if (address.username !== '' || address.password !== '') {
      const message = 'must not carry credentials; set profiler.basic_auth.username and profiler.basic_auth.password instead';
      ctx.addIssue({ code: 'custom', path: ['server_address'], message, input: undefined });
    }
  }
  const { username, password } = section.basic_auth;
  if ((username === undefined) !== (password === undefined)) {
    const missing = username === undefined ? 'username' : 'password';
    ctx.addIssue({ code: 'custom', path: ['basic_auth', missing], message: 'is required when the other basic_auth key is set', input: undefined });
  }
  for (const reserved of RESERVED_TAGS) {
    if (reserved in section.tags) {
      ctx.addIssue({ code: 'custom', path: ['tags', reserved], message: `is attached automatically and cannot be set`, input: undefined });
    }
  }
}

/** Schema of the `profiler` section (config file and `PROFILER_*` variables). */
export const profilerSectionSchema = z.strictObject(sectionShape).superRefine(checkSection);

/** Schema of `useProfiling(options)`: the section's keys plus the profiling listener's address. */
export const profilingOptionsSchema = z
  .strictObject({
    ...sectionShape,
    /**
     * Address of the on-demand `/debug/pprof/*` listener; the CLI takes it
     * from `PPROF_ADDR`. A bare `:6060` binds loopback. Default: none (no listener).
     */
    pprof_addr: hostPort({ allowPortZero: true }).optional(),
  })
  .superRefine(checkSection);

/** The validated `profiler` section. */
export type ProfilerSection = z.output<typeof profilerSectionSchema>;

/** Options of `useProfiling`, as written (durations as text). */
export type ProfilingOptionsInput = z.input<typeof profilingOptionsSchema>;

/** Options of `useProfiling` after validation (`upload_interval` in milliseconds). */
export type ProfilingOptions = z.output<typeof profilingOptionsSchema>;
