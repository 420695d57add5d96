/**
 * `OTEL_EXPORTER_OTLP_COMPRESSION` (and its `_TRACES_` / `_METRICS_` forms),
 * read by the OpenTelemetry exporters themselves: `gzip` compresses OTLP/HTTP
 * bodies (`Content-Encoding: gzip`) and OTLP/gRPC messages; unset or `none`
 * sends them as they are. A real receiver on loopback decodes what arrives.
 */
import { constants, createServer, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, expect, it, vi } from 'vitest';
import { useTelemetry, type TelemetryOptions } from '../../../plugins/telemetry/index.js';
import { startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { TOP_PRODUCTS, TOP_PRODUCTS_DATA } from './fixtures.js';
import { decodeSpans, receivedExports, startOtlpReceiver, type ReceivedExports } from './otlp-receiver.js';
import { useTelemetrySubgraphs } from './use-subgraphs.js';

let products: TestSubgraph;
let reviews: TestSubgraph;
let users: TestSubgraph;
useTelemetrySubgraphs((started) => ({ products, reviews, users } = started));

afterEach(() => {
  vi.unstubAllEnvs();
});

/** Runs the benchmark-like operation through a router exporting as `exporter` says, and waits for its spans to arrive. */
async function exportOnce(receiver: ReceivedExports, exporter: { exporter: 'http' | 'grpc'; endpoint: string }): Promise<void> {
  const options: TelemetryOptions = { tracing: { enabled: true, exporters: [{ ...exporter, batch_timeout: '20ms' }] } };
  const router = await startTestRouter({ subgraphs: [products, reviews, users], plugins: [useTelemetry(options)] });
  try {
    const response = await router.query({ query: TOP_PRODUCTS });
    expect(response.body).toEqual({ data: TOP_PRODUCTS_DATA });
    await receiver.waitForSpans((spans) => spans.some((span) => span.name === 'query TopProducts'));
  } finally {
    await router.close();
  }
}

it('gzips OTLP/HTTP exports with OTEL_EXPORTER_OTLP_COMPRESSION=gzip, and sends them plain without it', async () => {
  const receiver = await startOtlpReceiver();
  try {
    await exportOnce(receiver, { exporter: 'http', endpoint: receiver.endpoint });
    expect(receiver.lastHeaders['content-encoding']).toBeUndefined();

    receiver.reset();
    vi.stubEnv('OTEL_EXPORTER_OTLP_COMPRESSION', 'gzip');
    await exportOnce(receiver, { exporter: 'http', endpoint: receiver.endpoint });
    expect(receiver.lastHeaders['content-encoding']).toBe('gzip');

    // The signal's own variable wins.
    receiver.reset();
    vi.stubEnv('OTEL_EXPORTER_OTLP_TRACES_COMPRESSION', 'none');
    await exportOnce(receiver, { exporter: 'http', endpoint: receiver.endpoint });
    expect(receiver.lastHeaders['content-encoding']).toBeUndefined();
  } finally {
    await receiver.close();
  }
});

/**
 * An OTLP/gRPC trace receiver on node:http2, reading the gRPC framing itself
 * so the test sees what grpc-js hides from handlers: the `grpc-encoding`
 * header and each message's compressed flag.
 */
async function startFramedGrpcReceiver(): Promise<ReceivedExports & { endpoint: string; encodings: string[]; compressedFlags: number[]; close(): Promise<void> }> {
  const { notify, ...received } = receivedExports('framed OTLP/gRPC receiver');
  const encodings: string[] = [];
  const compressedFlags: number[] = [];
  const server: Http2Server = createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      const frame = Buffer.concat(chunks);
      encodings.push(String(headers['grpc-encoding'] ?? 'identity'));
      // gRPC message framing: 1 byte compressed flag, 4 bytes length, the message.
      const compressed = frame[0]!;
      compressedFlags.push(compressed);
      const message = frame.subarray(5, 5 + frame.readUInt32BE(1));
      if (headers[constants.HTTP2_HEADER_PATH] === '/opentelemetry.proto.collector.trace.v1.TraceService/Export') {
        received.spans.push(...decodeSpans(compressed === 1 ? gunzipSync(message) : message));
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      // An empty Export*ServiceResponse, uncompressed.
      stream.end(Buffer.alloc(5));
      notify();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...received,
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    encodings,
    compressedFlags,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

it('compresses OTLP/gRPC messages with OTEL_EXPORTER_OTLP_COMPRESSION=gzip, and sends them plain without it', async () => {
  const receiver = await startFramedGrpcReceiver();
  try {
    await exportOnce(receiver, { exporter: 'grpc', endpoint: receiver.endpoint });
    expect(receiver.compressedFlags.at(-1)).toBe(0);

    receiver.reset();
    vi.stubEnv('OTEL_EXPORTER_OTLP_COMPRESSION', 'gzip');
    await exportOnce(receiver, { exporter: 'grpc', endpoint: receiver.endpoint });
    expect(receiver.encodings.at(-1)).toBe('gzip');
    expect(receiver.compressedFlags.at(-1)).toBe(1);
  } finally {
    await receiver.close();
  }
});
