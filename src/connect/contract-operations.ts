/**
 * The operations of a Connect contract: the `.graphql` files of a contract
 * folder, one named operation per file (docs/connect.md). The rules are the
 * ones Cosmo's operations-to-proto compiler keeps, checked here first so
 * every refusal names the file.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Kind, parse, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import { RouterError } from '../kernel/errors.js';

/** One operation of a contract: an RPC of its service. */
export interface ContractOperation {
  /** Operation name = RPC name (PascalCase). */
  readonly name: string;
  /** `query` (served over GET and POST) or `mutation` (POST only). */
  readonly type: 'query' | 'mutation';
  /** The file's text: the operation and the fragments it uses. */
  readonly text: string;
  /** The parsed file. */
  readonly document: DocumentNode;
  /** Path of the file, for messages. */
  readonly file: string;
}

/** File extensions read as operations. */
export const OPERATION_EXTENSIONS = ['.graphql', '.gql'] as const;

const PASCAL_CASE = /^[A-Z][A-Za-z0-9]*$/;

/** A `CONNECT_CONTRACT_INVALID` error. */
export function contractError(message: string, cause?: unknown): RouterError {
  return new RouterError('CONNECT_CONTRACT_INVALID', message, { cause });
}

/** True for the names of files `readContractOperations` reads. */
export function isOperationFile(name: string): boolean {
  const lower = name.toLowerCase();
  return OPERATION_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

/**
 * Parses one operation file and checks its rules: exactly one operation,
 * named in PascalCase, a query or a mutation, no alias on a root field.
 * Fragments may sit beside it. Throws `CONNECT_CONTRACT_INVALID` naming `file`.
 */
export function parseContractOperation(text: string, file: string): ContractOperation {
  let document: DocumentNode;
  try {
    document = parse(text);
  } catch (error) {
    throw contractError(`${file}: not a valid GraphQL document: ${error instanceof Error ? error.message : String(error)}`, error);
  }
  const operations = document.definitions.filter((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION);
  if (operations.length === 0) throw contractError(`${file}: holds no operation; a contract file holds exactly one named query or mutation`);
  if (operations.length > 1) {
    const names = operations.map((operation) => operation.name?.value ?? '(anonymous)').join(', ');
    throw contractError(`${file}: holds ${operations.length} operations (${names}); put each operation in a file of its own`);
  }
  const operation = operations[0]!;
  const name = operation.name?.value;
  if (name === undefined) {
    throw contractError(`${file}: the operation is anonymous; name it (for example "query GetProject(...)"): its name becomes the RPC name`);
  }
  if (!PASCAL_CASE.test(name)) {
    throw contractError(`${file}: operation name "${name}" must be PascalCase (a capital letter, then letters and digits), for example "${suggestName(name)}"`);
  }
  if (operation.operation === 'subscription') throw contractError(`${file}: ${name} is a subscription; contracts serve queries and mutations only`);
  for (const selection of operation.selectionSet.selections) {
    if (selection.kind === Kind.FIELD && selection.alias) {
      throw contractError(
        `${file}: ${name} aliases the root field "${selection.name.value}" as "${selection.alias.value}"; root fields become response message fields and cannot be aliased`,
      );
    }
  }
  return { name, type: operation.operation, text, document, file };
}

/** `get_project` -> `GetProject`, `getProject` -> `GetProject`. */
function suggestName(name: string): string {
  const words = name.match(/[A-Za-z][a-z0-9]*|[0-9]+/g) ?? ['Operation'];
  return words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}

/**
 * Reads every operation file directly in `dir` (not in subfolders), sorted
 * by file name so the RPC order is stable. Throws `CONNECT_CONTRACT_INVALID`
 * for a folder without operations, a broken file, or two operations of one name.
 */
export async function readContractOperations(dir: string): Promise<ContractOperation[]> {
  let names: string[];
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isFile() && isOperationFile(entry.name)).map((entry) => entry.name);
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? error.code : undefined;
    const reason = code === 'ENOENT' ? 'no such folder' : code === 'ENOTDIR' ? 'not a folder' : String(error);
    throw contractError(`operations folder ${dir}: ${reason}`, error);
  }
  names.sort();
  if (names.length === 0) throw contractError(`operations folder ${dir}: no ${OPERATION_EXTENSIONS.join(' or ')} files`);
  return parseOperationFiles(dir, names);
}

/** Parses the operation files `names` (relative to `dir`); one RPC name in two files is an error naming both. */
export async function parseOperationFiles(dir: string, names: readonly string[]): Promise<ContractOperation[]> {
  const operations: ContractOperation[] = [];
  const seen = new Map<string, string>();
  for (const name of names) {
    const file = join(dir, name);
    const operation = parseContractOperation(await readFile(file, 'utf8'), file);
    const earlier = seen.get(operation.name);
    if (earlier !== undefined) throw contractError(`${file}: operation ${operation.name} is also defined in ${earlier}; RPC names must be unique`);
    seen.set(operation.name, file);
    operations.push(operation);
  }
  return operations;
}
