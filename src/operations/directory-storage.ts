/**
 * The default provider: a directory on disk (`.switchyard/operations`).
 * Each file is replaced atomically (write a temporary file, then rename), so
 * a router reading while the CLI writes sees the old file or the new one,
 * never half of one. Writers of a graph take a lock folder.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { segment } from './store-layout.js';
import type { ConditionalRead, OperationsStorage, StorageChange } from './storage.js';

const WRITE_CONCURRENCY = 32;

/** Options of `DirectoryStorage`. */
export interface DirectoryStorageOptions {
  /** How long to wait for another writer's lock. Default: 10 s. */
  readonly lockTimeoutMs?: number;
  /** A lock older than this is taken over (its writer died). Default: 60 s. */
  readonly staleLockMs?: number;
}

/** A store in a directory; every path is a file under it. */
export class DirectoryStorage implements OperationsStorage {
  readonly location: string;
  readonly writable = true;
  private readonly root: string;
  private readonly lockTimeoutMs: number;
  private readonly staleLockMs: number;

  constructor(root: string, { lockTimeoutMs = 10_000, staleLockMs = 60_000 }: DirectoryStorageOptions = {}) {
    this.root = resolve(root);
    this.location = this.root;
    this.lockTimeoutMs = lockTimeoutMs;
    this.staleLockMs = staleLockMs;
  }

  async read(path: string): Promise<string | undefined> {
    try {
      return await readFile(this.file(path), 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** The tag is the file's identity and size and time: a rename or rewrite changes it. */
  async readIfChanged(path: string, knownTag: string | undefined): Promise<ConditionalRead> {
    const file = this.file(path);
    let tag: string;
    try {
      const info = await stat(file, { bigint: true });
      tag = `${info.ino}-${info.size}-${info.mtimeNs}`;
    } catch (error) {
      if (isMissing(error)) return { status: 'missing' };
      throw error;
    }
    if (tag === knownTag) return { status: 'unchanged' };
    const text = await this.read(path);
    return text === undefined ? { status: 'missing' } : { status: 'found', text, tag };
  }

  async withLock<T>(graph: string, work: () => Promise<T>): Promise<T> {
    const lock = join(this.root, segment(graph), '.lock');
    await mkdir(dirname(lock), { recursive: true });
    const deadline = Date.now() + this.lockTimeoutMs;
    for (;;) {
      try {
        await mkdir(lock);
        break;
      } catch (error) {
        if (!(error instanceof Error && 'code' in error && error.code === 'EEXIST')) throw error;
        const age = await stat(lock).then(
          (info) => Date.now() - info.mtimeMs,
          () => 0,
        );
        if (age > this.staleLockMs) {
          await rmdir(lock).catch(() => undefined);
          continue;
        }
        if (Date.now() > deadline) throw new Error(`another push or delete holds the lock ${lock}; try again (remove the folder if no writer is running)`);
        await sleep(25);
      }
    }
    try {
      return await work();
    } finally {
      await rmdir(lock).catch(() => undefined);
    }
  }

  async commit(_graph: string, phases: ReadonlyArray<readonly StorageChange[]>): Promise<void> {
    for (const phase of phases) {
      // A push of thousands of operations writes thousands of files: a bounded number at a time.
      for (let start = 0; start < phase.length; start += WRITE_CONCURRENCY) {
        await Promise.all(phase.slice(start, start + WRITE_CONCURRENCY).map((change) => this.apply(change)));
      }
    }
  }

  async close(): Promise<void> {}

  private async apply(change: StorageChange): Promise<void> {
    const file = this.file(change.path);
    if (change.text === null) {
      await rm(file, { force: true });
      return;
    }
    await mkdir(dirname(file), { recursive: true });
    const temporary = join(dirname(file), `.${randomBytes(6).toString('hex')}.tmp`);
    await writeFile(temporary, change.text, 'utf8');
    await rename(temporary, file);
  }

  private file(path: string): string {
    return join(this.root, ...path.split('/'));
  }
}

/** No such file (a folder where a file is asked for counts: a client named `manifest.json` is a folder beside Cosmo's manifest path). */
function isMissing(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR' || error.code === 'EISDIR');
}
