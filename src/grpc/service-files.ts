/**
 * `switchyard grpc-service generate`: reads the schema (and the previous
 * lock, if any) and writes `service.proto`, `mapping.json` and
 * `service.proto.lock.json` into the output folder.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RouterError } from '../kernel/errors.js';
import { generateService, type GeneratedService } from './generate.js';

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
}

/** What `writeServiceFiles` wrote. */
export interface WrittenServiceFiles extends GeneratedService {
  /** Absolute paths of the written files. */
  readonly files: { readonly proto: string; readonly mapping: string; readonly lock: string };
}

function failed(message: string, cause?: unknown): RouterError {
  return new RouterError('GRPC_GENERATION_FAILED', message, { cause });
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

async function readLockFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw failed(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw failed(`${path}: not valid JSON (delete it to renumber every field, which breaks existing clients)`, error);
  }
}

async function prepareOutDir(outDir: string): Promise<void> {
  const info = await stat(outDir).catch((error: unknown) => {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw error;
  });
  if (info && !info.isDirectory()) throw failed(`output ${outDir} is not a directory`);
  if (!info) await mkdir(outDir, { recursive: true });
}

/**
 * Generates the service files from a schema file. The lock already in the
 * output folder keeps field numbers stable: fields keep their numbers, new
 * ones get the next free number, removed ones are reserved. Throws
 * `GRPC_GENERATION_FAILED`.
 */
export async function writeServiceFiles({ schemaFile, outDir, packageName }: WriteServiceFilesOptions): Promise<WrittenServiceFiles> {
  const schemaPath = resolve(schemaFile);
  const out = resolve(outDir);
  let sdl: string;
  try {
    sdl = await readFile(schemaPath, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    const reason = code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : String(error);
    throw failed(`schema ${schemaPath}: ${reason}`, error);
  }
  const files = { proto: join(out, SERVICE_FILES.proto), mapping: join(out, SERVICE_FILES.mapping), lock: join(out, SERVICE_FILES.lock) };
  await prepareOutDir(out);
  const lock = await readLockFile(files.lock);
  const generated = await generateService({ sdl, packageName, lock, origin: schemaPath, lockOrigin: files.lock });
  await writeFile(files.mapping, generated.mappingText);
  await writeFile(files.proto, generated.proto);
  await writeFile(files.lock, generated.lockText);
  return { ...generated, files };
}
