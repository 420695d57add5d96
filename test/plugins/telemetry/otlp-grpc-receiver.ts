/**
 * A real OTLP/gRPC receiver on 127.0.0.1 for the telemetry tests, built with
 * @grpc/grpc-js: it serves
 * `opentelemetry.proto.collector.trace.v1.TraceService/Export` and
 * `opentelemetry.proto.collector.metrics.v1.MetricsService/Export`. The
 * services are declared by hand with a deserializer that hands over the raw
 * bytes, which the OTLP/HTTP receiver's protobufjs declarations decode
 * (`decodeSpans`, `decodePoints` of otlp-receiver.ts).
 */

import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall, type ServiceDefinition } from '@grpc/grpc-js';
import { decodePoints, decodeSpans, receivedExports, type ReceivedExports } from './otlp-receiver.js';

export const TRACE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
export const METRICS_EXPORT = '/opentelemetry.proto.collector.metrics.v1.MetricsService/Export';

const raw = (bytes: Buffer): Buffer => bytes;

function exportService(path: string): ServiceDefinition {
  return {
    Export: {
      path,
      requestStream: false,
      responseStream: false,
      originalName: 'export',
      requestSerialize: raw,
      requestDeserialize: raw,
      responseSerialize: raw,
      responseDeserialize: raw,
    },
  };
}

export interface OtlpGrpcReceiver extends ReceivedExports {
  /** `http://127.0.0.1:<port>`: the address to give an `exporter: grpc`. */
  readonly endpoint: string;
  /** The metadata of the last export call, one value per key (lower-case keys). */
  lastMetadata: Readonly<Record<string, string>>;
  /** `ok` answers each call with an empty response; `hang` never answers; `fail` answers UNAVAILABLE. */
  mode: 'ok' | 'hang' | 'fail';
  close(): Promise<void>;
}

export async function startOtlpGrpcReceiver(mode: OtlpGrpcReceiver['mode'] = 'ok'): Promise<OtlpGrpcReceiver> {
  const { notify, ...received } = receivedExports('OTLP/gRPC receiver');
  const { spans, points, requests } = received;
  const server = new Server();

  const receiver: OtlpGrpcReceiver = {
    ...received,
    endpoint: '',
    lastMetadata: {},
    mode,
    reset() {
      received.reset();
      receiver.lastMetadata = {};
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging calls are cancelled with their connections.
        server.forceShutdown();
        resolve();
      }),
  };

  function handler(path: string, decode: (body: Buffer) => void) {
    return (call: ServerUnaryCall<Buffer, Buffer>, callback: sendUnaryData<Buffer>): void => {
      requests.push(path);
      receiver.lastMetadata = Object.fromEntries(Object.entries(call.metadata.getMap()).map(([key, value]) => [key, String(value)]));
      if (receiver.mode === 'hang') return; // never answers
      if (receiver.mode === 'fail') {
        callback({ code: status.UNAVAILABLE, details: 'receiver refuses exports' });
        return;
      }
      decode(call.request);
      // An empty ExportTraceServiceResponse / ExportMetricsServiceResponse.
      callback(null, Buffer.alloc(0));
      notify();
    };
  }

  server.addService(exportService(TRACE_EXPORT), { Export: handler(TRACE_EXPORT, (body) => spans.push(...decodeSpans(body))) });
  server.addService(exportService(METRICS_EXPORT), { Export: handler(METRICS_EXPORT, (body) => points.push(...decodePoints(body))) });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  (receiver as { endpoint: string }).endpoint = `http://127.0.0.1:${port}`;
  return receiver;
}
