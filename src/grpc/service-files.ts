/**
 * `switchyard grpc-service generate`: reads the schema (and the previous
 * lock, if any) and writes what `wgc grpc-service generate` writes into the
 * output folder: `mapping.json`, `service.proto` and
 * `service.proto.lock.json` for a schema service, `service.proto` and the
 * lock for an operations service (`--with-operations`).
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RouterError } from '../kernel/errors.js';
import { checkNames, checkSchema, generateService, readLock } from './generate.js';
import { generateOperationsService } from './operations-service.js';
import { DEFAULT_PACKAGE, serviceNameFor } from './package-name.js';

/** The file names a generated service is written under (Cosmo's names). */
export const SERVICE_FILES = { proto: 'service.proto', mapping: 'mapping.json', lock: 'service.proto.lock.json' } as const;

/** Options of `writeServiceFiles`. */
export interface WriteServiceFilesOptions {
  /** The GraphQL schema file. */
  readonly schemaFile: string;
  /** Folder to write into; created when missing. */
  readonly outDir: string;
  /** Proto package. Default: `service.v1`. */
  readonly packageName?: string;
  /** Proto service name, in its final form. Default: named after the package (`serviceNameFor`). */
  readonly serviceName?: string;
  /** `option go_package`. Default: none. */
  readonly goPackage?: string;
  /** The lock to start from. Default: `service.proto.lock.json` in `outDir`, when there is one. The lock is always written to `outDir`. */
  readonly lockFile?: string;
  /** Generate one RPC per operation in this folder instead of one per schema field; no `mapping.json` then. Default: none. */
  readonly operationsDir?: string;
  /** Operations only: scalar name -> proto type. Default: none. */
  readonly customScalarMappings?: Readonly<Record<string, string>>;
  /** Operations only: deepest nesting followed. Default: protographic's (50). */
  readonly maxDepth?: number;
}

/** What `writeServiceFiles` wrote. */
export interface WrittenServiceFiles {
  readonly serviceName: string;
  readonly packageName: string;
  /** Absolute paths of the written files, in the order wgc lists them; `mapping` only for a schema service, `lock` only when the generator gave one. */
  readonly files: { readonly proto: string; readonly mapping?: string; readonly lock?: string };
  /** Operation files compiled (relative to the operations folder), for an operations service. */
  readonly operationFiles?: readonly string[];
  /** The generator's warnings about the schema. */
  readonly warnings: readonly string[];
}

function failed(message: string, cause?: unknown): RouterError {
  return new RouterError('GRPC_GENERATION_FAILED', message, { cause });
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

async function readLockFile(path: string, required: boolean): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT' && !required) return undefined;
    const reason = errorCode(error) === 'ENOENT' ? 'file not found' : error instanceof Error ? error.message : String(error);
    throw failed(`lock ${path}: ${reason}`, error);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw failed(`${path}: not valid JSON (delete it to renumber every field, which breaks existing clients)`, error);
  }
}

async function checkOutDir(outDir: string): Promise<void> {
  const info = await stat(outDir).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw failed(`output ${outDir}: ${error instanceof Error ? error.message : String(error)}`, error);
  });
  if (info && !info.isDirectory()) throw failed(`output ${outDir} is not a directory`);
}

/**
 * Generates the service files from a schema file, as `wgc grpc-service
 * generate` does: from the schema, `mapping.json`, `service.proto` and
 * `service.proto.lock.json`; with `operationsDir`, `service.proto` and the
 * lock. The previous lock keeps field numbers stable: fields keep their
 * numbers, new ones get the next free number, removed ones are reserved.
 * Throws `GRPC_GENERATION_FAILED`; nothing is written then.
 */
export async function writeServiceFiles(options: WriteServiceFilesOptions): Promise<WrittenServiceFiles> {
  const { packageName = DEFAULT_PACKAGE } = options;
  const serviceName = options.serviceName ?? serviceNameFor(packageName);
  const schemaPath = resolve(options.schemaFile);
  const out = resolve(options.outDir);
  let sdl: string;
  try {
    sdl = await readFile(schemaPath, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    const reason = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : String(error);
    throw failed(`schema ${schemaPath}: ${reason}`, error);
  }
  const lockPath = options.lockFile === undefined ? join(out, SERVICE_FILES.lock) : resolve(options.lockFile);
  const files = { proto: join(out, SERVICE_FILES.proto), mapping: join(out, SERVICE_FILES.mapping), lock: join(out, SERVICE_FILES.lock) };
  await checkOutDir(out);
  const previousLock = await readLockFile(lockPath, options.lockFile !== undefined);
  // Checked and generated in full before anything is written: a failure leaves the folder as it was.
  if (options.operationsDir !== undefined) {
    checkNames(packageName, options.goPackage);
    const lock = readLock(previousLock, lockPath);
    const warnings = await checkSchema(sdl, schemaPath);
    const service = await generateOperationsService({
      sdl,
      operationsDir: options.operationsDir,
      serviceName,
      packageName,
      goPackage: options.goPackage,
      lock,
      customScalarMappings: options.customScalarMappings,
      maxDepth: options.maxDepth,
    });
    await mkdir(out, { recursive: true });
    await writeFile(files.proto, service.proto);
    if (service.lock) await writeFile(files.lock, JSON.stringify(service.lock, null, 2));
    return {
      serviceName,
      packageName,
      files: service.lock ? { proto: files.proto, lock: files.lock } : { proto: files.proto },
      operationFiles: service.files,
      warnings,
    };
  }
  const generated = await generateService({ sdl, packageName, serviceName, goPackage: options.goPackage, lock: previousLock, origin: schemaPath, lockOrigin: lockPath });
  await mkdir(out, { recursive: true });
  await writeFile(files.mapping, generated.mappingText);
  await writeFile(files.proto, generated.proto);
  await writeFile(files.lock, generated.lockText);
  return { serviceName, packageName, files, warnings: generated.warnings };
}
