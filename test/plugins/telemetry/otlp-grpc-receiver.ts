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
import { decodePoints, decodeSpans, type ReceivedPoint, type ReceivedSpan } from './otlp-receiver.js';

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

export interface OtlpGrpcReceiver {
  /** `http://127.0.0.1:<port>`: the address to give an `exporter: grpc`. */
  readonly endpoint: string;
  readonly spans: ReceivedSpan[];
  readonly points: ReceivedPoint[];
  /** Export calls received (answered or not), by method path. */
  readonly requests: string[];
  /** The metadata of the last export call, one value per key (lower-case keys). */
  lastMetadata: Readonly<Record<string, string>>;
  /** `ok` answers each call with an empty response; `hang` never answers; `fail` answers UNAVAILABLE. */
  mode: 'ok' | 'hang' | 'fail';
  /** Resolves once `predicate` holds for the spans received (checked on each export), or rejects after `timeoutMs`. */
  waitForSpans(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  waitForPoints(predicate: (points: readonly ReceivedPoint[]) => boolean, timeoutMs?: number): Promise<ReceivedPoint[]>;
  reset(): void;
  close(): Promise<void>;
}

export async function startOtlpGrpcReceiver(mode: OtlpGrpcReceiver['mode'] = 'ok'): Promise<OtlpGrpcReceiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const requests: string[] = [];
  const waiters = new Set<() => void>();
  const server = new Server();

  function waitFor<T>(holds: () => boolean, timeoutMs: number, value: () => T): Promise<T> {
    if (holds()) return Promise.resolve(value());
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (!holds()) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(value());
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`OTLP/gRPC receiver: condition not met within ${timeoutMs}ms (${spans.length} spans, ${points.length} points so far)`));
      }, timeoutMs);
      waiters.add(check);
    });
  }

  const receiver: OtlpGrpcReceiver = {
    endpoint: '',
    spans,
    points,
    requests,
    lastMetadata: {},
    mode,
    waitForSpans: (predicate, timeoutMs = 5000) =>
      waitFor(
        () => predicate(spans),
        timeoutMs,
        () => [...spans],
      ),
    waitForPoints: (predicate, timeoutMs = 5000) =>
      waitFor(
        () => predicate(points),
        timeoutMs,
        () => [...points],
      ),
    reset() {
      spans.splice(0);
      points.splice(0);
      requests.splice(0);
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
      for (const waiter of [...waiters]) waiter();
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
