import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfigError,
  defineConfigSection,
  definePlugin,
  duration,
  hostPort,
  parseConfig,
  readSection,
  sectionPlugins,
  z,
  type ConfigSection,
  type SwitchyardPlugin,
} from '../../../src/index.js';
import { loadRouterSetup } from '../../../src/setup/index.js';
import { configErrorOf } from './config-errors.js';

const greetingSchema = z.strictObject({
  /** Switch. Default: `false`. */
  enabled: z.boolean().default(false),
  /** The greeting. Default: `hello`. */
  text: z.string().min(1).default('hello'),
  /** How long a greeting is kept. Default: `1m`. */
  keep: duration({ min: '1s' }).prefault('1m'),
});

/** A plugin of a program's own, configured from its own section. */
const useGreeting = definePlugin({
  name: 'greeting',
  config: defineConfigSection({ key: 'greeting', plugin: 'greeting', schema: greetingSchema }),
  options: greetingSchema,
  setup: () => ({}),
});

/** What `fromConfig` was called with, per call. */
const calls: Array<{ section: z.output<typeof greetingSchema> | undefined; admin: string | undefined }> = [];

const greetingSection = defineConfigSection({
  key: 'greeting',
  plugin: 'greeting',
  schema: greetingSchema,
  env: { GREETING_ADMIN_ADDR: hostPort() },
  fromConfig(section, { env }): SwitchyardPlugin[] {
    calls.push({ section, admin: env.GREETING_ADMIN_ADDR });
    return section?.enabled || env.GREETING_ADMIN_ADDR !== undefined ? [useGreeting.fromParsed(section ?? greetingSchema.parse({}))] : [];
  },
});

describe('a config section declared once', () => {
  it('is validated with the file, gets environment variables from its keys, and reads back typed with defaults', () => {
    const config = parseConfig({ version: '1', greeting: { enabled: true } }, { env: { GREETING_KEEP: '30s' }, sections: [greetingSection] });
    const section = readSection(config, greetingSection);
    expect(section).toEqual({ enabled: true, text: 'hello', keep: 30_000 });
    const error = configErrorOf(() => parseConfig({ version: '1', greeting: { text: '', volume: 3 } }, { env: {}, sections: [greetingSection] }));
    expect(error.message.split('\n').slice(1)).toEqual(['  [greeting] greeting.text: must not be empty', '  [greeting] greeting: unknown key "volume"']);
  });

  it('switches its plugins on through fromConfig, given undefined when the section is absent', async () => {
    calls.length = 0;
    const absent = parseConfig({ version: '1' }, { env: {}, sections: [greetingSection] });
    expect(readSection(absent, greetingSection)).toBeUndefined();
    expect(await sectionPlugins(greetingSection, absent, {})).toEqual([]);
    const on = parseConfig({ version: '1', greeting: { enabled: true, text: 'hi' } }, { env: {}, sections: [greetingSection] });
    expect((await sectionPlugins(greetingSection, on, {})).map((plugin) => plugin.name)).toEqual(['greeting']);
    expect(calls).toEqual([
      { section: undefined, admin: undefined },
      { section: { enabled: true, text: 'hi', keep: 60_000 }, admin: undefined },
    ]);
  });

  it('reads its environment-only variables checked, ignores empty ones, and names a bad one with its plugin', async () => {
    calls.length = 0;
    const config = parseConfig({ version: '1' }, { env: {}, sections: [greetingSection] });
    expect(await sectionPlugins(greetingSection, config, { GREETING_ADMIN_ADDR: '' })).toEqual([]);
    expect((await sectionPlugins(greetingSection, config, { GREETING_ADMIN_ADDR: ':7000' })).map((plugin) => plugin.name)).toEqual(['greeting']);
    expect(calls.map((call) => call.admin)).toEqual([undefined, ':7000']);
    const error = await sectionPlugins(greetingSection, config, { GREETING_ADMIN_ADDR: 'nowhere' }).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).issues).toEqual([
      { path: 'GREETING_ADMIN_ADDR', plugin: 'greeting', message: 'must be host:port or :port (for example localhost:3002), got "nowhere"' },
    ]);
  });

  it('builds no plugin for a section without fromConfig', async () => {
    const bare = defineConfigSection({ key: 'bare', schema: z.strictObject({ on: z.boolean().default(true) }) });
    const config = parseConfig({ version: '1', bare: {} }, { env: {}, sections: [bare] });
    expect(readSection(config, bare)).toEqual({ on: true });
    expect(await sectionPlugins(bare, config, {})).toEqual([]);
  });

  it("gives definePlugin the section's key: options given in code are checked under it", () => {
    expect(useGreeting.configKey).toBe('greeting');
    expect(() => useGreeting({ text: '' })).toThrow('[greeting] greeting.text: must not be empty');
  });
});

describe("loadRouterSetup with a program's own sections", () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'switchyard-sections-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function setupFrom(yaml: string, sections: readonly ConfigSection[] = [greetingSection], env: NodeJS.ProcessEnv = {}) {
    const configPath = join(dir, `router-${Math.random().toString(36).slice(2)}.config.yaml`);
    await writeFile(configPath, yaml);
    return loadRouterSetup({ configPath, env, sections });
  }

  it('validates the section with the file and adds its plugins after the built-in ones', async () => {
    const setup = await setupFrom('version: "1"\naccess_logs:\n  enabled: true\ngreeting:\n  enabled: true\n');
    expect(setup.plugins.map((plugin) => plugin.name)).toEqual(['access-logs', 'greeting']);
    expect(readSection(setup.config, greetingSection)).toEqual({ enabled: true, text: 'hello', keep: 60_000 });
    const fromEnv = await setupFrom('version: "1"\n', [greetingSection], { GREETING_ENABLED: 'true' });
    expect(fromEnv.plugins.map((plugin) => plugin.name)).toEqual(['greeting']);
  });

  it('refuses a bad value in the section, and the section itself when the program does not declare it', async () => {
    const bad = await setupFrom('version: "1"\ngreeting:\n  keep: 10ms\n').then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(bad).toBeInstanceOf(ConfigError);
    expect((bad as ConfigError).issues).toEqual([{ path: 'greeting.keep', plugin: 'greeting', message: 'must be at least 1s', line: 3 }]);
    const undeclared = await setupFrom('version: "1"\ngreeting:\n  enabled: true\n', []).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(undeclared).toBeInstanceOf(ConfigError);
    expect((undeclared as ConfigError).issues.map((issue) => issue.path)).toEqual(['']);
    expect((undeclared as ConfigError).message).toContain('unknown key "greeting"');
  });

  it('refuses a section that takes a built-in key', async () => {
    const clash = defineConfigSection({ key: 'response_cache', schema: z.strictObject({}) });
    await expect(setupFrom('version: "1"\n', [clash])).rejects.toThrow('config section "response_cache" is declared twice');
  });
});
