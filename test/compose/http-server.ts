/** Real HTTP servers on 127.0.0.1 for the compose tests. */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a test server received. */
export interface SeenRequest {
  /** HTTP method. */
  method: string;
  /** Request path. */
  url: string;
  /** Request headers (lower-case names). */
  headers: IncomingHttpHeaders;
  /** Request body text. */
  body: string;
}

/** A running test server. */
export interface TestServer {
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  /** Requests received so far. */
  requests: SeenRequest[];
  /** Stops the server. */
  close(): Promise<void>;
}

type Handler = (request: SeenRequest, response: ServerResponse) => void;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startServer(handler: Handler): Promise<TestServer> {
  const requests: SeenRequest[] = [];
  const server = createServer(async (request, response) => {
    const seen: SeenRequest = { method: request.method ?? '', url: request.url ?? '', headers: request.headers, body: await readBody(request) };
    requests.push(seen);
    handler(seen, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/** A federation subgraph that answers `{ _service { sdl } }` with `sdl` at any path. */
export function startSubgraph(sdl: string): Promise<TestServer> {
  return startServer((request, response) => {
    const { query } = JSON.parse(request.body || '{}') as { query?: string };
    const body = query?.includes('_service') ? { data: { _service: { sdl } } } : { errors: [{ message: 'only _service is served here' }] };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
}

/** A server that answers every request with `status`, `contentType` and `body`. */
export function startStaticServer(status: number, contentType: string, body: string): Promise<TestServer> {
  return startServer((_request, response) => {
    response.writeHead(status, { 'content-type': contentType }).end(body);
  });
}
