/**
 * `switchyard grpc-service list-templates | init | generate`: start a gRPC
 * service from a template, and generate its proto, mapping and lock file
 * from its GraphQL schema, or a service of operations (docs/grpc.md). The
 * `generate` arguments are wgc's, with the same results.
 */
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { Argument, InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_PACKAGE, protoPackageProblem } from '../../grpc/package-name.js';
import { serviceNameFromArgument } from '../../grpc/service-name.js';
import type { WrittenServiceFiles } from '../../grpc/service-files.js';
import { GRPC_SERVICE_TEMPLATES, initProject, templateNames } from '../../grpc/templates.js';
import { EXIT_FAILED, exitForUsageError, writeProblem } from '../cli-support.js';

interface InitOptions {
  template: string;
  directory: string;
  force?: boolean;
}

interface GenerateOptions {
  input: string;
  output: string;
  packageName: string;
  goPackage?: string;
  protoLock?: string;
  withOperations?: string;
  customScalarMapping?: Record<string, string>;
  customScalarMappingFile?: string;
  maxDepth?: number;
  connectContract?: string;
}

function packageName(value: string): string {
  const problem = protoPackageProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function serviceName(value: string): string {
  const name = serviceNameFromArgument(value);
  if (name === undefined)
    throw new InvalidArgumentError(`"${value}" does not make a proto service name: it needs a letter first (it is written in PascalCase: projects-service -> ProjectsService)`);
  return name;
}

function positiveInteger(value: string): number {
  if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError(`must be a positive integer, not "${value}"`);
  return Number(value);
}

/** Scalar name -> proto type, as `--custom-scalar-mapping` and its file give it. */
function scalarMappings(text: string, origin: string): Record<string, string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InvalidArgumentError(`${origin} is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  const isMap = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((type) => typeof type === 'string' && type !== '');
  if (!isMap) throw new InvalidArgumentError(`${origin} must be a JSON object of scalar name -> proto type, e.g. {"DateTime":"google.protobuf.Timestamp"}`);
  return value as Record<string, string>;
}

function listTemplates(): void {
  const width = Math.max(...GRPC_SERVICE_TEMPLATES.map((t) => t.name.length));
  for (const template of GRPC_SERVICE_TEMPLATES) {
    const aliases = template.aliases.length === 0 ? '' : ` (also as ${template.aliases.join(', ')}, Cosmo's name)`;
    process.stdout.write(`${template.name.padEnd(width)}  ${template.description}${aliases}\n`);
  }
}

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}

async function runInit(options: InitOptions): Promise<void> {
  try {
    const project = await initProject({ template: options.template, directory: options.directory, force: options.force });
    const where = shown(project.directory);
    process.stdout.write(`created a ${project.template.name} gRPC service in ${where} (${project.files.length} files)\n`);
    const steps =
      project.template.name === 'typescript'
        ? [`cd ${where}`, 'npm install', 'npm run bootstrap', 'npm start']
        : [`cd ${where}`, 'make install-tools', 'make bootstrap', 'make start'];
    process.stdout.write(`next:\n${steps.map((step) => `  ${step}\n`).join('')}then open http://localhost:3002 (README.md has the details)\n`);
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
}

async function customScalars(options: GenerateOptions): Promise<Record<string, string> | undefined> {
  if (options.customScalarMappingFile === undefined) return options.customScalarMapping;
  const path = resolve(options.customScalarMappingFile);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`custom scalar mapping file ${path}: ${error instanceof Error && 'code' in error && error.code === 'ENOENT' ? 'file not found' : String(error)}`, {
      cause: error,
    });
  }
  return scalarMappings(text, path);
}

function describeWritten(written: WrittenServiceFiles): string {
  const { proto, mapping, lock } = written.files;
  const files = [proto, mapping, lock].filter((file) => file !== undefined).map(shown);
  const what = written.operationFiles
    ? `service ${written.serviceName}, from ${written.operationFiles.length} operation file${written.operationFiles.length === 1 ? '' : 's'}`
    : `service ${written.serviceName}`;
  return `wrote ${files.join(', ')} (package ${written.packageName}, ${what})\n`;
}

async function runGenerate(name: string | undefined, options: GenerateOptions): Promise<void> {
  if (options.connectContract !== undefined) {
    // The Connect contract (docs/connect.md) first: a contract that fails writes nothing at all.
    const { generateContractFromCli } = await import('../../connect/generate-command.js');
    if (!(await generateContractFromCli(options.input, options.connectContract))) {
      process.exitCode = EXIT_FAILED;
      return;
    }
  }
  if (options.withOperations === undefined) {
    const unused = [
      ['--custom-scalar-mapping', options.customScalarMapping],
      ['--custom-scalar-mapping-file', options.customScalarMappingFile],
      ['--max-depth', options.maxDepth],
    ].filter(([, value]) => value !== undefined);
    for (const [flag] of unused) process.stderr.write(`warning: ${flag} applies to --with-operations only; ignored\n`);
  }
  try {
    const { writeServiceFiles } = await import('../../grpc/service-files.js');
    const written = await writeServiceFiles({
      schemaFile: options.input,
      outDir: options.output,
      packageName: options.packageName,
      serviceName: name,
      goPackage: options.goPackage,
      lockFile: options.protoLock,
      operationsDir: options.withOperations,
      customScalarMappings: await customScalars(options),
      maxDepth: options.maxDepth,
    });
    for (const warning of written.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(describeWritten(written));
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
}

const GENERATE_HELP = `
From the schema, writes into the output folder (as wgc grpc-service generate):
  service.proto            the service: one RPC per Query/Mutation field (Query<Field>, Mutation<Field>),
                           one lookup RPC per @key, one RPC per field with arguments
  mapping.json             how the router turns GraphQL fetches into these RPCs
  service.proto.lock.json  field numbers, kept stable across regenerations (commit it)
With --with-operations, service.proto has one RPC per operation instead, and there is no mapping.json.

[name] is the proto service's name, in PascalCase as wgc writes it: projects-service -> ProjectsService.
Without it the service is named after the package: service.v1 -> ServiceService, acme.projects.v1 -> ProjectsService.

Examples:
  $ switchyard grpc-service generate -i src/graph/schema.graphql -o proto/service/v1 ProjectsService
  $ switchyard grpc-service generate -i schema.graphql -o services/projects/v1 -w services/projects/v1 ProjectsService`;

/** Adds `grpc-service` and its subcommands to the `switchyard` program. */
export function registerGrpcServiceCommand(program: Command): Command {
  const group = program
    .command('grpc-service')
    .description('Build gRPC services that join the graph as subgraphs, from a GraphQL schema (docs/grpc.md)')
    .exitOverride(exitForUsageError);
  group.command('list-templates').description('List the project templates of `grpc-service init`').exitOverride(exitForUsageError).action(listTemplates);
  group
    .command('init')
    .description('Create a gRPC service project from a template: schema, build scripts, router.compose.yaml, router.config.yaml')
    .addOption(new Option('-t, --template <name>', 'template to use').choices(templateNames()).makeOptionMandatory())
    .requiredOption('-d, --directory <dir>', 'directory to create the project in (must be empty or new)')
    .option('--force', 'write into a non-empty directory, replacing files of the same name')
    .exitOverride(exitForUsageError)
    .action(runInit);
  group
    .command('generate')
    .description('Generate service.proto, mapping.json and service.proto.lock.json from a GraphQL schema, or a service of operations (as wgc grpc-service generate)')
    .addArgument(new Argument('[name]', 'name of the proto service (default: named after the package)').argParser(serviceName))
    .requiredOption('-i, --input <schema.graphql>', 'the GraphQL schema of the service')
    .option('-o, --output <dir>', 'folder to write the files into (created if missing)', '.')
    .option('-p, --package-name <package>', 'proto package', packageName, DEFAULT_PACKAGE)
    .option('-g, --go-package <path>', 'adds option go_package = "<path>" to the proto')
    .option('-l, --proto-lock <file>', 'lock file to start from (default: service.proto.lock.json in the output folder); the new lock is written to the output folder')
    .option(
      '-w, --with-operations <dir>',
      'one RPC per operation in the .graphql, .gql, .graphqls and .gqls files under <dir> (searched recursively) instead of one per schema field',
    )
    .addOption(
      new Option('--custom-scalar-mapping <json>', 'with --with-operations: proto types of custom scalars, e.g. \'{"DateTime":"google.protobuf.Timestamp"}\'')
        .argParser((value) => scalarMappings(value, '--custom-scalar-mapping'))
        .conflicts('customScalarMappingFile'),
    )
    .option('--custom-scalar-mapping-file <file>', 'with --with-operations: the same mapping, from a JSON file')
    .option('--max-depth <n>', 'with --with-operations: deepest selection or fragment nesting followed (default 50)', positiveInteger)
    .option(
      '--connect-contract <dir>',
      'also write the Connect contract of the operations in <dir> into <dir>: contract.proto, its lock and contract.openapi.json (docs/connect.md)',
    )
    .addHelpText('after', GENERATE_HELP)
    .exitOverride(exitForUsageError)
    .action(runGenerate);
  return group;
}
