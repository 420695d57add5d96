/**
 * Manifest mode: the graph's manifest is loaded at startup and polled
 * (`poll_interval` plus up to `poll_jitter`). A new revision is prepared off
 * the request path, then swapped in with one assignment, so in-flight
 * requests finish on the manifest they started with and none is dropped. A
 * manifest that cannot be read or parsed leaves the previous one in service.
 */
import { setTimeout as sleep, setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../../src/index.js';
import { normalizedId, sha256Hex, type OperationsManifest, type OperationsStore, type ResolvedOperation } from '../../src/operations/index.js';
import type { OperationSource } from './operation-source.js';

/** Options of `startManifestSource`. */
export interface ManifestSourceOptions {
  /** The store the manifest is read from. */
  readonly store: OperationsStore;
  /** Federated graph name (`graph.name`). */
  readonly graph: string;
  /** `manifest.poll_interval`, in ms. */
  readonly pollIntervalMs: number;
  /** `manifest.poll_jitter`, in ms. */
  readonly pollJitterMs: number;
  /** Precompute normalized ids for the safelist / `log_unknown` (`isRegistered` answers false without them). */
  readonly normalize: boolean;
  /** The plugin's logger. */
  readonly log: Logger;
}

/** One manifest revision, ready to serve. */
interface ManifestSnapshot {
  /** The manifest's revision; empty before one was loaded. */
  readonly revision: string;
  /**
   * Text by id: the parsed manifest's own object (copying 10,000 entries into a Map would only cost time).
   * An id is a SHA-256, or any string a Cosmo client chose.
   */
  readonly operations: Readonly<Record<string, string>>;
  /** Id by alias (a prototype-free object). */
  readonly aliases: Readonly<Record<string, string>>;
  /**
   * SHA-256 of every text and of its normalized form, so a free-form text is recognised whatever id it is
   * listed under; only when the safelist or `log_unknown` needs them.
   */
  readonly normalized: ReadonlySet<string> | undefined;
}

const EMPTY: ManifestSnapshot = { revision: '', operations: {}, aliases: {}, normalized: new Set() };
/** Longest wait in `stop()` for a poll in progress. */
const STOP_WAIT_MS = 1_000;
/** Normalization yields to the event loop after this many operations, so a big reload never stalls requests. */
const NORMALIZE_CHUNK = 200;

/** Loads the manifest (a missing one counts as empty; an unreadable or malformed one fails startup) and starts polling. */
export async function startManifestSource(options: ManifestSourceOptions): Promise<OperationSource> {
  const source = new ManifestSource(options);
  await source.load();
  source.schedule();
  return source;
}

class ManifestSource implements OperationSource {
  private snapshot: ManifestSnapshot = EMPTY;
  /** Tag of the version in service, or of the last bad version (not fetched again). */
  private tag: string | undefined;
  /** What the last poll found wrong, so each problem is logged when it starts, not on every poll. */
  private problem: 'missing' | 'invalid' | 'unreadable' | undefined;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  private readonly stopping = new AbortController();
  /** Verdicts of `isRegistered` for the snapshot in service, by SHA-256 of the text; a swap replaces them. */
  private verdicts = new LRUCache<string, boolean>({ max: 10_000 });

  constructor(private readonly options: ManifestSourceOptions) {}

  resolve(_client: string, key: string): ResolvedOperation | undefined {
    const { operations, aliases } = this.snapshot;
    const id = Object.hasOwn(operations, key) ? key : Object.hasOwn(aliases, key) ? aliases[key] : undefined;
    return id === undefined ? undefined : { id, body: operations[id]! };
  }

  isRegistered(_client: string, text: string): boolean {
    // Judged by the texts, never by ids: a Cosmo manifest's id is a client's choice, and may be the SHA-256 of another text.
    const known = this.snapshot.normalized;
    if (known === undefined) return false;
    const hash = sha256Hex(text);
    if (known.has(hash)) return true;
    let verdict = this.verdicts.get(hash);
    if (verdict === undefined) {
      const normalized = normalizedId(text);
      verdict = normalized !== undefined && known.has(normalized);
      this.verdicts.set(hash, verdict);
    }
    return verdict;
  }

  /** Startup load: throws when the store cannot be read or the manifest is invalid. */
  async load(): Promise<void> {
    const { store, graph, log } = this.options;
    const read = await store.readManifest(graph, undefined, this.stopping.signal);
    if (read.status === 'invalid') throw new Error(`the manifest of graph "${graph}" at ${store.location} is invalid: ${read.reason}`);
    if (read.status === 'found') {
      await this.swap(read.manifest, read.tag);
      return;
    }
    log.warn({ graph, storage: store.location }, 'Persisted operations manifest not found; every persisted operation is unknown until one is pushed');
  }

  schedule(): void {
    if (this.stopping.signal.aborted) return;
    const { pollIntervalMs, pollJitterMs } = this.options;
    this.timer = setTimeout(
      () => {
        this.polling = this.poll().finally(() => {
          this.polling = undefined;
          this.schedule();
        });
      },
      // Each key is at most 2^31-1 ms, their sum may not be: past that, Node would fire at once.
      Math.min(pollIntervalMs + Math.random() * pollJitterMs, 2 ** 31 - 1),
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    // A poll notices the abort at its next step; one stuck on a store that stopped answering is not waited
    // for past STOP_WAIT_MS (its result is dropped once stopping), so shutdown never hangs on the store.
    if (this.polling) await Promise.race([this.polling, sleep(STOP_WAIT_MS, undefined, { ref: false })]);
    await this.options.store.close();
  }

  private async poll(): Promise<void> {
    const { store, graph, log } = this.options;
    const previous = this.snapshot.revision || undefined;
    try {
      const read = await store.readManifest(graph, this.tag, this.stopping.signal);
      if (this.stopping.signal.aborted) return;
      if (this.problem === 'unreadable') {
        log.info({ graph, storage: store.location, revision: previous }, 'Persisted operations manifest can be read again');
        this.problem = undefined;
      }
      if (read.status === 'unchanged') return;
      if (read.status === 'missing') {
        // Once when it goes, not on every poll while it stays gone.
        if (this.snapshot !== EMPTY && this.problem !== 'missing') {
          log.error({ graph, storage: store.location, revision: previous }, 'Persisted operations manifest disappeared; keeping the previous one');
        }
        this.problem = 'missing';
        return;
      }
      if (read.status === 'invalid') {
        // Once per bad version: a store without conditional reads hands the same bad file back on every poll.
        const again = this.problem === 'invalid' && read.tag !== undefined && read.tag === this.tag;
        this.tag = read.tag;
        this.problem = 'invalid';
        if (!again) log.error({ graph, storage: store.location, reason: read.reason, revision: previous }, 'Persisted operations manifest is invalid; keeping the previous one');
        return;
      }
      this.problem = undefined;
      if (read.manifest.revision === this.snapshot.revision) {
        this.tag = read.tag;
        return;
      }
      await this.swap(read.manifest, read.tag);
    } catch (error) {
      if (this.stopping.signal.aborted) return;
      // Once when the store stops answering, not on every poll of an outage; 'can be read again' says when it ends.
      if (this.problem !== 'unreadable') {
        log.error({ graph, storage: store.location, err: error, revision: previous }, 'Persisted operations manifest could not be read; keeping the previous one');
      }
      this.problem = 'unreadable';
    }
  }

  /** Builds the new snapshot completely, then replaces the old one in one step. */
  private async swap(manifest: OperationsManifest, tag: string | undefined): Promise<void> {
    const { operations, aliases = {} } = manifest;
    const normalized = this.options.normalize ? await normalizedIds(operations) : undefined;
    this.snapshot = { revision: manifest.revision, operations, aliases, normalized };
    this.verdicts = new LRUCache<string, boolean>({ max: 10_000 });
    this.tag = tag;
    this.options.log.info({ graph: this.options.graph, revision: manifest.revision, operations: Object.keys(operations).length }, 'Persisted operations manifest loaded');
  }
}

/** The SHA-256 of every text (its id may be a client's own) and of its normalized form. */
async function normalizedIds(operations: Readonly<Record<string, string>>): Promise<Set<string>> {
  const ids = new Set<string>();
  let done = 0;
  for (const body of Object.values(operations)) {
    ids.add(sha256Hex(body));
    const id = normalizedId(body);
    if (id !== undefined) ids.add(id);
    if (++done % NORMALIZE_CHUNK === 0) await yieldToEventLoop();
  }
  return ids;
}
