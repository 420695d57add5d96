/**
 * Builds what the benchmark runs as plain JavaScript, so no contender pays
 * for a TypeScript loader (tsx would also add an esbuild child process to
 * the measured process tree):
 * - Switchyard's CLI from the working tree, with tsup (the project's bundler,
 *   same format and target as `npm run build`) into `<work>/switchyard/`.
 *   Only JavaScript: `npm run build` also writes type declarations, which
 *   takes minutes and touches the `dist/` other work relies on.
 * - The benchmark's own programs (subgraphs, floor, ceiling, Apollo Gateway,
 *   the profile sink, the cache memory measurement).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'tsup';

/** Repository root (this file is bench/harness/build.ts). */
export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');

/** The bench's programs, by name, as entry files under bench/servers. */
const SERVER_ENTRIES = ['subgraph-server', 'floor', 'ceiling', 'apollo-gateway', 'cache-memory', 'profile-sink', 'otlp-sink', 'transport-floor', 'floor-two-roots'] as const;

/** Name of a bench server program. */
export type ServerName = (typeof SERVER_ENTRIES)[number];

/** Paths of the built programs. */
export interface BuiltPrograms {
  /** Switchyard's CLI (`switchyard router ...`). */
  readonly switchyardCli: string;
  /** The bench servers' entry files, by name. */
  readonly servers: Readonly<Record<ServerName, string>>;
}

const common = {
  config: false,
  format: ['esm' as const],
  platform: 'node' as const,
  target: 'node20',
  skipNodeModulesBundle: true,
  silent: true,
  dts: false,
  outExtension: () => ({ js: '.mjs' }),
};

/**
 * Builds Switchyard's CLI (unless `switchyardCli` points at an existing
 * build, e.g. `dist/cli/main.js`) and the bench servers into `workDir`.
 */
export async function buildPrograms(workDir: string, switchyardCli?: string): Promise<BuiltPrograms> {
  const switchyardOut = join(workDir, 'switchyard');
  const serversOut = join(workDir, 'servers');
  const builds: Array<Promise<void>> = [
    build({
      ...common,
      entry: Object.fromEntries(SERVER_ENTRIES.map((name) => [name, join(REPO_ROOT, 'bench', 'servers', `${name}.ts`)])),
      outDir: serversOut,
      clean: true,
      splitting: false,
      sourcemap: false,
    }),
  ];
  if (!switchyardCli) {
    // Source maps keep `--cpu-prof` profiles of the router readable.
    builds.push(build({ ...common, entry: { 'cli/main': join(REPO_ROOT, 'src', 'cli', 'main.ts') }, outDir: switchyardOut, clean: true, splitting: true, sourcemap: true }));
  }
  await Promise.all(builds);
  const cli = switchyardCli ? resolve(switchyardCli) : join(switchyardOut, 'cli', 'main.mjs');
  if (!existsSync(cli)) throw new Error(`Switchyard CLI not found at ${cli}`);
  const servers = Object.fromEntries(SERVER_ENTRIES.map((name) => [name, join(serversOut, `${name}.mjs`)])) as Record<ServerName, string>;
  return { switchyardCli: cli, servers };
}
