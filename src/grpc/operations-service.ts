/**
 * `grpc-service generate --with-operations <dir>`: a service with one RPC per
 * operation, instead of one per schema field. Done as wgc does it, so both
 * write the same `service.proto` and lock: every operation file under the
 * folder (recursively, sorted by path) is compiled on its own by
 * protographic, with the lock carried from one file to the next; the
 * results are merged into one service (first definition of a message or
 * enum wins) and printed once.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import type { ProtoLock } from '@wundergraph/protographic';
import { RouterError } from '../kernel/errors.js';

/** Extensions read as operation files, compared case-insensitively (wgc's list). */
export const OPERATION_FILE_EXTENSIONS = ['.graphql', '.gql', '.graphqls', '.gqls'] as const;

/** Options of `generateOperationsService`. */
export interface OperationsServiceOptions {
  /** The schema the operations run against (SDL text). */
  readonly sdl: string;
  /** Folder holding the operation files, searched recursively. */
  readonly operationsDir: string;
  readonly serviceName: string;
  readonly packageName: string;
  /** `option go_package`. Default: none. */
  readonly goPackage?: string;
  /** The previous lock, already checked. Default: none. */
  readonly lock?: ProtoLock;
  /** Scalar name -> proto type (`DateTime` -> `google.protobuf.Timestamp`). Default: protographic's. */
  readonly customScalarMappings?: Readonly<Record<string, string>>;
  /** Deepest selection or fragment nesting followed. Default: protographic's (50). */
  readonly maxDepth?: number;
}

/** A generated operations service. */
export interface OperationsService {
  /** `service.proto` text. */
  readonly proto: string;
  /** The lock after the last file; `undefined` when the generator gave none (wgc then writes no lock file). */
  readonly lock: ProtoLock | undefined;
  /** Operation files read, relative to the folder, in RPC order. */
  readonly files: readonly string[];
}

function failed(message: string, cause?: unknown): RouterError {
  return new RouterError('GRPC_GENERATION_FAILED', message, { cause });
}

/** Operation files under `dir`, relative paths sorted as wgc sorts them (plain string order). */
async function operationFiles(dir: string): Promise<string[]> {
  const info = await stat(dir).catch(() => undefined);
  if (!info) throw failed(`operations folder ${dir}: no such folder`);
  if (!info.isDirectory()) throw failed(`operations folder ${dir}: not a directory`);
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && (OPERATION_FILE_EXTENSIONS as readonly string[]).includes(extname(entry.name).toLowerCase()))
    .map((entry) => join(entry.parentPath, entry.name).slice(dir.length + 1))
    .sort();
  if (files.length === 0) throw failed(`operations folder ${dir}: no operation files (${OPERATION_FILE_EXTENSIONS.join(', ')})`);
  return files;
}

/**
 * Compiles the operations under `operationsDir` into one service. Throws
 * `GRPC_GENERATION_FAILED` naming the file when an operation does not
 * validate against the schema or cannot be compiled.
 */
export async function generateOperationsService(options: OperationsServiceOptions): Promise<OperationsService> {
  // Loaded here: the compiler pulls in Cosmo's composition library, which only generation needs.
  const { compileOperationsToProto, rootToProtoText, protobuf } = await import('@wundergraph/protographic');
  const dir = resolve(options.operationsDir);
  const files = await operationFiles(dir);
  const { serviceName, packageName, goPackage } = options;
  let lock = options.lock;
  const roots: InstanceType<typeof protobuf.Root>[] = [];
  for (const file of files) {
    const text = await readFile(join(dir, file), 'utf8');
    try {
      const result = compileOperationsToProto(text, options.sdl, {
        serviceName,
        packageName,
        goPackage,
        includeComments: true,
        // Queries are marked side-effect free, so Connect clients may send them as GET (as wgc does).
        queryIdempotency: 'NO_SIDE_EFFECTS',
        lockData: lock,
        customScalarMappings: options.customScalarMappings ? { ...options.customScalarMappings } : undefined,
        maxDepth: options.maxDepth,
      });
      roots.push(result.root);
      lock = result.lockData ?? undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const reason = message.replace(/^Invalid GraphQL operation:\s*/, 'does not validate against the schema: ').replace(/\n+/g, '; ');
      throw failed(`${join(dir, file)}: ${reason}`, error);
    }
  }
  const merged = roots.length === 1 ? roots[0]! : mergeRoots(protobuf, roots, serviceName);
  const proto = rootToProtoText(merged, { packageName, goPackage, includeComments: true });
  return { proto, lock, files };
}

type Protobuf = typeof import('@wundergraph/protographic')['protobuf'];

/** One root of all files' definitions: a message or enum defined by several files is kept once, every RPC goes into one service. */
function mergeRoots(protobuf: Protobuf, roots: readonly InstanceType<Protobuf['Root']>[], serviceName: string): InstanceType<Protobuf['Root']> {
  const merged = new protobuf.Root();
  const seenMessages = new Set<string>();
  const seenEnums = new Set<string>();
  const service = new protobuf.Service(serviceName);
  for (const root of roots) {
    for (const nested of [...root.nestedArray]) {
      if (nested instanceof protobuf.Type) {
        if (seenMessages.has(nested.name)) continue;
        seenMessages.add(nested.name);
        merged.add(nested);
      } else if (nested instanceof protobuf.Enum) {
        if (seenEnums.has(nested.name)) continue;
        seenEnums.add(nested.name);
        merged.add(nested);
      } else if (nested instanceof protobuf.Service) {
        for (const method of Object.values(nested.methods)) service.add(method);
      }
    }
  }
  merged.add(service);
  return merged;
}
