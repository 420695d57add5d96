/**
 * A read-only provider: an `http(s)://` base URL serving the tree a
 * directory store writes (any static host or CDN). The manifest is polled
 * with conditional requests: `If-None-Match` carries the ETag the host gave,
 * or the manifest's quoted revision when it gave none; a 304 transfers nothing.
 * 404, 410 and 403 mean "no such file"; bodies are read with a byte cap.
 * A `user:password@` in the base URL is sent as HTTP Basic authorization on
 * every request (an `Authorization` in `headers` wins) and kept out of
 * `location`, so logs and errors never show it.
 */
import { readResponseText } from '../kernel/response-text.js';
import { splitUrlCredentials } from '../kernel/url-credentials.js';
import { STORE_FILE_TIMEOUT_MS } from './command-timeout.js';
import { ReadOnlyStoreError, type ConditionalRead, type OperationsStorage, type StorageChange } from './storage.js';
import { isOperationFile } from './store-layout.js';

/** Largest operation file read: a text a 1 MB request body could carry, with room for its JSON escaping. */
export const MAX_OPERATION_FILE_BYTES = 2 * 1024 * 1024;
/** Largest manifest or registry read (tens of thousands of operations). */
export const MAX_MANIFEST_FILE_BYTES = 64 * 1024 * 1024;

/** Options of `HttpStorage`. */
export interface HttpStorageOptions {
  /** Deadline of one request. Default: 10 s. */
  readonly timeoutMs?: number;
  /** Extra request headers (for example authorization for a private CDN); an `Authorization` here wins over credentials in the URL. Default: none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Largest operation file read; a larger one fails the read. Default: `MAX_OPERATION_FILE_BYTES` (2 MiB). */
  readonly maxOperationBytes?: number;
  /** Largest manifest or registry read; a larger one fails the read. Default: `MAX_MANIFEST_FILE_BYTES` (64 MiB). */
  readonly maxManifestBytes?: number;
}

/**
 * Why a URL cannot be an HTTP store's base, or undefined when it can. A user name or password in the URL is
 * accepted (sent as HTTP Basic authorization); the reason never repeats the URL.
 */
export function httpStoreUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must start with http:// or https://';
  return undefined;
}

/** A store served over HTTP, read-only. */
export class HttpStorage implements OperationsStorage {
  /** The base URL without its trailing slash and without any `user:password@`. */
  readonly location: string;
  readonly writable = false;
  private readonly base: URL;
  private readonly timeoutMs: number;
  private readonly headers: Readonly<Record<string, string>>;
  private readonly maxOperationBytes: number;
  private readonly maxManifestBytes: number;

  constructor(
    baseUrl: string,
    { timeoutMs = STORE_FILE_TIMEOUT_MS, headers = {}, maxOperationBytes = MAX_OPERATION_FILE_BYTES, maxManifestBytes = MAX_MANIFEST_FILE_BYTES }: HttpStorageOptions = {},
  ) {
    const problem = httpStoreUrlProblem(baseUrl);
    if (problem) throw new Error(`the operations store URL ${problem}`);
    const target = splitUrlCredentials(baseUrl);
    const base = new URL(target.url);
    if (!base.pathname.endsWith('/')) base.pathname += '/';
    this.base = base;
    this.location = base.href.replace(/\/$/, '');
    this.timeoutMs = timeoutMs;
    const hasAuthorization = Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
    this.headers = target.authorization === undefined || hasAuthorization ? headers : { ...headers, authorization: target.authorization };
    this.maxOperationBytes = maxOperationBytes;
    this.maxManifestBytes = maxManifestBytes;
  }

  async read(path: string, signal?: AbortSignal): Promise<string | undefined> {
    const read = await this.readIfChanged(path, undefined, signal);
    return read.status === 'found' ? read.text : undefined;
  }

  async readIfChanged(path: string, knownTag: string | undefined, signal?: AbortSignal): Promise<ConditionalRead> {
    const url = this.url(path);
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers };
    // A validator a header cannot carry is not sent: the file is fetched whole instead of failing every poll.
    if (knownTag !== undefined && isHeaderValue(knownTag)) headers['if-none-match'] = knownTag;
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
    // 403 too: a host that will not say what it lacks (an S3 bucket readable without ListBucket) answers 403 for a missing file.
    if (response.status === 404 || response.status === 410 || response.status === 403) {
      await response.body?.cancel();
      return { status: 'missing' };
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`cannot read ${this.shown(path)}: HTTP ${response.status}`);
    }
    const limit = isOperationFile(path) ? this.maxOperationBytes : this.maxManifestBytes;
    const text = await readResponseText(response, limit).catch((error: unknown) => {
      const reason = timeout.aborted ? `no answer within ${this.timeoutMs} ms` : error instanceof Error ? error.message : String(error);
      throw new Error(`cannot read ${this.shown(path)}: ${reason}`, { cause: error });
    });
    return { status: 'found', text, tag: response.headers.get('etag') ?? undefined };
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

/** A header value fetch accepts: Latin-1, no line breaks or NUL. */
function isHeaderValue(value: string): boolean {
  return /^[\t\x20-\x7e\x80-\xff]*$/.test(value);
}
