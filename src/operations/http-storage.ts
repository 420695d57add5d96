/**
 * A read-only provider: an `http(s)://` base URL serving the tree a
 * directory store writes (any static host or CDN). The manifest is polled
 * with conditional requests: `If-None-Match` carries the ETag the host gave,
 * or the manifest's quoted revision when it gave none; a 304 transfers nothing.
 */
import { ReadOnlyStoreError, type ConditionalRead, type OperationsStorage, type StorageChange } from './storage.js';

/** Options of `HttpStorage`. */
export interface HttpStorageOptions {
  /** Deadline of one request. Default: 10 s. */
  readonly timeoutMs?: number;
  /** Extra request headers (for example authorization for a private CDN). Default: none. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A store served over HTTP, read-only. */
export class HttpStorage implements OperationsStorage {
  readonly location: string;
  readonly writable = false;
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly headers: Readonly<Record<string, string>>;

  constructor(baseUrl: string, { timeoutMs = 10_000, headers = {} }: HttpStorageOptions = {}) {
    const base = new URL(baseUrl);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    this.base = base;
    const shown = new URL(base);
    shown.username = '';
    shown.password = '';
    this.location = shown.href.replace(/\/$/, '');
    this.timeoutMs = timeoutMs;
    this.headers = headers;
  }

  async read(path: string, signal?: AbortSignal): Promise<string | undefined> {
    const read = await this.readIfChanged(path, undefined, signal);
    return read.status === 'found' ? read.text : undefined;
  }

  async readIfChanged(path: string, knownTag: string | undefined, signal?: AbortSignal): Promise<ConditionalRead> {
    const url = this.url(path);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers };
    if (knownTag !== undefined) headers['if-none-match'] = knownTag;
    let response: Response;
    try {
      response = await fetch(url, { headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (error) {
      const reason = timeout.aborted
        ? `no answer within ${this.timeoutMs} ms`
        : error instanceof Error
          ? error.cause instanceof Error
            ? error.cause.message
            : error.message
          : String(error);
      throw new Error(`cannot read ${this.shown(path)}: ${reason}`, { cause: error });
    }
    if (response.status === 304) {
      await response.body?.cancel();
      return { status: 'unchanged' };
    }
    if (response.status === 404 || response.status === 410) {
      await response.body?.cancel();
      return { status: 'missing' };
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`cannot read ${this.shown(path)}: HTTP ${response.status}`);
    }
    return { status: 'found', text: await response.text(), tag: response.headers.get('etag') ?? undefined };
  }

  withLock<T>(): Promise<T> {
    return Promise.reject(new ReadOnlyStoreError(this.location));
  }

  commit(_graph: string, _phases: ReadonlyArray<readonly StorageChange[]>): Promise<void> {
    return Promise.reject(new ReadOnlyStoreError(this.location));
  }

  async close(): Promise<void> {}

  /** Each stored segment is already percent-encoded on disk; encode it once more so the host finds that very name. */
  private url(path: string): URL {
    return new URL(path.split('/').map(encodeURIComponent).join('/'), this.base);
  }

  private shown(path: string): string {
    return `${this.location}/${path}`;
  }
}
