/**
 * A real OTLP/HTTP receiver on 127.0.0.1 for the telemetry tests: it accepts
 * `POST /v1/traces` and `POST /v1/metrics` with protobuf or JSON bodies
 * (`Content-Type: application/json`, OTLP's JSON mapping: ids in hex) and
 * decodes them into plain objects (gzip-compressed bodies too, as collectors
 * take them).
 *
 * The installed @opentelemetry/otlp-transformer (0.2xx) writes OTLP but no
 * longer ships a decoder for requests, so the messages the tests read are
 * declared here for protobufjs, with the field numbers of the OTLP protocol
 * (opentelemetry/proto/collector/{trace,metrics}/v1). Only the fields the
 * tests look at are declared; protobufjs skips the others. The OTLP/gRPC
 * receiver (otlp-grpc-receiver.ts) decodes its messages with the same
 * `decodeSpans` and `decodePoints`.
 */

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';

const root = protobuf.Root.fromJSON({
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'] } },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
        Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        Scope: { fields: { name: { type: 'string', id: 1 }, version: { type: 'string', id: 2 } } },
        Status: { fields: { message: { type: 'string', id: 2 }, code: { type: 'int32', id: 3 } } },
        Event: {
          fields: {
            timeUnixNano: { type: 'fixed64', id: 1 },
            name: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
          },
        },
        Span: {
          fields: {
            traceId: { type: 'bytes', id: 1 },
            spanId: { type: 'bytes', id: 2 },
            traceState: { type: 'string', id: 3 },
            parentSpanId: { type: 'bytes', id: 4 },
            name: { type: 'string', id: 5 },
            kind: { type: 'int32', id: 6 },
            startTimeUnixNano: { type: 'fixed64', id: 7 },
            endTimeUnixNano: { type: 'fixed64', id: 8 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            events: { rule: 'repeated', type: 'Event', id: 11 },
            status: { type: 'Status', id: 15 },
          },
        },
        ScopeSpans: { fields: { scope: { type: 'Scope', id: 1 }, spans: { rule: 'repeated', type: 'Span', id: 2 } } },
        ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
        ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
        HistogramDataPoint: {
          fields: {
            count: { type: 'fixed64', id: 4 },
            sum: { type: 'double', id: 5 },
            bucketCounts: { rule: 'repeated', type: 'fixed64', id: 6 },
            explicitBounds: { rule: 'repeated', type: 'double', id: 7 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
          },
        },
        Histogram: { fields: { dataPoints: { rule: 'repeated', type: 'HistogramDataPoint', id: 1 } } },
        NumberDataPoint: {
          fields: {
            asDouble: { type: 'double', id: 4 },
            asInt: { type: 'sfixed64', id: 6 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 7 },
          },
        },
        Sum: { fields: { dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 } } },
        Metric: {
          fields: {
            name: { type: 'string', id: 1 },
            unit: { type: 'string', id: 3 },
            sum: { type: 'Sum', id: 7 },
            histogram: { type: 'Histogram', id: 9 },
          },
        },
        ScopeMetrics: { fields: { scope: { type: 'Scope', id: 1 }, metrics: { rule: 'repeated', type: 'Metric', id: 2 } } },
        ResourceMetrics: { fields: { resource: { type: 'Resource', id: 1 }, scopeMetrics: { rule: 'repeated', type: 'ScopeMetrics', id: 2 } } },
        ExportMetricsServiceRequest: { fields: { resourceMetrics: { rule: 'repeated', type: 'ResourceMetrics', id: 1 } } },
      },
    },
  },
});

const TraceRequest = root.lookupType('otlp.ExportTraceServiceRequest');
const MetricsRequest = root.lookupType('otlp.ExportMetricsServiceRequest');

type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

/** One span as received, ids in hex, attributes flattened. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Readonly<Record<string, AttributeValue>> }>;
  /** 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message: string };
  readonly resource: Readonly<Record<string, AttributeValue>>;
  readonly scope: string;
}

/** One metric data point as received. */
export interface ReceivedPoint {
  readonly metric: string;
  readonly unit: string;
  readonly kind: 'histogram' | 'sum';
  /** Histogram count, or the sum's value. */
  readonly value: number;
  /** Histogram sum, bucket upper bounds and per-bucket counts (histograms only). */
  readonly sum?: number;
  readonly bounds?: readonly number[];
  readonly counts?: readonly number[];
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly resource: Readonly<Record<string, AttributeValue>>;
}

/** What a receiver (OTLP/HTTP here, OTLP/gRPC in otlp-grpc-receiver.ts) has received, and waits on it. */
export interface ReceivedExports {
  readonly spans: ReceivedSpan[];
  readonly points: ReceivedPoint[];
  /** Export requests received (answered or not), by path. */
  readonly requests: string[];
  /** Resolves once `predicate` holds for the spans received (checked on each export), or rejects after `timeoutMs`. */
  waitForSpans(predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  waitForPoints(predicate: (points: readonly ReceivedPoint[]) => boolean, timeoutMs?: number): Promise<ReceivedPoint[]>;
  /** Forgets what was received. */
  reset(): void;
}

/** A store of received exports; `notify` wakes the waits after an export was stored. */
export function receivedExports(label: string): ReceivedExports & { notify(): void } {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const requests: string[] = [];
  const waiters = new Set<() => void>();

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
        reject(new Error(`${label}: condition not met within ${timeoutMs}ms (${spans.length} spans, ${points.length} points so far)`));
      }, timeoutMs);
      waiters.add(check);
    });
  }

  return {
    spans,
    points,
    requests,
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
    },
    notify() {
      for (const waiter of [...waiters]) waiter();
    },
  };
}

export interface OtlpReceiver extends ReceivedExports {
  /** `http://127.0.0.1:<port>` (no path). */
  readonly endpoint: string;
  /** Lower-case headers of the last export request. */
  lastHeaders: Readonly<Record<string, string>>;
  /** Export requests by body encoding, as their `Content-Type` said. */
  readonly encodings: { protobuf: number; json: number };
  /** `ok` answers 200; `hang` never answers; `fail` answers 503. */
  mode: 'ok' | 'hang' | 'fail';
  close(): Promise<void>;
}

export async function startOtlpReceiver(mode: OtlpReceiver['mode'] = 'ok'): Promise<OtlpReceiver> {
  const { notify, ...received } = receivedExports('OTLP receiver');
  const { spans, points, requests } = received;
  const sockets = new Set<Socket>();

  const receiver: OtlpReceiver = {
    ...received,
    endpoint: '',
    lastHeaders: {},
    encodings: { protobuf: 0, json: 0 },
    mode,
    close: () => closeServer(server, sockets),
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push(req.url ?? '');
      receiver.lastHeaders = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      if (receiver.mode === 'hang') return; // never answers
      if (receiver.mode === 'fail') {
        res.writeHead(503).end();
        return;
      }
      const raw = Buffer.concat(chunks);
      const inflated = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw;
      const json = req.headers['content-type']?.split(';')[0]?.trim() === 'application/json';
      if (req.url !== '/v1/traces' && req.url !== '/v1/metrics') {
        res.writeHead(404).end();
        return;
      }
      const traces = req.url === '/v1/traces';
      // JSON bodies are turned into the protobuf message they stand for, then decoded as protobuf ones are.
      const body = json ? jsonToProtobuf(traces ? TraceRequest : MetricsRequest, inflated) : inflated;
      receiver.encodings[json ? 'json' : 'protobuf']++;
      if (traces) spans.push(...decodeSpans(body));
      else points.push(...decodePoints(body));
      // An empty ExportXServiceResponse, in the request's encoding.
      if (json) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      else res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      notify();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (receiver as { endpoint: string }).endpoint = `http://127.0.0.1:${port}`;
  return receiver;
}

function closeServer(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

interface Decoded {
  [key: string]: unknown;
}

const toObjectOptions = { longs: String, bytes: Array, defaults: false, arrays: true, oneofs: true } as const;

/** Decodes an `ExportTraceServiceRequest` (OTLP protobuf) into its spans. */
export function decodeSpans(body: Buffer): ReceivedSpan[] {
  const request = TraceRequest.toObject(TraceRequest.decode(body), toObjectOptions) as Decoded;
  const out: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans as Decoded[]) {
    const resource = attributesOf(((resourceSpans.resource as Decoded | undefined)?.attributes as Decoded[]) ?? []);
    for (const scopeSpans of resourceSpans.scopeSpans as Decoded[]) {
      const scope = ((scopeSpans.scope as Decoded | undefined)?.name as string) ?? '';
      for (const span of scopeSpans.spans as Decoded[]) {
        const status = (span.status as Decoded | undefined) ?? {};
        out.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: hex(span.parentSpanId),
          name: (span.name as string | undefined) ?? '',
          kind: (span.kind as number | undefined) ?? 0,
          startNs: BigInt((span.startTimeUnixNano as string | undefined) ?? 0),
          endNs: BigInt((span.endTimeUnixNano as string | undefined) ?? 0),
          attributes: attributesOf(span.attributes as Decoded[]),
          events: (span.events as Decoded[]).map((event) => ({ name: event.name as string, attributes: attributesOf(event.attributes as Decoded[]) })),
          status: { code: (status.code as number) ?? 0, message: (status.message as string) ?? '' },
          resource,
          scope,
        });
      }
    }
  }
  return out;
}

/** Decodes an `ExportMetricsServiceRequest` (OTLP protobuf) into its data points. */
export function decodePoints(body: Buffer): ReceivedPoint[] {
  const request = MetricsRequest.toObject(MetricsRequest.decode(body), toObjectOptions) as Decoded;
  const out: ReceivedPoint[] = [];
  for (const resourceMetrics of request.resourceMetrics as Decoded[]) {
    const resource = attributesOf(((resourceMetrics.resource as Decoded | undefined)?.attributes as Decoded[]) ?? []);
    for (const scopeMetrics of resourceMetrics.scopeMetrics as Decoded[]) {
      for (const metric of scopeMetrics.metrics as Decoded[]) {
        const histogram = metric.histogram as Decoded | undefined;
        const sum = metric.sum as Decoded | undefined;
        for (const point of (histogram?.dataPoints as Decoded[] | undefined) ?? []) {
          out.push({
            metric: metric.name as string,
            unit: metric.unit as string,
            kind: 'histogram',
            value: Number(point.count ?? 0),
            sum: Number(point.sum ?? 0),
            bounds: ((point.explicitBounds as number[] | undefined) ?? []).map(Number),
            counts: ((point.bucketCounts as unknown[] | undefined) ?? []).map(Number),
            attributes: attributesOf(point.attributes as Decoded[]),
            resource,
          });
        }
        for (const point of (sum?.dataPoints as Decoded[] | undefined) ?? []) {
          const value = point.asInt !== undefined ? Number(point.asInt) : Number(point.asDouble ?? 0);
          out.push({ metric: metric.name as string, unit: metric.unit as string, kind: 'sum', value, attributes: attributesOf(point.attributes as Decoded[]), resource });
        }
      }
    }
  }
  return out;
}

/**
 * An OTLP/JSON export request as the protobuf message it stands for. OTLP's
 * JSON mapping writes trace and span ids in hex (not proto3 JSON's base64);
 * the rest (lowerCamelCase names, 64-bit integers as strings, enums as
 * numbers) protobufjs reads as it is.
 */
function jsonToProtobuf(type: protobuf.Type, body: Buffer): Buffer {
  const request = JSON.parse(body.toString('utf8')) as Decoded;
  for (const resourceSpans of (request.resourceSpans as Decoded[] | undefined) ?? []) {
    for (const scopeSpans of (resourceSpans.scopeSpans as Decoded[] | undefined) ?? []) {
      for (const span of (scopeSpans.spans as Decoded[] | undefined) ?? []) {
        for (const id of ['traceId', 'spanId', 'parentSpanId']) {
          if (typeof span[id] !== 'string') continue;
          if (!/^(?:[0-9a-f]{2})*$/.test(span[id])) throw new Error(`OTLP/JSON: ${id} is not hex: ${span[id]}`);
          span[id] = Buffer.from(span[id], 'hex');
        }
      }
    }
  }
  return Buffer.from(type.encode(type.fromObject(request)).finish());
}

function hex(bytes: unknown): string {
  return Buffer.from((bytes as number[] | undefined) ?? []).toString('hex');
}

function attributesOf(list: readonly Decoded[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const { key, value } of list) out[key as string] = attributeValueOf(value as Decoded | undefined);
  return out;
}

function attributeValueOf(value: Decoded | undefined): AttributeValue {
  if (!value) return undefined;
  switch (value.value) {
    case 'stringValue':
      return value.stringValue as string;
    case 'boolValue':
      return value.boolValue as boolean;
    case 'intValue':
      return Number(value.intValue);
    case 'doubleValue':
      return value.doubleValue as number;
    case 'arrayValue':
      return (((value.arrayValue as Decoded).values as Decoded[] | undefined) ?? []).map(attributeValueOf);
    default:
      return undefined;
  }
}
