/**
 * `switchyard config migrate --from cosmo -i <cosmo router.config.yaml> -o <router.config.yaml>`:
 * writes a Switchyard config equivalent to a Cosmo Router one
 * (cosmo-config-migration.ts) and prints `not carried: <key path>: <why>`
 * for each key it cannot carry. Exit 0 when everything was carried, 1 when
 * something was not (or the input is unreadable), 2 on a usage error.
 */
import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { EXIT_FAILED, EXIT_USAGE, exitForUsageError, writeProblem } from '../cli-support.js';

/** Options commander hands to the action. */
interface MigrateOptions {
  from: string;
  input: string;
  output: string;
}

async function runMigrate(this: Command, options: MigrateOptions): Promise<void> {
  if (options.from !== 'cosmo') {
    this.error(`error: --from must be "cosmo" (the only source format), got "${options.from}"`, { exitCode: EXIT_USAGE, code: 'switchyard.from' });
  }
  const { parse: parseYaml, stringify: stringifyYaml } = await import('yaml');
  const { isMapping, MigrationInvalid, migrateCosmoConfig, validated } = await import('../cosmo-config-migration.js');
  let source: unknown;
  try {
    source = parseYaml(await readFile(options.input, 'utf8'));
  } catch (error) {
    writeProblem(`${options.input}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    process.exitCode = EXIT_FAILED;
    return;
  }
  if (!isMapping(source)) {
    writeProblem(`${options.input}: expected a mapping of Cosmo router config keys`);
    process.exitCode = EXIT_FAILED;
    return;
  }
  let migrated: ReturnType<typeof validated>;
  try {
    migrated = validated(migrateCosmoConfig(source));
  } catch (error) {
    if (!(error instanceof MigrationInvalid)) throw error;
    // One `error:` line for why nothing is written, then one per problem.
    for (const line of [error.lead, ...error.issues]) writeProblem(`${options.input}: ${line}`);
    process.exitCode = EXIT_FAILED;
    return;
  }
  const { config, notCarried } = migrated;
  const header = `# Converted from ${options.input} by \`switchyard config migrate --from cosmo\`.\n# Keys Cosmo defaults differently are written out, so behaviour does not change silently.\n`;
  try {
    await writeFile(options.output, header + stringifyYaml(config));
  } catch (error) {
    writeProblem(`${options.output}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
    process.exitCode = EXIT_FAILED;
    return;
  }
  for (const { path, why } of notCarried) process.stderr.write(`not carried: ${path}: ${why}\n`);
  process.stdout.write(`wrote ${options.output}${notCarried.length > 0 ? ` (${notCarried.length} key${notCarried.length === 1 ? '' : 's'} not carried)` : ''}\n`);
  process.exitCode = notCarried.length > 0 ? EXIT_FAILED : 0;
}

const EXAMPLES = `
Examples:
  $ switchyard config migrate --from cosmo -i config.yaml -o router.config.yaml

Prints "not carried: <key path>: <why>" for each Cosmo key it cannot carry;
exit 0 when everything was carried, 1 otherwise. Guide: docs/coming-from-cosmo.md`;

/** Adds `config` (with `config migrate`) to the `switchyard` program and returns it. */
export function registerConfigCommand(program: Command): Command {
  const config = program.command('config').description('Work with router config files').exitOverride(exitForUsageError);
  config
    .command('migrate')
    .description("Write a Switchyard router.config.yaml from another router's config")
    .requiredOption('--from <router>', "the config's router: cosmo")
    .requiredOption('-i, --input <file>', "the config to convert (Cosmo's config.yaml)")
    .requiredOption('-o, --output <file>', 'the Switchyard config to write')
    .addHelpText('after', EXAMPLES)
    .exitOverride(exitForUsageError)
    .action(runMigrate);
  return config;
}
