import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/index.js';
import { execute, parse, validate, type DocumentNode, type GraphQLSchema } from 'graphql';

/** One request a test subgraph received. */
export interface SubgraphCall {
  readonly query: string;
  readonly operationName: string | undefined;
  readonly variables: Record<string, unknown>;
  /** Request headers, lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
}

/** What a test subgraph answers besides the GraphQL result. */
export interface SubgraphReply {
  /** HTTP status (default 200). */
  readonly status?: number;
  /** Extra response headers, for example `cache-control`. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Replaces the body entirely (raw text), to simulate broken subgraphs. */
  readonly body?: string;
  /** Added to the GraphQL result's `extensions` (for example cache tags). */
  readonly extensions?: Record<string, unknown>;
}

/** Options of `startSubgraph`. */
export interface SubgraphOptions {
  /** Subgraph name, as the supergraph will know it. */
  readonly name: string;
  /** Federation v2 subgraph SDL (with its `@link`). */
  readonly typeDefs: string;
  /** Resolvers, including `__resolveReference` for entities. */
  readonly resolvers?: GraphQLResolverMap<unknown>;
  /** Shapes the reply per call (status, headers, extensions, raw body); default: plain 200 JSON. */
  readonly reply?: (call: SubgraphCall) => SubgraphReply | Promise<SubgraphReply> | undefined;
  /** Milliseconds to wait before answering. */
  readonly delayMs?: number;
  /** Port on 127.0.0.1. Default: a free one. */
  readonly port?: number;
}

/** A real HTTP GraphQL subgraph on 127.0.0.1, recording every call. */
export interface TestSubgraph {
  readonly name: string;
  readonly typeDefs: string;
  /** `http://127.0.0.1:<port>/graphql` */
  readonly url: string;
  /** Calls received since start or the last `reset()`, in order. */
  readonly calls: SubgraphCall[];
  reset(): void;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Starts a federation subgraph built with @apollo/subgraph, served over HTTP on a free loopback port. */
export async function startSubgraph(options: SubgraphOptions): Promise<TestSubgraph> {
  const schema = buildSubgraphSchema({ typeDefs: parse(options.typeDefs), resolvers: options.resolvers ?? {} });
  const calls: SubgraphCall[] = [];
  const documents = new Map<string, DocumentNode>();
  const server = createServer((req, res) => {
    handle(req, res, schema, documents, calls, options).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(JSON.stringify({ errors: [{ message: (error as Error).message }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const close = () => closeServer(server);
  return {
    name: options.name,
    typeDefs: options.typeDefs,
    url: `http://127.0.0.1:${port}/graphql`,
    calls,
    reset: () => void calls.splice(0),
    close,
    [Symbol.asyncDispose]: close,
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  schema: GraphQLSchema,
  documents: Map<string, DocumentNode>,
  calls: SubgraphCall[],
  options: SubgraphOptions,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    query: string;
    operationName?: string;
    variables?: Record<string, unknown>;
  };
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
  const call: SubgraphCall = { query: body.query, operationName: body.operationName ?? undefined, variables: body.variables ?? {}, headers };
  calls.push(call);
  if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
  const reply = (await options.reply?.(call)) ?? {};
  res.statusCode = reply.status ?? 200;
  res.setHeader('content-type', 'application/json');
  for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
  if (reply.body !== undefined) {
    res.end(reply.body);
    return;
  }
  let document = documents.get(body.query);
  if (!document) {
    document = parse(body.query);
    const errors = validate(schema, document);
    if (errors.length > 0) {
      res.end(JSON.stringify({ errors: errors.map((e) => e.toJSON()) }));
      return;
    }
    documents.set(body.query, document);
  }
  const result = await execute({
    schema,
    document,
    variableValues: call.variables,
    operationName: call.operationName,
    contextValue: { headers },
  });
  const json: Record<string, unknown> = { data: result.data };
  if (result.errors) json.errors = result.errors.map((e) => e.toJSON());
  if (reply.extensions) json.extensions = reply.extensions;
  res.end(JSON.stringify(json));
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
