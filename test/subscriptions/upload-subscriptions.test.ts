/**
 * File uploads (the GraphQL multipart request spec) sent with a
 * subscription. No subgraph subscription protocol can carry a file
 * (graphql-transport-ws and graphql-ws messages and SSE requests are JSON),
 * so the router refuses such a request with 400 `SUBSCRIPTION_NOT_SUPPORTED`
 * saying so, before any subgraph is contacted, whatever the client asked
 * the answer as (`Accept: text/event-stream`, multipart subscriptions, JSON)
 * and whichever protocol the subgraph speaks; in a batch, the entry is
 * refused and the others run. The subgraph is real, on 127.0.0.1, served
 * over each protocol in turn, and counts the subscriptions it is asked to
 * start; a control subscription without a file shows each setup would
 * reach it.
 */
import type { IncomingMessage } from 'node:http';
import { EventEmitter } from 'node:events';
import { request as httpRequest } from 'node:http';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, GraphQLScalarType, parse, subscribe } from 'graphql';
import { createYoga } from 'graphql-yoga';
import { createClient } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import { SubscriptionServer } from 'subscriptions-transport-ws';
import { describe, expect, it } from 'vitest';
import WebSocket, { type WebSocket as ServerSocket } from 'ws';
import { composeSubgraphs } from '../../src/compose/compose.js';
import type { SubscriptionSettings } from '../../src/kernel/graph/execution-config.js';
import { createLogger } from '../../src/kernel/logger.js';
import { UploadedFile } from '../../src/kernel/fetch/variables-json.js';
import type { SwitchyardPlugin } from '../../src/kernel/pipeline/plugin.js';
import { createRouter, type Router } from '../../src/kernel/router/router.js';
import { startWebSocketServer } from '../support/loopback-server.js';
import { collect, onCleanup } from './fixtures.js';

const TYPE_DEFS = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  scalar Upload
  type Query { ping: String! }
  type Subscription { uploaded(file: Upload, note: String): String! }
`;

/** The subscription a client uploads a file with (the file in `variables.file`). */
const WITH_FILE = 'subscription ($file: Upload) { uploaded(file: $file) }';
/** The same subscription without a file: the control, which reaches the subgraph. */
const CONTROL = 'subscription { uploaded(note: "control") }';

type Protocol = 'graphql-transport-ws' | 'graphql-ws' | 'sse' | 'sse_post';

interface FilesSubgraph {
  readonly url: string;
  /** Subscriptions the subgraph's resolver was asked to start. */
  readonly starts: () => number;
  /** Subscription requests that reached the subgraph: WebSocket upgrades and SSE requests. */
  readonly subscriptionRequests: () => number;
  /** Plain GraphQL over HTTP requests (queries) that reached it. */
  readonly queries: () => number;
  close(): Promise<void>;
}

/** The subgraph, serving subscriptions over `protocol` (and queries over HTTP). Each subscription sends one event, then ends. */
async function startFilesSubgraph(protocol: Protocol): Promise<FilesSubgraph> {
  let starts = 0;
  let subscriptionRequests = 0;
  let queries = 0;
  const schema = buildSubgraphSchema({
    typeDefs: parse(TYPE_DEFS),
    resolvers: {
      Upload: new GraphQLScalarType({ name: 'Upload' }),
      Query: { ping: () => 'pong' },
      Subscription: {
        uploaded: {
          subscribe: async function* (_: unknown, args: { file?: unknown; note?: string }) {
            starts++;
            yield { uploaded: args.note ?? `file: ${JSON.stringify(args.file ?? null)}` };
          },
        },
      },
    } as never,
  });
  const yoga = createYoga({ schema, logging: false, graphiql: false, maskedErrors: false });
  const onRequest = (req: IncomingMessage, res: Parameters<typeof yoga.requestListener>[1]): void => {
    if (String(req.headers.accept ?? '').includes('text/event-stream')) subscriptionRequests++;
    else queries++;
    void yoga.requestListener(req, res);
  };
  const ws = await startWebSocketServer({ onRequest });
  ws.wss.on('connection', () => subscriptionRequests++);
  let dispose: () => Promise<void> | void = () => undefined;
  if (protocol === 'graphql-transport-ws') {
    const server = useServer({ schema }, ws.wss);
    dispose = () => server.dispose();
  } else if (protocol === 'graphql-ws') {
    // subscriptions-transport-ws, the legacy protocol's reference server (as legacy-subgraph.ts runs it).
    const facing = new EventEmitter();
    ws.wss.on('connection', (socket: ServerSocket, req: IncomingMessage) => facing.emit('connection', socket, req));
    new SubscriptionServer({ schema, execute, subscribe }, facing as unknown as ConstructorParameters<typeof SubscriptionServer>[1]);
  }
  const subgraph: FilesSubgraph = {
    url: ws.url,
    starts: () => starts,
    subscriptionRequests: () => subscriptionRequests,
    queries: () => queries,
    async close() {
      await dispose();
      await ws.close();
    },
  };
  onCleanup(() => subgraph.close());
  return subgraph;
}

function settingsFor(protocol: Protocol, url: string): SubscriptionSettings {
  if (protocol === 'sse' || protocol === 'sse_post') return { url, protocol, websocketSubprotocol: 'auto' };
  return { url, protocol: 'ws', websocketSubprotocol: protocol };
}

async function startRouter(protocol: Protocol, plugins: SwitchyardPlugin[] = []): Promise<{ subgraph: FilesSubgraph; router: Router; url: string }> {
  const subgraph = await startFilesSubgraph(protocol);
  const composed = composeSubgraphs([{ name: 'files', url: subgraph.url, sdl: TYPE_DEFS, subscription: settingsFor(protocol, subgraph.url) }]);
  const router = await createRouter({
    config: { limits: { max_batch_size: 4 }, execution_config: { file: { watch: false } } },
    plugins,
    graph: { supergraphSdl: composed.supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' },
    logger: createLogger({ level: process.env.LOG_LEVEL ?? 'silent' }),
  });
  onCleanup(() => router.close());
  const { url } = await router.listen('127.0.0.1:0');
  return { subgraph, router, url };
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/** One request to the router's `/graphql` over a real socket. */
function post(url: string, headers: Record<string, string>, body: string | Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/graphql`, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A GraphQL multipart request (the spec's `operations`, `map`, one file) as a form body, with the CSRF header a browser client adds. */
async function multipart(operations: unknown, map: Record<string, string[]>, accept: string): Promise<{ headers: Record<string, string>; body: Buffer }> {
  const form = new FormData();
  form.set('operations', JSON.stringify(operations));
  form.set('map', JSON.stringify(map));
  form.set('0', new Blob(['the file the subgraph must never see a null for'], { type: 'text/plain' }), 'notes.txt');
  const encoded = new Response(form);
  return {
    headers: { 'content-type': encoded.headers.get('content-type')!, 'graphql-preflight': '1', accept },
    body: Buffer.from(await encoded.arrayBuffer()),
  };
}

const REFUSED = /File uploads are not supported for subscriptions/;

const PROTOCOLS: Protocol[] = ['graphql-transport-ws', 'graphql-ws', 'sse', 'sse_post'];

describe.each(PROTOCOLS)('a subscription with a file upload, subgraph subscriptions over %s', (protocol) => {
  it('the control subscription without a file reaches the subgraph', async () => {
    const { subgraph, url } = await startRouter(protocol);
    const answer = await post(url, { 'content-type': 'application/json', accept: 'text/event-stream' }, JSON.stringify({ query: CONTROL }));
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"uploaded":"control"');
    expect(subgraph.starts()).toBe(1);
    expect(subgraph.subscriptionRequests()).toBeGreaterThan(0);
  });

  it.each([
    ['Server-Sent Events (Accept: text/event-stream)', 'text/event-stream'],
    ['multipart subscriptions (Accept: multipart/mixed;subscriptionSpec="1.0")', 'multipart/mixed;subscriptionSpec="1.0", application/json'],
    ['a JSON answer (Accept: application/graphql-response+json)', 'application/graphql-response+json'],
    ['a JSON answer (Accept: application/json)', 'application/json'],
  ])('asked as %s: 400 SUBSCRIPTION_NOT_SUPPORTED, no subgraph contacted', async (_, accept) => {
    const { subgraph, url } = await startRouter(protocol);
    const { headers, body } = await multipart({ query: WITH_FILE, variables: { file: null } }, { 0: ['variables.file'] }, accept);
    const answer = await post(url, headers, body);
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/(graphql-response\+)?json/);
    const errors = (JSON.parse(answer.text) as { errors: Array<{ message: string; extensions: { code: string } }> }).errors;
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toMatch(REFUSED);
    expect(errors[0]!.extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED');
    expect(subgraph.starts()).toBe(0);
    expect(subgraph.subscriptionRequests()).toBe(0);
    expect(subgraph.queries()).toBe(0);
  });

  it('in a batch: the subscription entry is refused, the query beside it runs, no subscription starts', async () => {
    const { subgraph, url } = await startRouter(protocol);
    const operations = [{ query: '{ ping }' }, { query: WITH_FILE, variables: { file: null } }];
    const { headers, body } = await multipart(operations, { 0: ['1.variables.file'] }, 'application/json');
    const answer = await post(url, headers, body);
    expect(answer.status).toBe(200);
    const [query, refused] = JSON.parse(answer.text) as [unknown, { errors: Array<{ message: string; extensions: { code: string } }> }];
    expect(query).toEqual({ data: { ping: 'pong' } });
    expect(refused.errors[0]!.message).toMatch(REFUSED);
    expect(refused.errors[0]!.extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED');
    expect(subgraph.starts()).toBe(0);
    expect(subgraph.subscriptionRequests()).toBe(0);
  });

  it("asked as incremental delivery (Accept: multipart/mixed, no subscriptionSpec): the error in the answer's one part, no subgraph contacted", async () => {
    const { subgraph, url } = await startRouter(protocol);
    const { headers, body } = await multipart({ query: WITH_FILE, variables: { file: null } }, { 0: ['variables.file'] }, 'multipart/mixed');
    const answer = await post(url, headers, body);
    // That format answers every result, errors included, as a part of a 200 (graphql-http.ts).
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(REFUSED);
    expect(answer.text).toContain('"code":"SUBSCRIPTION_NOT_SUPPORTED"');
    expect(subgraph.starts()).toBe(0);
    expect(subgraph.subscriptionRequests()).toBe(0);
  });

  it("a file put in a subscription's variables by a plugin (not a multipart request): refused over WebSocket and SSE, never sent as null", async () => {
    // Stands for any way a file could reach a streamed subscription: the check is where the subscription starts.
    const withFile: SwitchyardPlugin = {
      name: 'adds-a-file',
      setup: () => ({
        hooks: {
          onRequest(event) {
            event.setInput({ ...event.input, variables: { ...event.input.variables, file: new UploadedFile(['bytes'], 'added.txt') } });
          },
        },
      }),
    };
    const { subgraph, url } = await startRouter(protocol, [withFile]);
    const client = createClient({ url: `${url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    onCleanup(() => client.dispose());
    const refused = collect(client, { query: WITH_FILE });
    await refused.until(() => refused.error !== undefined || refused.events.length > 0);
    expect(refused.events).toEqual([]);
    const wsErrors = refused.error as Array<{ message: string; extensions: { code: string } }>;
    expect(wsErrors[0]!.message).toMatch(REFUSED);
    expect(wsErrors[0]!.extensions.code).toBe('SUBSCRIPTION_NOT_SUPPORTED');
    const sse = await post(url, { 'content-type': 'application/json', accept: 'text/event-stream' }, JSON.stringify({ query: WITH_FILE }));
    expect(sse.status).toBe(400);
    expect(sse.text).toMatch(REFUSED);
    expect(subgraph.starts()).toBe(0);
    expect(subgraph.subscriptionRequests()).toBe(0);
  });
});
