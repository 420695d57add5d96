import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { composeGraph, introspectSubgraph } from '../../src/compose/index.js';
import { RouterError } from '../../src/kernel/errors.js';
import { accountsSdl, createTempDir, reviewsSdl, type TempDir } from './fixtures.js';
import { startServer, startStaticServer, startSubgraph, type TestServer } from './http-server.js';

let dir: TempDir;
const servers: TestServer[] = [];
beforeEach(async () => {
  dir = await createTempDir();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await dir.remove();
});

async function serve(server: Promise<TestServer>): Promise<TestServer> {
  const started = await server;
  servers.push(started);
  return started;
}

describe('composing from running subgraphs', () => {
  it('reads a running subgraph over HTTP POST with { _service { sdl } } and the configured headers', async () => {
    const reviews = await serve(startSubgraph(reviewsSdl));
    await dir.write('accounts.graphql', accountsSdl);
    const file = await dir.write(
      'router.compose.yaml',
      `version: 1
subgraphs:
  - name: accounts
    routing_url: http://127.0.0.1:4001/graphql
    schema: {file: accounts.graphql}
  - name: reviews
    routing_url: ${reviews.origin}/graphql
    introspection:
      url: ${reviews.origin}/internal/graphql
      headers: {Authorization: Bearer s3cret}
`,
    );
    const graph = await composeGraph(file);
    expect(graph.subgraphs.map((s) => [s.name, s.url])).toEqual([
      ['accounts', 'http://127.0.0.1:4001/graphql'],
      ['reviews', `${reviews.origin}/graphql`],
    ]);
    expect(graph.supergraphSdl).toContain(`@join__graph(name: "reviews", url: "${reviews.origin}/graphql")`);
    expect(graph.supergraphSdl).toContain('type Review');
    expect(reviews.requests).toHaveLength(1);
    const [request] = reviews.requests;
    expect(request.method).toBe('POST');
    expect(request.url).toBe('/internal/graphql');
    expect(request.headers.authorization).toBe('Bearer s3cret');
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.body)).toEqual({ query: '{ _service { sdl } }' });
  });

  it('introspects the routing URL when the subgraph names no schema source', async () => {
    const accounts = await serve(startSubgraph(accountsSdl));
    const file = await dir.write('router.compose.yaml', `version: 1\nsubgraphs:\n  - name: accounts\n    routing_url: ${accounts.origin}/graphql\n`);
    const graph = await composeGraph(file);
    expect(graph.supergraphSdl).toContain('me: User');
    expect(accounts.requests[0].url).toBe('/graphql');
  });

  it('fails naming the subgraph and the URL when nothing listens there', async () => {
    const gone = await startSubgraph(accountsSdl);
    await gone.close();
    const file = await dir.write('router.compose.yaml', `version: 1\nsubgraphs:\n  - name: accounts\n    routing_url: ${gone.origin}/graphql\n    introspection: {}\n`);
    const error = (await composeGraph(file).catch((e: unknown) => e)) as RouterError;
    expect(error).toBeInstanceOf(RouterError);
    expect(error.code).toBe('COMPOSITION_FAILED');
    expect(error.message.split('\n')[1]).toMatch(new RegExp(`^subgraph "accounts": could not reach ${gone.origin}/graphql: .*ECONNREFUSED`));
  });

  it('sends user:password written in an introspection URL as HTTP Basic authorization, and never shows them', async () => {
    const accounts = await serve(startSubgraph(accountsSdl));
    const broken = await serve(startStaticServer(200, 'application/json', JSON.stringify({ data: { _service: { sdl: 'type Query {' } } })));
    const withCredentials = (origin: string) => origin.replace('http://', 'http://ci:t0p%40secret@');
    const yaml = (url: string) => `version: 1\nsubgraphs:\n  - name: accounts\n    routing_url: http://127.0.0.1:4001/graphql\n    introspection: {url: "${url}"}\n`;
    await composeGraph(await dir.write('ok.yaml', yaml(`${withCredentials(accounts.origin)}/graphql`)));
    expect(accounts.requests[0].headers.authorization).toBe(`Basic ${Buffer.from('ci:t0p@secret').toString('base64')}`);

    const error = (await composeGraph(await dir.write('broken.yaml', yaml(`${withCredentials(broken.origin)}/graphql`))).catch((e: unknown) => e)) as RouterError;
    expect(error.message).toContain(`subgraph "accounts": ${broken.origin}/graphql:1:13: Syntax Error`);
    expect(error.message).not.toContain('t0p');
  });
});

describe('introspectSubgraph', () => {
  it('returns the SDL a subgraph serves', async () => {
    const accounts = await serve(startSubgraph(accountsSdl));
    expect(await introspectSubgraph(`${accounts.origin}/graphql`)).toBe(accountsSdl);
  });

  it('explains a server that is not a federation subgraph', async () => {
    const plain = await serve(startStaticServer(200, 'application/json', JSON.stringify({ errors: [{ message: 'Cannot query field "_service" on type "Query".' }] })));
    await expect(introspectSubgraph(plain.origin)).rejects.toThrow(
      `${plain.origin} answered { _service { sdl } } with errors: Cannot query field "_service" on type "Query". (is it a federation subgraph?)`,
    );
  });

  it('reports an HTTP error status and a non-JSON answer', async () => {
    const broken = await serve(startStaticServer(502, 'text/html', '<h1>Bad gateway</h1>'));
    await expect(introspectSubgraph(broken.origin)).rejects.toThrow(`${broken.origin} did not answer with JSON (HTTP 502)`);
    const empty = await serve(startStaticServer(500, 'application/json', '{}'));
    await expect(introspectSubgraph(empty.origin)).rejects.toThrow(`${empty.origin} answered HTTP 500`);
  });

  it('gives up after the timeout', async () => {
    const silent = await serve(startServer(() => undefined));
    await expect(introspectSubgraph(silent.origin, { timeoutMs: 200 })).rejects.toThrow(`could not reach ${silent.origin}: timed out`);
  });

  it('keeps an Authorization header given in the options over credentials in the URL', async () => {
    const accounts = await serve(startSubgraph(accountsSdl));
    await introspectSubgraph(`${accounts.origin.replace('http://', 'http://user:pw@')}/graphql`, { headers: { Authorization: 'Bearer t' } });
    expect(accounts.requests[0].headers.authorization).toBe('Bearer t');
  });

  it('refuses an answer over its size cap, naming the URL', async () => {
    const endless = await serve(
      startServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (!response.destroyed && response.write(chunk));
          if (!response.destroyed) response.once('drain', pump);
        };
        pump();
      }),
    );
    await expect(introspectSubgraph(endless.origin, { maxBytes: 1024 * 1024 })).rejects.toThrow(`could not reach ${endless.origin}: the body is over the 1 MiB limit`);
    const declared = await serve(
      startServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(65 * 1024 * 1024) }).write('{');
      }),
    );
    await expect(introspectSubgraph(declared.origin)).rejects.toThrow(`could not reach ${declared.origin}: the body is ${65 * 1024 * 1024} bytes, over the 64 MiB limit`);
  });

  it('gives up when the answer stalls mid-body', async () => {
    const stalled = await serve(startServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).write('{"data":')));
    await expect(introspectSubgraph(stalled.origin, { timeoutMs: 200 })).rejects.toThrow(`could not reach ${stalled.origin}: timed out after 0.2s while reading the body`);
  });
});
