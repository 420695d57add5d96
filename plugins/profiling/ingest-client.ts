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
export type PushResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly retry: boolean; readonly reason: string; readonly status?: number };

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

/** Pushes one profile as multipart form data with a `profile` part. Never throws. */
export async function pushProfile(target: IngestTarget, upload: ProfileUpload, signal: AbortSignal): Promise<PushResult> {
  const form = new FormData();
  form.append('profile', new Blob([Uint8Array.from(upload.body)], { type: 'application/octet-stream' }), 'profile.pprof');
  const headers: Record<string, string> = { 'user-agent': target.userAgent };
  if (target.authorization !== undefined) headers.authorization = target.authorization;
  try {
    const response = await fetch(ingestUrl(target, upload), {
      method: 'POST',
      body: form,
      headers,
      signal: AbortSignal.any([signal, AbortSignal.timeout(PUSH_TIMEOUT_MS)]),
    });
    const text = await response.text();
    if (response.ok) return { ok: true };
    const detail = text.trim().slice(0, 200);
    const reason = `HTTP ${response.status}${detail === '' ? '' : `: ${detail}`}`;
    return { ok: false, retry: retryable(response.status), reason, status: response.status };
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const reason = error instanceof Error ? `${error.message}${cause}` : String(error);
    return { ok: false, retry: true, reason };
  }
}
