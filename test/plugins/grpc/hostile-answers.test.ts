/**
 * Answers a gRPC service may send that do not fit a unary call or its proto,
 * each from one bare HTTP/2 service standing in for the catalog service,
 * behind one router whose subgraph_error_propagation is off: the service's
 * own statuses then reach clients only as the generic error, while what the
 * router observed itself (an answer it refuses) reaches them as made.
 */
import type http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareService, type BareService } from './bare-service.js';
import { catalogService, inventorySubgraph } from './catalog-fixture.js';
import { startGraph, type TestGraph } from './grpc-graph.js';

type Answer = (stream: http2.ServerHttp2Stream) => void;

let answer: Answer;
let service: BareService;
let graph: TestGraph;

const REQUEST_TIMEOUT_MS = 5_000;

beforeAll(async () => {
  service = await startBareService((stream) => {
    stream.on('error', () => {});
    stream.resume();
    answer(stream);
  });
  graph = await startGraph({
    grpc: [catalogService()],
    http: [inventorySubgraph],
    config: { subgraph_error_propagation: { enabled: false }, traffic_shaping: { subgraphs: { catalog: { request_timeout: `${REQUEST_TIMEOUT_MS}ms` } } } },
    mapRecords: (records) => records.map((record) => (record.name === 'catalog' ? { ...record, url: service.target } : record)),
  });
  // The first call goes through the channel while it connects; the others straight on its subchannel (direct-calls.ts).
  answer = answering(frame(productAnswer('Table')));
  expect((await graph.query('{ product(id: "p1") { name } }')).body).toEqual({ data: { product: { name: 'Table' } } });
});

afterAll(async () => {
  await graph?.close();
  await service?.close();
});

/** A message built field by field, as the wire format has it. */
function message(write: (writer: protobuf.Writer) => void): Buffer {
  const writer = protobuf.Writer.create();
  write(writer);
  return Buffer.from(writer.finish());
}

function tag(writer: protobuf.Writer, number: number, wireType: number): protobuf.Writer {
  return writer.uint32((number << 3) | wireType);
}

/** `QueryProductResponse { product: { name } }` (Product.name is field 2, Product.kind field 11). */
function productAnswer(name: string, kind?: number): Buffer {
  const product = message((w) => {
    tag(w, 2, 2).string(name);
    if (kind !== undefined) tag(w, 11, 0).int32(kind);
  });
  return message((w) => tag(w, 1, 2).bytes(product));
}

function frame(payload: Buffer, compressed = false): Buffer {
  const header = Buffer.alloc(5);
  header[0] = compressed ? 1 : 0;
  header.writeUInt32BE(payload.length, 1);
  return Buffer.concat([header, payload]);
}

/** Answers with response headers, `body` and then `trailers`. */
function answering(body: Buffer, trailers: http2.OutgoingHttpHeaders = { 'grpc-status': '0' }, headers: http2.OutgoingHttpHeaders = {}): Answer {
  return (stream) => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc', ...headers }, { waitForTrailers: true });
    stream.once('wantTrailers', () => stream.sendTrailers(trailers));
    stream.end(body);
  };
}

const GENERIC = { data: { product: null }, errors: [{ message: "Failed to fetch from Subgraph 'catalog'." }] };

describe('a gRPC service', () => {
  it('has the UNAVAILABLE, CANCELLED and DEADLINE_EXCEEDED statuses it sends treated as its own errors, so their messages stay hidden when propagation is off', async () => {
    answer = answering(Buffer.alloc(0), { 'grpc-status': '14', 'grpc-message': 'db=10.1.2.3 password=hunter2' });
    expect((await graph.query('{ product(id: "p1") { name } }')).body).toEqual(GENERIC);
    // A trailers-only answer (the status in the response headers), as gRPC servers send errors.
    answer = (stream) => stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '1', 'grpc-message': 'db=10.1.2.3' }, { endStream: true });
    expect((await graph.query('{ product(id: "p1") { name } }')).body).toEqual(GENERIC);
    // A timeout of its own, long before the router's deadline, is not the router's timeout.
    answer = answering(Buffer.alloc(0), { 'grpc-status': '4', 'grpc-message': 'query to 10.1.2.3 timed out' });
    expect((await graph.query('{ product(id: "p1") { name } }')).body).toEqual(GENERIC);
  });

  it('answering a unary call with two messages gets a prompt invalid-response error, not a timeout', async () => {
    answer = answering(Buffer.concat([frame(productAnswer('Table')), frame(productAnswer('Chair'))]));
    const started = Date.now();
    const response = await graph.query('{ product(id: "p1") { name } }');
    expect(Date.now() - started).toBeLessThan(REQUEST_TIMEOUT_MS / 2);
    expect(response.body).toEqual({
      data: { product: null },
      errors: [
        {
          message: 'Subgraph "catalog" sent an invalid gRPC answer: QueryProduct answered with more than one message.',
          path: ['product'],
          extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'catalog' },
        },
      ],
    });
  });

  it('answering with no message at all gets an invalid-response error', async () => {
    answer = answering(Buffer.alloc(0));
    expect((await graph.query('{ product(id: "p1") { name } }')).body.errors).toEqual([
      expect.objectContaining({
        message: 'Subgraph "catalog" sent an invalid gRPC answer: QueryProduct answered with no message.',
        extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'catalog' },
      }),
    ]);
  });

  it('sending an enum number its proto does not define gets an error naming the enum, not a null', async () => {
    answer = answering(frame(productAnswer('Table', 7)));
    expect((await graph.query('{ product(id: "p1") { name kind } }')).body).toEqual({
      data: { product: null },
      errors: [
        {
          message: 'Subgraph "catalog" sent a response that does not fit its schema: enum ProductKind has no value numbered 7 (regenerate the service and recompose).',
          path: ['product'],
          extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'catalog' },
        },
      ],
    });
  });

  it('sending a oneof member with the wrong wire type gets an error, as any other field would', async () => {
    // QueryNodeResponse { node: Node { oneof instance { Author author = 1; ... } } }, with `author` sent as a number.
    const node = message((w) => tag(w, 1, 0).uint32(5));
    answer = answering(frame(message((w) => tag(w, 1, 2).bytes(node))));
    expect((await graph.query('{ node(id: "u1") { id } }')).body).toEqual({
      data: { node: null },
      errors: [
        {
          message: expect.stringMatching(/^Subgraph "catalog" sent a response that does not fit its schema: cannot decode QueryNodeResponse: .*wire type 0/),
          path: ['node'],
          extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'catalog' },
        },
      ],
    });
  });

  it('sending a small gzip answer that inflates past 64 MiB is refused without blocking the event loop meanwhile', async () => {
    const bomb = frame(gzipSync(Buffer.alloc(65 * 1024 * 1024)), true);
    answer = answering(bomb, { 'grpc-status': '0' }, { 'grpc-encoding': 'gzip' });
    let last = Date.now();
    let longestGap = 0;
    const ticker = setInterval(() => {
      const now = Date.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 2);
    const started = Date.now();
    const response = await graph.query('{ product(id: "p1") { name } }').finally(() => clearInterval(ticker));
    const elapsed = Date.now() - started;
    longestGap = Math.max(longestGap, Date.now() - last);
    expect(response.body.errors).toEqual([
      expect.objectContaining({
        message: `Request to subgraph "catalog" failed: gRPC QueryProduct: RESOURCE_EXHAUSTED: Received message that decompresses to a size larger than ${64 * 1024 * 1024}.`,
        extensions: expect.objectContaining({ code: 'SUBGRAPH_REQUEST_FAILED' }),
      }),
    ]);
    // Inflated in one go on the event loop, most of the call would be one gap; on zlib's threads, the loop keeps turning.
    expect(longestGap).toBeLessThan(elapsed / 2);
  });
});
