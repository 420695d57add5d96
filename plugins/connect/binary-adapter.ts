/**
 * The other encodings and protocols on the same paths: the Connect protocol
 * with `application/proto` (POST, and GET with `encoding=proto`), gRPC and
 * gRPC-Web, served by @connectrpc/connect-node from the contract's
 * descriptors. Each call goes through the same `callOperation` as the JSON
 * form; only the encoding of the messages differs.
 */
import { fromJson, type DescMethodUnary, type JsonObject } from '@bufbuild/protobuf';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type { RouterHandle } from '../../src/index.js';
import { capDeadlineHeaders } from './call-deadline.js';
import { callOperation, forwardedHeaders } from './call-operation.js';
import { asFailure, errorAnswer } from './connect-errors.js';
import type { AnyRequest, AnyResponse } from './json-calls.js';
import { DECODER_RECURSION_LIMIT } from './message-depth.js';
import type { MethodTable } from './method-table.js';

/** A request handler of connect-node. */
export type BinaryHandler = (req: AnyRequest, res: AnyResponse) => void;

/** Builds the handler for a method table. `maxBody` limits request messages (`resource_exhausted` beyond). */
export function binaryHandler(table: MethodTable, router: RouterHandle, maxBody: number): BinaryHandler {
  const handler = connectNodeAdapter({
    connect: true,
    grpc: true,
    grpcWeb: true,
    readMaxBytes: maxBody,
    // The same bound as the JSON form's (message-depth.ts); connect-node reports a binary message beyond it as `internal`.
    binaryOptions: { recursionLimit: DECODER_RECURSION_LIMIT },
    jsonOptions: { recursionLimit: DECODER_RECURSION_LIMIT },
    // Checked before a request gets here, with the listener's own messages (docs/connect.md).
    requireConnectProtocolHeader: false,
    routes(routes) {
      for (const entry of table.values()) {
        // Contracts hold unary methods only (checked when loaded).
        routes.rpc(entry.method as DescMethodUnary, async function connectCall(message, context) {
          const out = await callOperation(router, entry, {
            message: message as unknown as Record<string, unknown>,
            headers: forwardedHeaders(context.requestHeader.entries()),
            httpMethod: context.requestMethod === 'GET' ? 'GET' : 'POST',
            signal: context.signal,
          });
          for (const [name, value] of Object.entries(out.headers)) context.responseHeader.set(name, value);
          return fromJson(entry.method.output, out.json as JsonObject);
        });
      }
    },
  });
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
    (handler as BinaryHandler)(req, res);
  };
}
