/**
 * The other encodings and protocols on the same paths: the Connect protocol
 * with `application/proto` (POST bodies of a compression not answered by
 * json-calls.ts; every GET is answered there), gRPC and gRPC-Web, served by
 * @connectrpc/connect-node from the contract's descriptors. Each call goes
 * through the same `callOperation` as the JSON form; only the encoding of
 * the messages differs.
 *
 * Request messages pass the same depth check as the Connect form
 * (message-depth.ts), so one nested past 100 levels is `resource_exhausted`
 * in every protocol. connect-node decodes a binary message before any code
 * of ours runs and reports its decoder's recursion limit as `internal`, so
 * binary messages go to routes whose input type is `google.protobuf.Empty`:
 * connect-node only walks the bytes (every field unknown to it, kept raw),
 * and the call checks and decodes them itself. JSON messages keep the real
 * input type; a text decoder checks their depth first.
 */
import { fromJson, toBinary, type DescMethodUnary, type JsonObject } from '@bufbuild/protobuf';
import { EmptySchema, type Empty } from '@bufbuild/protobuf/wkt';
import type { HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { RouterHandle } from '../../src/index.js';
import { capDeadlineHeaders } from './call-deadline.js';
import { callOperation, forwardedHeaders } from './call-operation.js';
import { asFailure, errorAnswer } from './connect-errors.js';
import { parseBinaryMessage, type AnyRequest, type AnyResponse } from './json-calls.js';
import { DECODER_RECURSION_LIMIT, depthCheckingTextDecoder } from './message-depth.js';
import type { MethodEntry, MethodTable } from './method-table.js';

/** A request handler of connect-node. */
export type BinaryHandler = (req: AnyRequest, res: AnyResponse) => void;

/** Builds the handler for a method table. `maxBody` limits request messages (`resource_exhausted` beyond). */
export function binaryHandler(table: MethodTable, router: RouterHandle, maxBody: number): BinaryHandler {
  const protoMessages = adapterFor(table, router, maxBody, 'proto');
  const jsonMessages = adapterFor(table, router, maxBody, 'json');
  return function binaryCall(req, res) {
    try {
      // connect-node would arm a timer longer than Node keeps, which fires at once.
      capDeadlineHeaders(req);
    } catch (error) {
      req.resume();
      const answer = errorAnswer(asFailure(error));
      res.writeHead(answer.status, answer.headers);
      res.end(answer.body);
      return;
    }
    (carriesProtoMessages(req) ? protoMessages : jsonMessages)(req, res);
  };
}

/**
 * How deep connect-node may nest unknown groups while it walks a binary
 * message for the Empty input (its skip recurses per level): well past
 * MAX_MESSAGE_DEPTH, so the depth check answers for groups as for messages.
 */
const GROUP_WALK_LIMIT = 1000;

const BINARY_TYPE = /^application\/(proto|grpc|grpc-web|grpc-web-text)(\+proto)?$/;

/** Whether the request's messages are protobuf's binary encoding (a gRPC type without `+json`, `application/proto`, or a GET with `encoding=proto`). */
function carriesProtoMessages(req: AnyRequest): boolean {
  if (req.method === 'GET') return new URLSearchParams((req.url ?? '').split('?')[1] ?? '').get('encoding') === 'proto';
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
  return BINARY_TYPE.test(type);
}

/** A connect-node handler for every method of the table, for messages in one encoding. */
function adapterFor(table: MethodTable, router: RouterHandle, maxBody: number, encoding: 'proto' | 'json'): BinaryHandler {
  const handler = connectNodeAdapter({
    connect: true,
    grpc: true,
    grpcWeb: true,
    readMaxBytes: maxBody,
    binaryOptions: { recursionLimit: encoding === 'proto' ? GROUP_WALK_LIMIT : DECODER_RECURSION_LIMIT },
    // Unknown fields refused, as the Connect JSON path refuses them (docs/connect.md): one answer per message on every protocol.
    jsonOptions: { recursionLimit: DECODER_RECURSION_LIMIT, ignoreUnknownFields: false },
    // Checked before a request gets here, with the listener's own messages (docs/connect.md).
    requireConnectProtocolHeader: false,
    routes(routes) {
      for (const entry of table.values()) {
        // Contracts hold unary methods only (checked when loaded).
        const method = entry.method as DescMethodUnary;
        if (encoding === 'proto') {
          const rawMethod = { ...method, input: EmptySchema } as DescMethodUnary;
          routes.rpc(rawMethod, function connectCall(raw, context) {
            return answer(router, entry, parseBinaryMessage(entry, toBinary(EmptySchema, raw as Empty)), context);
          });
        } else {
          // connect-node hands `jsonOptions` (text decoder included) to its JSON decoder as they are.
          const jsonOptions = { recursionLimit: DECODER_RECURSION_LIMIT, ignoreUnknownFields: false, textDecoder: depthCheckingTextDecoder(method.input) };
          routes.rpc(
            method,
            function connectCall(message, context) {
              return answer(router, entry, message as unknown as Record<string, unknown>, context);
            },
            { jsonOptions },
          );
        }
      }
    },
  });
  return handler as BinaryHandler;
}

/** Runs the call's operation; its data becomes the response message. */
async function answer(router: RouterHandle, entry: MethodEntry, message: Record<string, unknown>, context: HandlerContext) {
  const out = await callOperation(router, entry, {
    message,
    headers: forwardedHeaders(context.requestHeader.entries()),
    httpMethod: context.requestMethod === 'GET' ? 'GET' : 'POST',
    signal: context.signal,
  });
  for (const [name, value] of Object.entries(out.headers)) context.responseHeader.set(name, value);
  return fromJson(entry.method.output, out.json as JsonObject);
}
