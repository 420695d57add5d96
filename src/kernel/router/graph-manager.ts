import { unwatchFile, watchFile } from 'node:fs';
import { readGraphSource, type GraphSource } from '../graph/execution-config.js';
import { LoadedGraph } from '../graph/loaded-graph.js';
import type { Logger } from '../logger.js';
import { stripUrlCredentials } from '../url-credentials.js';

/** Where the graph comes from. */
export type GraphInput = string | GraphSource;

/**
 * Owns the graph being served: loads it, swaps in a new one atomically
 * (in-flight requests finish on the graph they started with), and watches
 * the file so edits are picked up without a restart. A bad file keeps the
 * previous graph.
 */
export class GraphManager {
  private loaded: LoadedGraph | undefined;
  private readonly listeners = new Set<(graph: LoadedGraph) => void>();
  private watched: string | undefined;
  private reloading: Promise<void> | undefined;

  constructor(
    private readonly planCacheSize: number,
    private readonly log: Logger,
  ) {}

  get current(): LoadedGraph | undefined {
    return this.loaded;
  }

  /** Loads and swaps in a graph; throws (keeping the current one) when it is invalid. */
  async load(input: GraphInput): Promise<LoadedGraph> {
    const source = typeof input === 'string' ? await readGraphSource(input) : input;
    const graph = new LoadedGraph(source, this.planCacheSize);
    this.loaded = graph;
    for (const listener of this.listeners) {
      try {
        listener(graph);
      } catch (error) {
        this.log.error({ err: error }, 'a graph change listener failed');
      }
    }
    this.log.info({ origin: graph.origin, subgraphs: [...graph.subgraphs.keys()] }, 'Graph loaded');
    return graph;
  }

  onChange(listener: (graph: LoadedGraph) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Polls a graph file and reloads it when it changes (rename-safe: editors and `compose` replace files). */
  watch(path: string, intervalMs = 1000): void {
    if (this.watched) return;
    if (/^https?:/i.test(path)) {
      // Nothing to watch over HTTP: say so rather than let `watch: true` (the default) suggest reloads.
      this.log.info({ origin: stripUrlCredentials(path) }, 'Graph read from a URL once; execution_config.file.watch applies to files only');
      return;
    }
    this.watched = path;
    watchFile(path, { interval: intervalMs, persistent: false }, (current, previous) => {
      if (current.mtimeMs === previous.mtimeMs && current.size === previous.size) return;
      if (current.nlink === 0 && current.size === 0) return;
      this.reloading = (this.reloading ?? Promise.resolve()).then(() => this.reload(path));
    });
  }

  private async reload(path: string): Promise<void> {
    try {
      await this.load(path);
    } catch (error) {
      this.log.error({ origin: path, error: (error as Error).message }, 'Graph reload failed; still serving the previous graph');
    }
  }

  /** Waits for a reload in progress (tests). */
  async settled(): Promise<void> {
    await this.reloading;
  }

  close(): void {
    if (this.watched) unwatchFile(this.watched);
    this.watched = undefined;
  }
}
