/**
 * `switchyard grpc-service list-templates | init | generate`: start a gRPC
 * service from a template, and generate its proto, mapping and lock file
 * from its GraphQL schema (docs/grpc.md).
 */
import { relative } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { DEFAULT_PACKAGE, packageNameProblem } from '../../grpc/package-name.js';
import { writeServiceFiles } from '../../grpc/service-files.js';
import { GRPC_SERVICE_TEMPLATES, initProject } from '../../grpc/templates.js';
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
  withOperations?: string;
}

function packageName(value: string): string {
  const problem = packageNameProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}

function listTemplates(): void {
  const width = Math.max(...GRPC_SERVICE_TEMPLATES.map((t) => t.name.length));
  for (const template of GRPC_SERVICE_TEMPLATES) process.stdout.write(`${template.name.padEnd(width)}  ${template.description}\n`);
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

async function runGenerate(options: GenerateOptions): Promise<void> {
  if (options.withOperations !== undefined) {
    // The Connect contract (docs/connect.md) first: a contract that fails writes nothing at all.
    const { generateContractFromCli } = await import('../../connect/generate-command.js');
    if (!(await generateContractFromCli(options.input, options.withOperations))) {
      process.exitCode = EXIT_FAILED;
      return;
    }
  }
  try {
    const written = await writeServiceFiles({ schemaFile: options.input, outDir: options.output, packageName: options.packageName });
    for (const warning of written.warnings) process.stderr.write(`warning: ${warning}\n`);
    process.stdout.write(
      `wrote ${shown(written.files.proto)}, ${shown(written.files.mapping)}, ${shown(written.files.lock)} (package ${written.packageName}, service ${written.serviceName})\n`,
    );
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
}

const GENERATE_HELP = `
Writes into the output folder:
  service.proto            the service: one RPC per Query/Mutation field (Query<Field>, Mutation<Field>),
                           one lookup RPC per @key, one RPC per field with arguments
  mapping.json             how the router turns GraphQL fetches into these RPCs
  service.proto.lock.json  field numbers, kept stable across regenerations (commit it)

The service is named after the package: service.v1 -> ServiceService, acme.projects.v1 -> ProjectsService.

Example:
  $ switchyard grpc-service generate -i src/graph/schema.graphql -o proto/service/v1`;

/** Adds `grpc-service` and its subcommands to the `switchyard` program. */
export function registerGrpcServiceCommand(program: Command): Command {
  const group = program
    .command('grpc-service')
    .description('Build gRPC services that join the graph as subgraphs, from a GraphQL schema (docs/grpc.md)')
    .exitOverride(exitForUsageError);
  group
    .command('list-templates')
    .description('List the project templates of `grpc-service init`')
    .exitOverride(exitForUsageError)
    .action(listTemplates);
  group
    .command('init')
    .description('Create a gRPC service project from a template: schema, build scripts, router.compose.yaml, router.config.yaml')
    .addOption(new Option('-t, --template <name>', 'template to use').choices(GRPC_SERVICE_TEMPLATES.map((t) => t.name)).makeOptionMandatory())
    .requiredOption('-d, --directory <dir>', 'directory to create the project in (must be empty or new)')
    .option('--force', 'write into a non-empty directory, replacing files of the same name')
    .exitOverride(exitForUsageError)
    .action(runInit);
  group
    .command('generate')
    .description('Generate service.proto, mapping.json and service.proto.lock.json from a GraphQL schema')
    .requiredOption('-i, --input <schema.graphql>', 'the GraphQL schema of the service')
    .requiredOption('-o, --output <dir>', 'folder to write the three files into (created if missing)')
    .option('-p, --package-name <package>', 'proto package, ending with a version segment', packageName, DEFAULT_PACKAGE)
    .option('--with-operations <dir>', 'also generate the Connect contract of the operations in <dir>: contract.proto, its lock and contract.openapi.json, written into <dir> (docs/connect.md)')
    .addHelpText('after', GENERATE_HELP)
    .exitOverride(exitForUsageError)
    .action(runGenerate);
  return group;
}
