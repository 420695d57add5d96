/**
 * gRPC connections: one @grpc/grpc-js client (one HTTP/2 channel) per target,
 * shared by every fetch and every loaded graph, closed when the plugin stops.
 * Unary calls carry the fetch's deadline, its propagated headers as metadata,
 * and are cancelled when the request is aborted.
 */
import type { Client, Metadata, ServiceError } from '@grpc/grpc-js';

type GrpcModule = typeof import('@grpc/grpc-js');

/** Largest response message accepted, as the HTTP transport's body limit: 64 MiB. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Status names by gRPC status code. */
export const GRPC_STATUS_NAMES: readonly string[] = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** A call that ended with a gRPC status other than OK. */
export class RpcStatusError extends Error {
  override readonly name = 'RpcStatusError';
  constructor(
    /** The RPC, e.g. `QueryGetProject`. */
    readonly method: string,
    /** gRPC status code, e.g. 5. */
    readonly status: number,
    /** The service's message (status details). */
    readonly details: string,
  ) {
    super(`${method}: ${GRPC_STATUS_NAMES[status] ?? `status ${status}`}${details ? `: ${details}` : ''}`);
  }

  /** `NOT_FOUND` for 5. */
  get statusName(): string {
    return GRPC_STATUS_NAMES[this.status] ?? 'UNKNOWN';
  }
}

/** What a unary call is sent with. */
export interface UnaryCallOptions {
  /** Absolute deadline, epoch milliseconds. */
  readonly deadline: number;
  /** Headers to send as metadata (lower-case names). */
  readonly headers: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
}

// Headers that belong to HTTP/1 or to the gRPC protocol itself, never forwarded as metadata.
const RESERVED_HEADERS = new Set(['connection', 'content-length', 'content-type', 'host', 'keep-alive', 'te', 'transfer-encoding', 'upgrade', 'user-agent', 'accept', 'accept-encoding']);

/** gRPC clients by target, created on first use. */
export class GrpcChannels {
  private grpc: GrpcModule | undefined;
  private readonly clients = new Map<string, Client>();

  /** Sends one unary call; resolves with the response bytes, rejects with `RpcStatusError`. */
  async call(target: string, path: string, request: Uint8Array, options: UnaryCallOptions): Promise<Buffer> {
    const grpc = (this.grpc ??= await import('@grpc/grpc-js'));
    let client = this.clients.get(target);
    if (!client) {
      client = new grpc.Client(target, grpc.credentials.createInsecure(), {
        'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
        'grpc.keepalive_time_ms': 60_000,
        'grpc.enable_retries': 0,
        'grpc.enable_channelz': 0,
      });
      this.clients.set(target, client);
    }
    const metadata = toMetadata(grpc, options.headers);
    const method = path.slice(path.lastIndexOf('/') + 1);
    return new Promise<Buffer>((resolve, reject) => {
      const call = client.makeUnaryRequest<Uint8Array, Buffer>(
        path,
        (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
        (bytes) => bytes,
        request,
        metadata,
        { deadline: options.deadline },
        (error: ServiceError | null, response?: Buffer) => {
          options.signal.removeEventListener('abort', cancel);
          if (error) reject(new RpcStatusError(method, error.code, error.details));
          else resolve(response ?? Buffer.alloc(0));
        },
      );
      const cancel = () => call.cancel();
      if (options.signal.aborted) call.cancel();
      else options.signal.addEventListener('abort', cancel, { once: true });
    });
  }

  /** Closes every channel. */
  close(): void {
    for (const client of this.clients.values()) client.close();
    this.clients.clear();
  }
}

function toMetadata(grpc: GrpcModule, headers: Readonly<Record<string, string>>): Metadata {
  const metadata = new grpc.Metadata();
  for (const [name, value] of Object.entries(headers)) {
    if (RESERVED_HEADERS.has(name) || name.startsWith(':') || name.startsWith('grpc-') || name.endsWith('-bin')) continue;
    metadata.set(name, value);
  }
  return metadata;
}
