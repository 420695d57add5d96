/**
 * A real gRPC server (@grpc/grpc-js) for tests, built from generated proto
 * text: handlers take and return plain objects (enum values by name), and
 * every call is recorded. Listens on 127.0.0.1 on a free port.
 */
import { createServer as createTcpServer, connect, type Server as TcpServer, type Socket } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import type { Type } from 'protobufjs';
import { loadProto, findService } from '../../../src/grpc/proto-root.js';

/** A handler's answer: a plain response object, or a gRPC status to fail with. */
export type HandlerResult = Record<string, unknown> | { readonly status: grpc.status; readonly details: string };

/** Handlers by RPC name (`QueryGetProject`). */
export type Handlers = Record<string, (request: Record<string, unknown>, metadata: grpc.Metadata) => HandlerResult | Promise<HandlerResult>>;

/** One call the service received. */
export interface ServiceCall {
  readonly method: string;
  readonly request: Record<string, unknown>;
  readonly metadata: Record<string, unknown>;
}

export interface TestGrpcService {
  /** `dns:///127.0.0.1:<port>` (through a connection-counting proxy). */
  readonly target: string;
  /** The server itself, without the proxy (for latency measurements). */
  readonly directTarget: string;
  readonly calls: ServiceCall[];
  /** TCP connections the router opened so far. */
  readonly connections: () => number;
  close(): Promise<void>;
}

/** Options of `startGrpcService`. */
export interface GrpcServiceOptions {
  readonly proto: string;
  /** Service name in the proto package, e.g. `ServiceService`. */
  readonly service: string;
  readonly handlers: Handlers;
  /** Milliseconds each call waits before answering. Default: 0. */
  readonly delayMs?: number;
}

function isStatus(result: HandlerResult): result is { status: grpc.status; details: string } {
  return typeof result.status === 'number' && typeof result.details === 'string';
}

/** Starts the service; `close()` stops it. */
export async function startGrpcService({ proto, service: serviceName, handlers, delayMs = 0 }: GrpcServiceOptions): Promise<TestGrpcService> {
  const loaded = await loadProto(proto, 'test proto');
  const service = findService(loaded, serviceName);
  if (!service) throw new Error(`no service ${serviceName}`);
  const calls: ServiceCall[] = [];
  const definition: Record<string, grpc.MethodDefinition<Record<string, unknown>, Record<string, unknown>>> = {};
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const method of service.methodsArray) {
    const request = method.resolvedRequestType as Type;
    const response = method.resolvedResponseType as Type;
    definition[method.name] = {
      path: `/${loaded.packageName}.${service.name}/${method.name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: Record<string, unknown>) => Buffer.from(request.encode(request.fromObject(value)).finish()),
      requestDeserialize: (bytes: Buffer) => request.toObject(request.decode(bytes), { enums: String, arrays: true }),
      responseSerialize: (value: Record<string, unknown>) => Buffer.from(response.encode(response.fromObject(value)).finish()),
      responseDeserialize: (bytes: Buffer) => response.toObject(response.decode(bytes), { enums: String }),
    };
    implementation[method.name] = (call: grpc.ServerUnaryCall<Record<string, unknown>, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      calls.push({ method: method.name, request: call.request, metadata: call.metadata.getMap() });
      const handler = handlers[method.name];
      const answer = async (): Promise<void> => {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        if (!handler) return callback({ code: grpc.status.UNIMPLEMENTED, details: `${method.name} is not implemented` });
        const result = await handler(call.request, call.metadata);
        if (isStatus(result)) callback({ code: result.status, details: result.details });
        else callback(null, result);
      };
      answer().catch((error: unknown) => callback({ code: grpc.status.INTERNAL, details: String(error) }));
    };
  }
  const server = new grpc.Server();
  server.addService(definition, implementation);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  const proxy = await startCountingProxy(port);
  return {
    target: `dns:///127.0.0.1:${proxy.port}`,
    directTarget: `dns:///127.0.0.1:${port}`,
    calls,
    connections: () => proxy.count,
    async close() {
      await proxy.close();
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
    },
  };
}

/** A TCP pass-through that counts the connections made to the service. */
async function startCountingProxy(port: number): Promise<{ port: number; count: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { count: 0 };
  const server: TcpServer = createTcpServer((client) => {
    state.count += 1;
    const upstream = connect(port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      // Without it, Nagle's algorithm holds small HTTP/2 frames back for tens of milliseconds.
      socket.setNoDelay(true);
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    get count() {
      return state.count;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
