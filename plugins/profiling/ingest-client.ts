import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** Where and as whom profiles are pushed. */
export interface IngestTarget {
  /** Base URL of the profile server; `/ingest` is appended to its path. */
  readonly serverAddress: string;
  /** Series name, `io.switchyard.router` by default. */
  readonly applicationName: string;
  /** Every tag sent, `hostname` and `version` included. */
  readonly tags: Readonly<Record<string, string>>;
  /** `Authorization` header value, or none. Never logged. */
  readonly authorization: string | undefined;
  /** `User-Agent` header value. */
  readonly userAgent: string;
}

/** One profile waiting to be pushed. */
export interface ProfileUpload {
  /** What it is: a CPU profile or a heap snapshot. */
  readonly kind: 'cpu' | 'heap';
  /** Gzipped pprof protobuf. */
  readonly body: Buffer;
  /** Start of the interval it covers, epoch milliseconds. */
  readonly fromMs: number;
  /** End of the interval it covers, epoch milliseconds. */
  readonly untilMs: number;
  /** Samples a second, for sampled CPU profiles. Default: not sent. */
  readonly sampleRate?: number;
}

/** How a push ended: accepted, or failed and worth retrying or not. */
export type PushResult = { readonly ok: true } | { readonly ok: false; readonly retry: boolean; readonly reason: string; readonly status?: number };

/** How long one push may take before it counts as failed. */
export const PUSH_TIMEOUT_MS = 10_000;

/** The `name` query parameter: `app{k=v,...}`, tags sorted by name. */
export function seriesName(applicationName: string, tags: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(tags)
    .sort()
    .map((key) => `${key}=${tags[key]}`);
  return `${applicationName}{${pairs.join(',')}}`;
}

/** `POST <server>/ingest?name=...&from=...&until=...&spyName=nodespy[&sampleRate=...]` (Pyroscope's push API). */
export function ingestUrl(target: IngestTarget, upload: ProfileUpload): URL {
  const url = new URL(target.serverAddress);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/ingest`;
  url.search = '';
  url.searchParams.set('name', seriesName(target.applicationName, target.tags));
  url.searchParams.set('from', String(Math.floor(upload.fromMs / 1000)));
  url.searchParams.set('until', String(Math.ceil(upload.untilMs / 1000)));
  url.searchParams.set('spyName', 'nodespy');
  if (upload.sampleRate !== undefined) url.searchParams.set('sampleRate', String(upload.sampleRate));
  return url;
}

function retryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Most of an error answer kept for the log; the rest is read and dropped. */
const MAX_ANSWER_BYTES = 4096;

/**
 * The body of a `multipart/form-data` request with one `profile` file part.
 * Written by hand rather than with `FormData` + `fetch`: Node's `fetch` is a
 * separate, lazily compiled HTTP stack (about 100 ms of CPU on first use,
 * then 10-20 ms a push while its code stays cold, since pushes are rare),
 * while `node:http` is the code the router already runs hot.
 */
export function multipartProfile(profile: Buffer): { readonly body: Buffer; readonly contentType: string } {
  const boundary = `switchyard-${randomBytes(12).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="profile"; filename="profile.pprof"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head, 'latin1'), profile, Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1')]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'AbortError' && error.cause instanceof Error) return error.cause.message;
  return error.message;
}

/** Pushes one profile as multipart form data with a `profile` part. Never throws. */
export function pushProfile(target: IngestTarget, upload: ProfileUpload, signal: AbortSignal): Promise<PushResult> {
  const url = ingestUrl(target, upload);
  const { body, contentType } = multipartProfile(upload.body);
  const headers: Record<string, string | number> = { 'user-agent': target.userAgent, 'content-type': contentType, 'content-length': body.length };
  if (target.authorization !== undefined) headers.authorization = target.authorization;
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<PushResult>((resolve) => {
    const request = send(url, { method: 'POST', headers, signal: AbortSignal.any([signal, AbortSignal.timeout(PUSH_TIMEOUT_MS)]) }, (response) => {
      const status = response.statusCode ?? 0;
      const kept: Buffer[] = [];
      let keptBytes = 0;
      response.on('data', (chunk: Buffer) => {
        if (keptBytes >= MAX_ANSWER_BYTES) return;
        kept.push(chunk);
        keptBytes += chunk.length;
      });
      response.on('error', (error) => resolve({ ok: false, retry: true, reason: describeError(error) }));
      response.on('end', () => {
        if (status >= 200 && status < 300) return resolve({ ok: true });
        const detail = Buffer.concat(kept).toString('utf8').trim().slice(0, 200);
        const reason = `HTTP ${status}${detail === '' ? '' : `: ${detail}`}`;
        resolve({ ok: false, retry: retryable(status), reason, status });
      });
    });
    request.on('error', (error) => resolve({ ok: false, retry: true, reason: describeError(error) }));
    request.end(body);
  });
}
