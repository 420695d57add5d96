/**
 * The `--connect-contract <dir>` part of `switchyard grpc-service generate`:
 * the contract in `<dir>` is checked against the command's schema and its
 * proto, lock and OpenAPI document are written into `<dir>`.
 */
import { readFile } from 'node:fs/promises';
import { relative, resolve } from 'node:path';
import { writeProblem } from '../cli/cli-support.js';
import { writeContractFiles } from './contract-files.js';
import { contractError } from './contract-operations.js';

function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel === '' ? '.' : rel.startsWith('..') ? path : rel;
}

/**
 * Generates the contract of `operationsDir` against the schema file and
 * prints what it wrote. Returns false (after printing the problem) when it
 * could not.
 */
export async function generateContractFromCli(schemaFile: string, operationsDir: string): Promise<boolean> {
  try {
    let sdl: string;
    try {
      sdl = await readFile(resolve(schemaFile), 'utf8');
    } catch (error) {
      throw contractError(`schema ${resolve(schemaFile)}: ${error instanceof Error && 'code' in error && error.code === 'ENOENT' ? 'file not found' : String(error)}`, error);
    }
    const written = await writeContractFiles({ dir: operationsDir, schema: sdl });
    process.stdout.write(
      `wrote ${shown(written.files.proto)}, ${shown(written.files.lock)}, ${shown(written.files.openapi)} ` +
        `(Connect contract ${written.packageName}.${written.serviceName}: ${written.methods.join(', ')})\n`,
    );
    return true;
  } catch (error) {
    writeProblem(error);
    return false;
  }
}
