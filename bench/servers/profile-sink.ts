/**
 * A Pyroscope-compatible profile sink for the profiling scenario: accepts
 * `POST /ingest?name=...` with a multipart body (what continuous profiling
 * pushes), reads the body whole and answers 200; anything else gets 400 and
 * is counted as rejected. Nothing is kept but counters.
 *
 * Reports to its parent over IPC: `{ type: 'ready', urls: { 'profile-sink': url }, control: url }`;
 * the control listener answers `GET /counts` with
 * `{"pushes": n, "cpu": n, "heap": n, "bytes": n, "rejected": n}` and `POST /reset` zeroes them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const counts = { pushes: 0, cpu: 0, heap: 0, bytes: 0, rejected: 0 };

function reply(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function isPush(request: IncomingMessage, url: URL): boolean {
  return (
    request.method === 'POST' &&
    url.pathname === '/ingest' &&
    (url.searchParams.get('name') ?? '') !== '' &&
    (request.headers['content-type'] ?? '').startsWith('multipart/form-data')
  );
}

function ingest(request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://sink');
  let bytes = 0;
  request.on('data', (chunk: Buffer) => (bytes += chunk.length));
  request.on('end', () => {
    if (!isPush(request, url) || bytes === 0) {
      counts.rejected++;
      reply(response, 400, '{"error":"expected POST /ingest?name=... with a multipart body"}');
      return;
    }
    counts.pushes++;
    // CPU profiles carry a sample rate, heap profiles do not.
    if (url.searchParams.has('sampleRate')) counts.cpu++;
    else counts.heap++;
    counts.bytes += bytes;
    reply(response, 200, '{}');
  });
}

function control(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  if (request.method === 'GET' && request.url === '/counts') {
    reply(response, 200, JSON.stringify(counts));
  } else if (request.method === 'POST' && request.url === '/reset') {
    for (const key of Object.keys(counts) as Array<keyof typeof counts>) counts[key] = 0;
    reply(response, 200, JSON.stringify(counts));
  } else {
    reply(response, 404, '{"error":"GET /counts or POST /reset"}');
  }
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

const sink = await listen(createServer(ingest));
const controlUrl = await listen(createServer(control));
if (!process.send) throw new Error('start the profile sink with an IPC channel (it reports its URL to its parent)');
process.send({ type: 'ready', urls: { 'profile-sink': sink }, control: controlUrl });
process.on('disconnect', () => process.exit(0));
