/**
 * Writes a contract's generated files into its folder, beside its
 * operations: `contract.proto`, `contract.proto.lock.json` and
 * `contract.openapi.json`. The folder is then a complete contract, ready to
 * be served from `connect_rpc.services.path` (docs/connect.md).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { GraphQLSchema } from 'graphql';
import type { ProtoLock } from '@wundergraph/protographic';
import { z } from 'zod';
import { compileContract } from './compile-contract.js';
import { contractError, readContractOperations } from './contract-operations.js';
import { contractNamesFor } from './contract-package.js';
import { loadContractProto } from './contract-proto.js';
import { openApiDocument } from './openapi-document.js';

/** File names of a contract's generated files. */
export const CONTRACT_FILES = { proto: 'contract.proto', lock: 'contract.proto.lock.json', openapi: 'contract.openapi.json' } as const;

/** Options of `writeContractFiles`. */
export interface WriteContractFilesOptions {
  /** The contract folder: its `.graphql` operations are read, the files written beside them. */
  readonly dir: string;
  /** The schema the operations run against: SDL text or a built schema (for a federated graph, its client-facing schema). */
  readonly schema: string | GraphQLSchema;
  /** `servers[0].url` of the OpenAPI document. Default: `http://localhost:5026`. */
  readonly serverUrl?: string;
}

/** What `writeContractFiles` wrote. */
export interface WrittenContract {
  readonly packageName: string;
  readonly serviceName: string;
  /** RPC names, in proto order. */
  readonly methods: readonly string[];
  /** Absolute paths of the written files. */
  readonly files: { readonly proto: string; readonly lock: string; readonly openapi: string };
}

const numbered = z.looseObject({ fields: z.record(z.string(), z.int().positive()), reservedNumbers: z.array(z.int().positive()).optional() });
const lockSchema = z.looseObject({ version: z.string(), messages: z.record(z.string(), numbered), enums: z.record(z.string(), numbered) });

async function readLock(path: string): Promise<ProtoLock | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return undefined;
    throw contractError(`cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw contractError(`${path}: not valid JSON (delete it to renumber every field, which breaks existing clients)`, error);
  }
  if (parsed === null) return undefined;
  const result = lockSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw contractError(`${path}: not a proto lock file: ${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`);
  }
  return result.data as ProtoLock;
}

/**
 * Generates the contract of a folder and writes its files. The lock already
 * there keeps field numbers stable across regenerations. Throws
 * `CONNECT_CONTRACT_INVALID`.
 */
export async function writeContractFiles({ dir, schema, serverUrl }: WriteContractFilesOptions): Promise<WrittenContract> {
  const folder = resolve(dir);
  const operations = await readContractOperations(folder);
  const names = contractNamesFor(folder);
  const files = { proto: join(folder, CONTRACT_FILES.proto), lock: join(folder, CONTRACT_FILES.lock), openapi: join(folder, CONTRACT_FILES.openapi) };
  const lock = await readLock(files.lock);
  const compiled = await compileContract({ schema, operations, lock, ...names });
  const loaded = loadContractProto(compiled.proto, files.proto);
  const document = openApiDocument(loaded.service, {
    comments: loaded.comments,
    operations: new Map(operations.map((operation) => [operation.name, operation.text])),
    serverUrl,
  });
  await writeFile(files.proto, compiled.proto);
  await writeFile(files.lock, JSON.stringify(compiled.lock, null, 2));
  await writeFile(files.openapi, `${JSON.stringify(document, null, 2)}\n`);
  return { ...names, methods: loaded.service.methods.map((method) => method.name), files };
}
