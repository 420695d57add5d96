/**
 * A static HTTP host serving an operations-store directory read-only, as a
 * CDN would: `manifest.json` gets `ETag: "<revision>"` and honours
 * `If-None-Match` with a 304. Records every request. With `basicAuth`, a
 * request without that user and password is answered 401.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/** One request the host answered. */
export interface HostedRequest {
  readonly path: string;
  readonly ifNoneMatch: string | undefined;
  /** The `Authorization` header the request carried. */
  readonly authorization: string | undefined;
  readonly status: number;
}

/** Options of `startStaticHost`. */
export interface StaticHostOptions {
  /** Require HTTP Basic authorization with this user and password (401 otherwise). Default: none required. */
  readonly basicAuth?: { readonly user: string; readonly password: string };
}

/** A running static host. */
export interface StaticHost {
  /** `http://127.0.0.1:<port>/<prefix>` (no trailing slash). */
  readonly url: string;
  readonly requests: HostedRequest[];
  close(): Promise<void>;
}

/** Serves `root` under `/<prefix>/` on a free loopback port. */
export async function startStaticHost(root: string, prefix = 'ops', { basicAuth }: StaticHostOptions = {}): Promise<StaticHost> {
  const requests: HostedRequest[] = [];
  const expected = basicAuth && `Basic ${Buffer.from(`${basicAuth.user}:${basicAuth.password}`, 'utf8').toString('base64')}`;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const ifNoneMatch = req.headers['if-none-match'];
    const authorization = req.headers.authorization;
    const answer = (status: number, body = '', headers: Record<string, string> = {}) => {
      requests.push({ path, ifNoneMatch, authorization, status });
      res.writeHead(status, headers);
      res.end(body);
    };
    if (expected !== undefined && authorization !== expected) return answer(401, '', { 'www-authenticate': 'Basic realm="operations"' });
    if (!path.startsWith(`/${prefix}/`)) return answer(404);
    const segments = path
      .slice(prefix.length + 2)
      .split('/')
      .map(decodeURIComponent);
    if (segments.some((segment) => segment === '..' || segment.includes('/'))) return answer(400);
    readFile(join(root, ...segments), 'utf8').then(
      (text) => {
        if (!segments[segments.length - 1]!.endsWith('manifest.json')) return answer(200, text, { 'content-type': 'application/json' });
        let etag: string | undefined;
        try {
          etag = `"${(JSON.parse(text) as { revision: string }).revision}"`;
        } catch {
          etag = undefined;
        }
        if (etag !== undefined && ifNoneMatch === etag) return answer(304, '', { etag });
        return answer(200, text, { 'content-type': 'application/json', ...(etag ? { etag } : {}) });
      },
      () => answer(404),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/${prefix}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
