/**
 * An OTLP/HTTP sink for the telemetry scenario: accepts `POST /v1/traces`
 * and `POST /v1/metrics` with a protobuf body (what the telemetry plugin
 * exports), reads the body whole and answers 200 with an empty export
 * response; anything else gets 400 and is counted as rejected. It does not
 * decode the spans (that would cost the sink, which shares a core with the
 * subgraphs, more than the router's export): only counters are kept.
 *
 * Reports to its parent over IPC: `{ type: 'ready', urls: { 'otlp-sink': url }, control: url }`;
 * the control listener answers `GET /counts` with
 * `{"traces": n, "metrics": n, "bytes": n, "rejected": n}` and `POST /reset` zeroes them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

const counts = { traces: 0, metrics: 0, bytes: 0, rejected: 0 };

function reply(response: ServerResponse, status: number, contentType: string, body: string | Buffer): void {
  response.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  response.end(body);
}

function exportRequest(request: IncomingMessage, response: ServerResponse): void {
  let bytes = 0;
  request.on('data', (chunk: Buffer) => (bytes += chunk.length));
  request.on('end', () => {
    const path = new URL(request.url ?? '/', 'http://sink').pathname;
    const protobuf = (request.headers['content-type'] ?? '').startsWith('application/x-protobuf');
    if (request.method !== 'POST' || !protobuf || bytes === 0 || (path !== '/v1/traces' && path !== '/v1/metrics')) {
      counts.rejected++;
      reply(response, 400, 'application/json', '{"error":"expected POST /v1/traces or /v1/metrics with a protobuf body"}');
      return;
    }
    if (path === '/v1/traces') counts.traces++;
    else counts.metrics++;
    counts.bytes += bytes;
    // An empty Export*ServiceResponse: no partial success to report.
    reply(response, 200, 'application/x-protobuf', Buffer.alloc(0));
  });
}

function control(request: IncomingMessage, response: ServerResponse): void {
  request.resume();
  if (request.method === 'GET' && request.url === '/counts') {
    reply(response, 200, 'application/json', JSON.stringify(counts));
  } else if (request.method === 'POST' && request.url === '/reset') {
    for (const key of Object.keys(counts) as Array<keyof typeof counts>) counts[key] = 0;
    reply(response, 200, 'application/json', JSON.stringify(counts));
  } else {
    reply(response, 404, 'application/json', '{"error":"GET /counts or POST /reset"}');
  }
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

const sink = await listen(createServer(exportRequest));
const controlUrl = await listen(createServer(control));
if (!process.send) throw new Error('start the OTLP sink with an IPC channel (it reports its URL to its parent)');
process.send({ type: 'ready', urls: { 'otlp-sink': sink }, control: controlUrl });
process.on('disconnect', () => process.exit(0));
