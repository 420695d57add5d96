/**
 * The projects subgraph as a gRPC service (@grpc/grpc-js), built from the
 * proto the router's generator makes of `PROJECTS_SDL`. Like the HTTP
 * subgraphs, each distinct request message is answered once from the data
 * (protobufjs) and then with the cached bytes, so the service costs the
 * router under test as little as the HTTP subgraph does.
 */
import type { Type } from 'protobufjs';
import { generateService } from '../../src/grpc/generate.js';
import { findService, loadProto } from '../../src/grpc/proto-root.js';
import { PROJECTS_SDL, projectsAsProto } from '../graph/projects.js';

/** Distinct request messages kept; a router sending ever-new ones must not grow memory without limit. */
const MAX_CACHED = 20_000;

/** Starts the service on a free loopback port; resolves with its target, `dns:///127.0.0.1:<port>`. */
export async function startProjectsGrpc(options: { onCall: () => void }): Promise<string> {
  const grpc = await import('@grpc/grpc-js');
  const generated = await generateService({ sdl: PROJECTS_SDL });
  const proto = await loadProto(generated.proto, 'projects service.proto');
  const service = findService(proto, generated.serviceName);
  const method = service?.methods.QueryProjects;
  if (!service || !method) throw new Error(`the generated ${generated.serviceName} has no QueryProjects`);
  const requestType = method.resolvedRequestType as Type;
  const responseType = method.resolvedResponseType as Type;
  const cache = new Map<string, Buffer>();
  const raw = (bytes: Buffer) => bytes;
  const server = new grpc.Server();
  server.addService(
    {
      QueryProjects: {
        path: `/${generated.packageName}.${generated.serviceName}/QueryProjects`,
        requestStream: false,
        responseStream: false,
        requestSerialize: raw,
        requestDeserialize: raw,
        responseSerialize: raw,
        responseDeserialize: raw,
      },
    },
    {
      QueryProjects: (call: { request: Buffer }, callback: (error: null, value: Buffer) => void) => {
        options.onCall();
        const key = call.request.toString('base64');
        let bytes = cache.get(key);
        if (!bytes) {
          const { first } = requestType.toObject(requestType.decode(call.request)) as { first?: number };
          bytes = Buffer.from(responseType.encode(responseType.fromObject({ projects: projectsAsProto(first ?? 0) })).finish());
          if (cache.size >= MAX_CACHED) cache.clear();
          cache.set(key, bytes);
        }
        callback(null, bytes);
      },
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return `dns:///127.0.0.1:${port}`;
}
