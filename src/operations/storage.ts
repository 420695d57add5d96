/**
 * The storage-provider interface: where the operations store keeps its files.
 * A store is a tree of small text files addressed by `/`-separated paths
 * (see store-layout.ts); a provider only reads, writes and locks them.
 * Built in: a directory on disk, Redis, and a read-only HTTP base URL.
 */

/** One file to write (`text`) or remove (`text: null`). */
export interface StorageChange {
  /** Path inside the store, e.g. `default/manifest.json`. */
  readonly path: string;
  readonly text: string | null;
}

/** What a conditional read found. */
export type ConditionalRead =
  /** The file still has the tag the caller knew; nothing was transferred. */
  | { readonly status: 'unchanged' }
  | { readonly status: 'missing' }
  /** `tag` identifies this version for the next conditional read (an ETag over HTTP); undefined when the provider gave none. */
  | { readonly status: 'found'; readonly text: string; readonly tag: string | undefined };

/** A place the operations store lives in. */
export interface OperationsStorage {
  /** Where it is, for messages; never carries a password. */
  readonly location: string;
  /** False for read-only providers (HTTP): push and delete refuse them. */
  readonly writable: boolean;
  /** The file's text, or undefined when there is no such file. */
  read(path: string, signal?: AbortSignal): Promise<string | undefined>;
  /** Reads a file unless it still has `knownTag` (a conditional request where the provider has one). */
  readIfChanged(path: string, knownTag: string | undefined, signal?: AbortSignal): Promise<ConditionalRead>;
  /** Runs `work` while holding the graph's write lock (one writer at a time, across processes). */
  withLock<T>(graph: string, work: () => Promise<T>): Promise<T>;
  /**
   * Writes and removes files of one graph (paths under its folder), in
   * phases: every change of a phase is done (in any order) before the next
   * phase starts. Atomic where the provider allows it (Redis); otherwise
   * each file is replaced atomically.
   */
  commit(graph: string, phases: ReadonlyArray<readonly StorageChange[]>): Promise<void>;
  /** Closes connections. */
  close(): Promise<void>;
}

/** Thrown by a read-only provider on `withLock` / `commit`. */
export class ReadOnlyStoreError extends Error {
  constructor(location: string) {
    super(`the operations store at ${location} is read-only (an HTTP store); push to a directory or Redis store and serve that instead`);
    this.name = 'ReadOnlyStoreError';
  }
}
