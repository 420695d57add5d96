/**
 * `switchyard operations push|delete|list`: registers persisted operations
 * in an operations store (a directory, Redis, or a read-only HTTP URL) that
 * the `persisted-operations` router plugin reads. docs/persisted-operations.md
 */
import { Option, type Command } from 'commander';
import {
  DEFAULT_STORE_PATH,
  STORE_ENV_VARIABLE,
  nameProblem,
  OperationsStoreError,
  openOperationsStore,
  parseStoreLocation,
  readOperationFiles,
  ReadOnlyStoreError,
  type OperationsStore,
  type RegisteredOperation,
  type StoreLocation,
} from '../../operations/index.js';
import { stripUrlCredentials } from '../../kernel/url-credentials.js';
import { EXIT_FAILED, EXIT_USAGE, exitForUsageError, writeProblem } from '../cli-support.js';

type OutputFormat = 'text' | 'json';

interface StoreOptions {
  /** `--store`; default: `SWITCHYARD_OPERATIONS_STORE`, then `.switchyard/operations`. */
  store?: string;
}

interface PushOptions extends StoreOptions {
  client: string;
  file?: string[];
  format: OutputFormat;
}

interface DeleteOptions extends StoreOptions {
  client: string;
}

interface ListOptions extends StoreOptions {
  client?: string;
  format: OutputFormat;
}

const STORE_HELP = `operations store: a directory, redis://host:port[/db], or an http(s):// base URL (read-only; user:password@ is sent as Basic auth) (default: $${STORE_ENV_VARIABLE}, else ${DEFAULT_STORE_PATH})`;

const PUSH_HELP = `
Files (-f, repeatable; detected in this order):
  .graphql document                 one document (all its operations); its id is the SHA-256 of the file's bytes
  Apollo persisted-query manifest   {"format": "apollo-persisted-query-manifest", "version": 1, "operations": [{id, name, type, body}]}
  Relay query map                   {"<id>": "<text>"} or [["<id>", "<text>"]]; the Relay id resolves as an alias

Every file is checked before anything is pushed. An id or Relay id names one operation in the
graph: a push that would point one at a second text (in any client) is refused whole.

Examples:
  $ switchyard operations push default -c web -f persisted-query-manifest.json
  $ switchyard operations push default -c ios -f queries.json -f extra.graphql --store redis://localhost:6379`;

/** Validates names and the store location; a problem is a usage error (exit 2). */
function usage(command: Command, graph: string, client: string | undefined, store: string | undefined): StoreLocation {
  const problem = nameProblem('graph', graph) ?? (client === undefined ? undefined : nameProblem('client', client));
  if (problem) command.error(`error: ${problem}`, { exitCode: EXIT_USAGE });
  try {
    // An empty variable counts as unset, as for every other environment setting.
    return parseStoreLocation(store ?? (process.env[STORE_ENV_VARIABLE] || DEFAULT_STORE_PATH));
  } catch (error) {
    return command.error(`error: --store: ${error instanceof Error ? error.message : String(error)}`, { exitCode: EXIT_USAGE });
  }
}

/** Runs work against the store, closing it afterwards; failures print and set exit code 1. */
async function withStore(location: StoreLocation, work: (store: OperationsStore) => Promise<void>): Promise<void> {
  let store: OperationsStore | undefined;
  try {
    store = await openOperationsStore(location, { failFast: true });
    await work(store);
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  } finally {
    await store?.close().catch(() => undefined);
  }
}

async function runPush(this: Command, graph: string, options: PushOptions): Promise<void> {
  const location = usage(this, graph, options.client, options.store);
  const files = options.file ?? [];
  if (files.length === 0) this.error("error: required option '-f, --file <file>' not specified", { exitCode: EXIT_USAGE });
  if (location.provider === 'http') {
    writeProblem(new ReadOnlyStoreError(stripUrlCredentials(location.url)));
    process.exitCode = EXIT_FAILED;
    return;
  }
  let operations;
  try {
    operations = (await readOperationFiles(files)).flatMap((file) => file.operations);
  } catch (error) {
    writeProblem(error);
    process.stderr.write('error: nothing was pushed\n');
    process.exitCode = EXIT_FAILED;
    return;
  }
  await withStore(location, async (store) => {
    let pushed;
    try {
      pushed = await store.push(graph, options.client, operations);
    } catch (error) {
      // The store refuses a push (an alias clash, a bad name) before it writes anything.
      if (error instanceof OperationsStoreError) throw new OperationsStoreError(`${error.message}\nnothing was pushed`);
      throw error;
    }
    const created = pushed.filter((operation) => operation.status === 'created').length;
    const upToDate = pushed.length - created;
    if (options.format === 'json') {
      const report = { graph, client: options.client, operations: pushed, created, upToDate };
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return;
    }
    const lines = pushed.map((operation) => `pushed operation ${operation.id} (${operation.status})\n`);
    process.stdout.write(`${lines.join('')}pushed ${pushed.length} operations: ${created} created, ${upToDate} up to date\n`);
  });
}

async function runDelete(this: Command, graph: string, id: string, options: DeleteOptions): Promise<void> {
  const location = usage(this, graph, options.client, options.store);
  await withStore(location, async (store) => {
    const deleted = await store.delete(graph, options.client, id);
    if (!deleted) throw new Error(`no operation ${id} is registered for client "${options.client}" of graph "${graph}" in ${store.location}`);
    process.stdout.write(`deleted operation ${deleted.id}\n`);
  });
}

async function runList(this: Command, graph: string, options: ListOptions): Promise<void> {
  const location = usage(this, graph, options.client, options.store);
  await withStore(location, async (store) => {
    const rows = await store.list(graph, options.client);
    if (options.format === 'json') {
      process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      return;
    }
    if (rows.length === 0) {
      const whose = options.client === undefined ? '' : ` for client "${options.client}"`;
      process.stdout.write(`no operations registered${whose} in graph "${graph}"\n`);
      return;
    }
    process.stdout.write(formatTable(rows));
  });
}

/** Columns a management view shows: graph, client, id, name, first pushed (aliases beside the id). */
function formatTable(rows: readonly RegisteredOperation[]): string {
  const header = ['GRAPH', 'CLIENT', 'ID', 'NAME', 'FIRST PUSHED'];
  const cells = rows.map((row) => [
    row.graph,
    row.client,
    row.aliases.length > 0 ? `${row.id} (alias ${row.aliases.join(', ')})` : row.id,
    row.name ?? '(anonymous)',
    row.firstPushedAt,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((line) => line[column]!.length)));
  const render = (line: readonly string[]) => `${line.map((cell, column) => (column === line.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')}\n`;
  return [header, ...cells].map(render).join('');
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

const formatOption = () => new Option('--format <format>', 'output format').choices(['text', 'json']).default('text');

/** Adds `operations push|delete|list` to the `switchyard` program and returns the `operations` command. */
export function registerOperationsCommand(program: Command): Command {
  const operations = program.command('operations').description('Register persisted operations per graph and client (docs/persisted-operations.md)').exitOverride(exitForUsageError);
  operations
    .command('push')
    .description('Push operations from .graphql files, Apollo persisted-query manifests or Relay query maps')
    .argument('<graph>', 'federated graph name (graph.name of the router)')
    .requiredOption('-c, --client <client>', 'client name the operations belong to (registered on first push)')
    .option('-f, --file <file>', 'file to push; repeat for more', collect)
    .option('--store <loc>', STORE_HELP)
    .addOption(formatOption())
    .addHelpText('after', PUSH_HELP)
    .exitOverride(exitForUsageError)
    .action(runPush);
  operations
    .command('delete')
    .description('Delete one operation of a client (by SHA-256 id or Relay alias)')
    .argument('<graph>', 'federated graph name')
    .argument('<id>', 'SHA-256 id or alias of the operation')
    .requiredOption('-c, --client <client>', 'client name the operation belongs to')
    .option('--store <loc>', STORE_HELP)
    .exitOverride(exitForUsageError)
    .action(runDelete);
  operations
    .command('list')
    .description('List the operations of a graph: client, id, name, first pushed')
    .argument('<graph>', 'federated graph name')
    .option('-c, --client <client>', 'only this client')
    .option('--store <loc>', STORE_HELP)
    .addOption(formatOption())
    .exitOverride(exitForUsageError)
    .action(runList);
  return operations;
}
