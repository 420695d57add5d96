/**
 * The projects subgraph as a gRPC service, built from the proto the
 * router's generator makes of `PROJECTS_SDL`: the gRPC counterpart of the
 * HTTP subgraphs' bare node:http servers. Like them, each distinct request
 * message is answered once from the data (protobufjs) and then with the
 * cached bytes, so the service costs the router under test as little as the
 * HTTP subgraph does.
 *
 * It is served by node:http2's server, a server library users run (the
 * judged gRPC service must be one: ../shared/INTERFACES.md, "Measuring
 * performance targets"). That server takes in every call of a burst before
 * it answers any and sends its answers once per event-loop turn; the
 * router's wait for that is part of what the scenario measures
 * (docs/grpc.md, "Performance").
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import type { Type } from 'protobufjs';
import { generateService } from '../../src/grpc/generate.js';
import { findService, loadProto } from '../../src/grpc/proto-root.js';
import { FLOW_CONTROL_WINDOW_BYTES } from '../../plugins/grpc/grpc-channels.js';
import { PROJECTS_SDL, projectsAsProto } from '../graph/projects.js';
import { cachedFrame, unframe } from './grpc-frame.js';

/** Distinct request messages kept; a router sending ever-new ones must not grow memory without limit. */
const MAX_CACHED = 20_000;

/** gRPC status codes the service answers with. */
const STATUS = { OK: '0', INVALID_ARGUMENT: '3', UNIMPLEMENTED: '12' } as const;

/** Ends a call with a status and no message ("trailers-only"). */
function fail(stream: ServerHttp2Stream, status: string, message: string): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': status, 'grpc-message': encodeURIComponent(message) }, { endStream: true });
}

/** Starts the service on a free loopback port; resolves with its target, `dns:///127.0.0.1:<port>`. */
export async function startProjectsGrpc(options: { onCall: () => void }): Promise<string> {
  const generated = await generateService({ sdl: PROJECTS_SDL });
  const proto = await loadProto(generated.proto, 'projects service.proto');
  const method = findService(proto, generated.serviceName)?.methods.QueryProjects;
  if (!method) throw new Error(`the generated ${generated.serviceName} has no QueryProjects`);
  const requestType = method.resolvedRequestType as Type;
  const responseType = method.resolvedResponseType as Type;
  const path = `/${generated.packageName}.${generated.serviceName}/QueryProjects`;
  const cache = new Map<string, Uint8Array>();

  /** The response message to a request message; throws on one that does not decode. */
  const answer = (request: Buffer): Uint8Array => {
    const key = request.toString('latin1');
    let message = cache.get(key);
    if (!message) {
      const { first } = requestType.toObject(requestType.decode(request)) as { first?: number };
      message = responseType.encode(responseType.fromObject({ projects: projectsAsProto(first ?? 0) })).finish();
      if (cache.size >= MAX_CACHED) cache.clear();
      cache.set(key, message);
    }
    return message;
  };

  return startNodeHttp2(path, answer, options.onCall);
}

/** The node:http2 server: each call answered from `answer`, framed once per distinct answer. */
async function startNodeHttp2(path: string, answer: (request: Buffer) => Uint8Array, onCall: () => void): Promise<string> {
  const { createServer } = await import('node:http2');

  // As the router's channel, a window that holds many answers in flight (Node's default is 64 KiB a connection).
  const server = createServer({ settings: { initialWindowSize: FLOW_CONTROL_WINDOW_BYTES } });
  server.on('session', (session) => session.setLocalWindowSize(FLOW_CONTROL_WINDOW_BYTES));
  server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    onCall();
    if (headers[':path'] !== path) return fail(stream, STATUS.UNIMPLEMENTED, `unknown method ${String(headers[':path'])}`);
    if (!String(headers['content-type'] ?? '').startsWith('application/grpc')) return fail(stream, STATUS.INVALID_ARGUMENT, 'content-type must be application/grpc');
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      let frame: Buffer;
      try {
        frame = cachedFrame(answer(unframe(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), 'QueryProjects request')));
      } catch (error) {
        return fail(stream, STATUS.INVALID_ARGUMENT, (error as Error).message);
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': STATUS.OK }));
      stream.end(frame);
    });
    stream.on('error', () => stream.destroy());
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
  });
  return `dns:///127.0.0.1:${port}`;
}
