/** `buf` from @bufbuild/buf, as tests run it. */
import { execFile } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createFileRegistry, fromBinary, type FileRegistry } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema, type FileDescriptorSet } from '@bufbuild/protobuf/wkt';

const run = promisify(execFile);

/** Path of the buf binary. */
export const BUF = join(import.meta.dirname, '../../../node_modules/.bin/buf');

/** Exit code and output of `buf lint` in `dir` (with its buf.yaml). */
export async function bufLint(dir: string): Promise<{ code: number; output: string }> {
  return run(BUF, ['lint'], { cwd: dir }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
  );
}

/** The descriptors buf compiles from the protos under `dir` (imports included, no source info). */
export async function bufBuild(dir: string): Promise<{ set: FileDescriptorSet; registry: FileRegistry }> {
  // Beside `dir`, not in it, so the build does not read its own output; removed once read.
  const out = join(dir, '..', `${Date.now()}-${Math.random().toString(36).slice(2)}.binpb`);
  try {
    await run(BUF, ['build', dir, '--exclude-source-info', '-o', out]);
    const set = fromBinary(FileDescriptorSetSchema, await readFile(out));
    return { set, registry: createFileRegistry(set) };
  } finally {
    await rm(out, { force: true });
  }
}
