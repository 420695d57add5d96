/**
 * The benchmark subgraphs, all four in one process (pinned beside the load
 * generator). Each distinct request body is executed once with graphql-js
 * (@apollo/subgraph's schema); later identical bodies get the cached bytes,
 * so a subgraph costs the router under test as little as possible.
 *
 * Every request is counted per subgraph. A control listener answers
 * `GET /counts` with `{"<subgraph>": n, ...}` and `POST /reset` zeroes them.
 * The process reports its URLs to its parent over IPC:
 * `{ type: 'ready', urls: { <subgraph>: url }, control: url }`.
 *
 * Environment: `BENCH_SUBGRAPH_DELAY_MS` (default 0) delays every answer,
 * for scenarios that want subgraph latency; `BENCH_SUBGRAPH_CACHE_CONTROL`
 * (default none) is sent as every answer's `Cache-Control` header, for
 * scenarios with a response cache; `BENCH_SUBGRAPH_GRAPH` (default
 * `federated`, the four benchmark subgraphs) set to `projects` serves the
 * gRPC scenario's graph instead: the `projects` HTTP subgraph and the same
 * data as a gRPC service, `projects-grpc` (its URL is a gRPC target,
 * `dns:///127.0.0.1:<port>`, its count one per RPC; node:http2's server,
 * servers/projects-grpc.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, parse, validate, type GraphQLSchema } from 'graphql';
import { projectsSubgraph } from '../graph/projects.js';
import { benchSubgraphs } from '../graph/subgraphs.js';
import { readBody } from './read-body.js';

/** Distinct bodies kept per subgraph; a contender sending ever-new bodies must not grow memory without limit. */
const MAX_CACHED_BODIES = 20_000;

const delayMs = Number(process.env.BENCH_SUBGRAPH_DELAY_MS ?? 0);
const cacheControl = process.env.BENCH_SUBGRAPH_CACHE_CONTROL;
const graph = process.env.BENCH_SUBGRAPH_GRAPH ?? 'federated';
const counts: Record<string, number> = {};

interface GraphQLBody {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

async function answer(schema: GraphQLSchema, body: string): Promise<Buffer> {
  let request: GraphQLBody;
  try {
    request = JSON.parse(body) as GraphQLBody;
  } catch {
    return Buffer.from(JSON.stringify({ errors: [{ message: 'request body is not JSON' }] }));
  }
  try {
    const document = parse(String(request.query));
    const errors = validate(schema, document);
    if (errors.length > 0) return Buffer.from(JSON.stringify({ errors }));
    const result = await execute({
      schema,
      document,
      variableValues: (request.variables ?? undefined) as Record<string, unknown> | undefined,
      operationName: typeof request.operationName === 'string' ? request.operationName : undefined,
    });
    return Buffer.from(JSON.stringify(result));
  } catch (error) {
    return Buffer.from(JSON.stringify({ errors: [{ message: error instanceof Error ? error.message : String(error) }] }));
  }
}

function send(response: ServerResponse, status: number, bytes: Buffer): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length });
  response.end(bytes);
}

function sendAnswer(response: ServerResponse, bytes: Buffer): void {
  const headers: Record<string, string | number> = { 'content-type': 'application/json; charset=utf-8', 'content-length': bytes.length };
  if (cacheControl) headers['cache-control'] = cacheControl;
  response.writeHead(200, headers);
  response.end(bytes);
}

function subgraphHandler(name: string, schema: GraphQLSchema) {
  const cache = new Map<string, Buffer>();
  return async function serveSubgraph(request: IncomingMessage, response: ServerResponse): Promise<void> {
    counts[name] = (counts[name] ?? 0) + 1;
    if (request.method !== 'POST') {
      send(response, 405, Buffer.from('{"errors":[{"message":"POST only"}]}'));
      return;
    }
    const body = await readBody(request);
    let bytes = cache.get(body);
    if (!bytes) {
      bytes = await answer(schema, body);
      if (cache.size >= MAX_CACHED_BODIES) cache.clear();
      cache.set(body, bytes);
    }
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    sendAnswer(response, bytes);
  };
}

function controlHandler(request: IncomingMessage, response: ServerResponse): void {
  if (request.method === 'GET' && request.url === '/counts') {
    send(response, 200, Buffer.from(JSON.stringify(counts)));
  } else if (request.method === 'POST' && request.url === '/reset') {
    for (const name of Object.keys(counts)) counts[name] = 0;
    request.resume();
    send(response, 200, Buffer.from(JSON.stringify(counts)));
  } else {
    send(response, 404, Buffer.from('{"error":"GET /counts or POST /reset"}'));
  }
}

function listen(server: Server): Promise<string> {
  // Routers keep connections to subgraphs open; outlive their idle timeouts.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`));
  });
}

async function main(): Promise<void> {
  if (graph !== 'federated' && graph !== 'projects') throw new Error(`BENCH_SUBGRAPH_GRAPH must be federated or projects, got "${graph}"`);
  const urls: Record<string, string> = {};
  for (const subgraph of graph === 'projects' ? [projectsSubgraph] : benchSubgraphs) {
    const schema = buildSubgraphSchema({ typeDefs: parse(subgraph.sdl), resolvers: subgraph.resolvers });
    counts[subgraph.name] = 0;
    const handler = subgraphHandler(subgraph.name, schema);
    const server = createServer((request, response) => {
      handler(request, response).catch((error: unknown) => {
        send(response, 500, Buffer.from(JSON.stringify({ errors: [{ message: String(error) }] })));
      });
    });
    urls[subgraph.name] = `${await listen(server)}/graphql`;
  }
  if (graph === 'projects') {
    const { startProjectsGrpc } = await import('./projects-grpc.js');
    counts['projects-grpc'] = 0;
    urls['projects-grpc'] = await startProjectsGrpc({ onCall: () => (counts['projects-grpc'] = (counts['projects-grpc'] ?? 0) + 1) });
  }
  const control = await listen(createServer(controlHandler));
  if (!process.send) throw new Error('start the subgraph server with an IPC channel (it reports its URLs to its parent)');
  process.send({ type: 'ready', urls, control });
  // The parent going away means the benchmark is over.
  process.on('disconnect', () => process.exit(0));
}

await main();
