/**
 * `switchyard grpc-service list-templates | init`: the project templates
 * shipped in this package's `templates/grpc-service/<name>` folders.
 */
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One template `init` can write. */
export interface GrpcServiceTemplate {
  /** `--template` value. */
  readonly name: string;
  /** One line for `list-templates`. */
  readonly description: string;
  /** Other `--template` values that pick it: the name of Cosmo's template for the same stack, so a `wgc grpc-service init` line works. */
  readonly aliases: readonly string[];
}

/** The templates, in the order `list-templates` prints them. */
export const GRPC_SERVICE_TEMPLATES: readonly GrpcServiceTemplate[] = [
  {
    name: 'typescript',
    description: 'TypeScript service on Connect RPC (@connectrpc/connect-node): npm run bootstrap, then npm start runs it (gRPC on 50051) with the router (3002)',
    aliases: ['typescript-connect-rpc-fastify'],
  },
  {
    name: 'go',
    description: 'Go service on Connect RPC (connectrpc.com/connect): make generates and builds it with your Go toolchain, make start runs it with the router',
    aliases: ['golang-connect-rpc'],
  },
];

/** Every `--template` value accepted: names, then Cosmo's names. */
export function templateNames(): string[] {
  return [...GRPC_SERVICE_TEMPLATES.map((t) => t.name), ...GRPC_SERVICE_TEMPLATES.flatMap((t) => t.aliases)];
}

/** The template a `--template` value picks, by name or Cosmo's name. */
export function findTemplate(name: string): GrpcServiceTemplate | undefined {
  return GRPC_SERVICE_TEMPLATES.find((t) => t.name === name || t.aliases.includes(name));
}

/** What `initProject` wrote. */
export interface InitializedProject {
  /** Absolute path of the project. */
  readonly directory: string;
  readonly template: GrpcServiceTemplate;
  /** Files written, relative to the project, sorted. */
  readonly files: readonly string[];
}

/** Options of `initProject`. */
export interface InitProjectOptions {
  /** Template name (`typescript` or `go`), or Cosmo's name for it. */
  readonly template: string;
  /** Where the project goes; created when missing. */
  readonly directory: string;
  /** Write into a non-empty directory, replacing files of the same name. Default: false. */
  readonly force?: boolean;
}

/** A problem with the user's input to `init` (exit code 1), as opposed to a failure of the machine. */
export class InitRefusedError extends Error {
  override readonly name = 'InitRefusedError';
}

/** This package's root: the folder of its package.json, from source or from dist. */
function packageRoot(): string {
  let folder = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'switchyard') return folder;
    const parent = dirname(folder);
    if (parent === folder) throw new Error('cannot find the switchyard package folder (templates are missing)');
    folder = parent;
  }
}

/** Project names become npm package names and Go module path segments. */
function projectNameOf(directory: string): string {
  const name = basename(directory)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[._-]+$/g, '');
  return name === '' ? 'grpc-service' : name;
}

async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { withFileTypes: true, recursive: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => relative(folder, join(entry.parentPath, entry.name)));
}

// npm leaves `.gitignore` files out of published packages, so templates keep theirs without the dot.
function targetName(file: string): string {
  return basename(file) === 'gitignore' ? join(dirname(file), '.gitignore') : file;
}

const TEXT_FILE = /\.(json|ya?ml|md|ts|mjs|go|mod|graphql|proto)$|(^|\/)(Makefile|gitignore)$/;

/**
 * The npm dependency spec of this switchyard package for a generated
 * project: its folder, as a `file:` dependency. The npm registry's
 * `switchyard` is an unrelated package, so a version range would install
 * that one (and whatever its owner publishes next).
 */
export function switchyardDependency(packageFolder: string): string {
  return `file:${packageFolder}`;
}

/**
 * Writes a template into a directory. Refuses an unknown template name and
 * a non-empty directory (unless `force`) with `InitRefusedError`.
 */
export async function initProject({ template: name, directory, force = false }: InitProjectOptions): Promise<InitializedProject> {
  const template = findTemplate(name);
  if (!template) throw new InitRefusedError(`unknown template "${name}"; available: ${templateNames().join(', ')}`);
  const target = resolve(directory);
  const info = await stat(target).catch(() => undefined);
  if (info && !info.isDirectory()) throw new InitRefusedError(`${target} exists and is not a directory`);
  if (info && !force && (await readdir(target)).length > 0) {
    throw new InitRefusedError(`${target} is not empty; choose an empty or new directory, or pass --force to write into it`);
  }
  const root = packageRoot();
  const source = join(root, 'templates', 'grpc-service', template.name);
  const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { version: string };
  const projectName = projectNameOf(target);
  const values: Record<string, string> = {
    __PROJECT_NAME__: projectName,
    __SWITCHYARD_VERSION__: version,
    // Only ever inside a JSON string (package.json): escaped as one.
    __SWITCHYARD_DEPENDENCY__: JSON.stringify(switchyardDependency(root)).slice(1, -1),
    __GO_MODULE__: `example.com/${projectName}`,
  };
  const files: string[] = [];
  for (const file of await listFiles(source)) {
    const to = join(target, targetName(file));
    await mkdir(dirname(to), { recursive: true });
    if (TEXT_FILE.test(file)) {
      const text = await readFile(join(source, file), 'utf8');
      await writeFile(
        to,
        text.replace(/__(PROJECT_NAME|SWITCHYARD_VERSION|SWITCHYARD_DEPENDENCY|GO_MODULE)__/g, (placeholder) => values[placeholder] ?? placeholder),
      );
    } else {
      await copyFile(join(source, file), to);
    }
    files.push(relative(target, to));
  }
  return { directory: target, template, files: files.sort() };
}
