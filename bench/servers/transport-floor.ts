/**
 * The transport floor of the gRPC scenario: a bare node:http server that
 * answers every request with the projects of `PROJECTS_QUERY`, fetched with one
 * subgraph call and nothing else (no parsing, validation or planning of the
 * client's request). It shows what the transport itself costs, so the
 * router's gRPC-vs-HTTP latency ratio can be read against the least any
 * Node.js process pays for the same call.
 *
 * `--http <url>`: one POST with undici (keep-alive pool) to the HTTP GraphQL
 * subgraph; its answer is parsed and written again (the subgraph's JSON is
 * already the client's response, but a router reads what it merges, so the
 * floor pays for reading it as the gRPC floors pay for decoding).
 * `--grpc <target>`: one unary call with @grpc/grpc-js, made on the channel
 * as the router's transport makes it, decoded with protobufjs and written as
 * GraphQL JSON (the least a gRPC answer needs: proto messages are not the
 * client's bytes).
 * `--h2 <target>`: the same call without @grpc/grpc-js: a bare node:http2
 * stream carrying the gRPC frame, decoded the same way. It shows how much of
 * the gRPC cost is Node's HTTP/2 client rather than the gRPC library.
 *
 * Usage: node transport-floor.js --port <n> (--http <url> | --grpc <target> | --h2 <target>)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ClientHttp2Session } from 'node:http2';
import { parseArgs } from 'node:util';
import type { Enum, Type } from 'protobufjs';
import { Pool } from 'undici';
import { generateService } from '../../src/grpc/generate.js';
import { findService, loadProto } from '../../src/grpc/proto-root.js';
import { FLOW_CONTROL_WINDOW_BYTES, GRPC_CHANNEL_OPTIONS } from '../../plugins/grpc/grpc-channels.js';
import { PROJECT_COUNT, PROJECTS_QUERY, PROJECTS_SDL } from '../graph/projects.js';
import { grpcFrame, unframe } from './grpc-frame.js';
import { readBody } from './read-body.js';

const { values: args } = parseArgs({ options: { port: { type: 'string' }, http: { type: 'string' }, grpc: { type: 'string' }, h2: { type: 'string' } } });
if (!args.port || [args.http, args.grpc, args.h2].filter(Boolean).length !== 1) {
  console.error('usage: transport-floor --port <n> (--http <url> | --grpc <target> | --h2 <target>)');
  process.exit(2);
}

/** One subgraph call; resolves with the client's response bytes. */
type FetchProjects = () => Promise<Buffer>;

function httpFetcher(url: string): FetchProjects {
  const { origin, pathname } = new URL(url);
  const pool = new Pool(origin, { pipelining: 1 });
  const body = JSON.stringify({ query: PROJECTS_QUERY });
  return async () => {
    const answer = await pool.request({ path: pathname, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = await answer.body.text();
    if (answer.statusCode !== 200) throw new Error(`subgraph answered ${answer.statusCode}`);
    return Buffer.from(JSON.stringify(JSON.parse(text)));
  };
}

/** A proto `Project` as the GraphQL object `PROJECTS_QUERY` selects (field order included). */
interface ProtoProject {
  id: string;
  name: string;
  description?: { value: string } | null;
  status: number;
  budget: number;
  tags: string[];
  created_at: string;
}

/** The generated service's QueryProjects: its path, request bytes, and the answer's decoding into the client's response. */
interface ProjectsRpc {
  readonly path: string;
  readonly request: Buffer;
  toResponse(message: Buffer): Buffer;
}

async function projectsRpc(): Promise<ProjectsRpc> {
  const generated = await generateService({ sdl: PROJECTS_SDL });
  const proto = await loadProto(generated.proto, 'projects service.proto');
  const method = findService(proto, generated.serviceName)?.methods.QueryProjects;
  if (!method) throw new Error(`the generated ${generated.serviceName} has no QueryProjects`);
  const requestType = method.resolvedRequestType as Type;
  const responseType = method.resolvedResponseType as Type;
  const statusEnum = proto.root.lookupEnum(`${generated.packageName}.ProjectStatus`) as Enum;
  // As the router reads enums: `_UNSPECIFIED` (0) is null.
  const statuses = new Map(Object.entries(statusEnum.values).flatMap(([name, number]) => (number === 0 ? [] : [[number, name.replace(/^PROJECT_STATUS_/, '')]])));
  return {
    path: `/${generated.packageName}.${generated.serviceName}/QueryProjects`,
    request: Buffer.from(requestType.encode(requestType.fromObject({ first: PROJECT_COUNT })).finish()),
    toResponse(message) {
      const decoded = responseType.decode(message) as unknown as { projects: ProtoProject[] };
      const projects = decoded.projects.map((p) => ({
        id: p.id,
        name: p.name,
        description: p.description ? p.description.value : null,
        status: statuses.get(p.status) ?? null,
        budget: p.budget,
        tags: p.tags,
        createdAt: p.created_at,
      }));
      return Buffer.from(JSON.stringify({ data: { projects } }));
    },
  };
}

async function grpcFetcher(target: string): Promise<FetchProjects> {
  const grpc = await import('@grpc/grpc-js');
  const { path, request, toResponse } = await projectsRpc();
  // The router's channel options, so the floor pays what the router pays per call.
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), GRPC_CHANNEL_OPTIONS);
  const channel = client.getChannel();
  const call = (): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      let message: Buffer | undefined;
      const rpc = channel.createCall(path, Date.now() + 30_000, undefined, null, undefined);
      rpc.start(new grpc.Metadata(), {
        onReceiveMetadata() {},
        onReceiveMessage(received: Buffer) {
          message = received;
        },
        onReceiveStatus(status) {
          if (status.code !== grpc.status.OK || !message) reject(new Error(`QueryProjects: status ${status.code} ${status.details}`));
          else resolve(message);
        },
      });
      rpc.sendMessageWithContext({}, request);
      rpc.halfClose();
      rpc.startRead();
    });
  return async () => toResponse(await call());
}

async function h2Fetcher(target: string): Promise<FetchProjects> {
  const { connect, constants } = await import('node:http2');
  const { path, request, toResponse } = await projectsRpc();
  const authority = target.replace(/^dns:\/\/\//, 'http://');
  let session: ClientHttp2Session | undefined;
  // One session, opened again after it is lost; the connection's window raised as @grpc/grpc-js raises it.
  const sessionNow = (): ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    const opened = connect(authority, { settings: { initialWindowSize: FLOW_CONTROL_WINDOW_BYTES } });
    opened.on('connect', () => opened.setLocalWindowSize(FLOW_CONTROL_WINDOW_BYTES));
    opened.on('error', (error) => console.error(`transport-floor: HTTP/2 session: ${error.message}`));
    return (session = opened);
  };
  const frame = grpcFrame(request);
  const headers = { [constants.HTTP2_HEADER_METHOD]: 'POST', [constants.HTTP2_HEADER_PATH]: path, 'content-type': 'application/grpc', te: 'trailers' };
  const call = (): Promise<Buffer> =>
    new Promise((resolve, reject) => {
      const stream = sessionNow().request(headers);
      const chunks: Buffer[] = [];
      // A service failing before any message answers with headers only ("trailers-only"): the status is there.
      let status: string | undefined;
      let details = '';
      const readStatus = (fields: Record<string, unknown>) => {
        if (fields['grpc-status'] !== undefined) status = String(fields['grpc-status']);
        if (fields['grpc-message'] !== undefined) details = String(fields['grpc-message']);
      };
      stream.on('response', readStatus);
      stream.on('trailers', readStatus);
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (status !== '0') reject(new Error(`QueryProjects: grpc-status ${status ?? 'missing'} ${details}`));
        else {
          try {
            resolve(unframe(Buffer.concat(chunks), 'QueryProjects'));
          } catch (error) {
            reject(error as Error);
          }
        }
      });
      stream.on('error', reject);
      stream.end(frame);
    });
  return async () => toResponse(await call());
}

const fetchProjects = args.http ? httpFetcher(args.http) : args.grpc ? await grpcFetcher(args.grpc) : await h2Fetcher(args.h2!);

async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
  await readBody(request);
  let status = 200;
  let bytes: Buffer;
  try {
    bytes = await fetchProjects();
  } catch (error) {
    status = 502;
    bytes = Buffer.from(JSON.stringify({ errors: [{ message: (error as Error).message }] }));
  }
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
  response.end(bytes);
}

const server = createServer((request, response) => {
  serve(request, response).catch((error: unknown) => {
    response.destroy(error instanceof Error ? error : new Error(String(error)));
  });
});
server.listen(Number(args.port), '127.0.0.1');
