import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RouterError } from '../../src/kernel/errors.js';
import { readFromUrl, readGraphSource } from '../../src/kernel/graph/execution-config.js';
import { ACCOUNTS_URL, REVIEWS_URL, accountsAndReviewsSupergraph, createTempDir, type TempDir } from './fixtures.js';
import { startServer, startStaticServer, type TestServer } from './http-server.js';

const supergraph = accountsAndReviewsSupergraph();
const executionConfig = JSON.stringify({
  version: 1,
  supergraph,
  subgraphs: [
    { kind: 'graphql', name: 'accounts', url: 'http://accounts:4001/graphql' },
    { kind: 'graphql', name: 'reviews', url: 'http://reviews:4002/graphql' },
  ],
  compose: { composedAt: new Date().toISOString() },
});

let dir: TempDir;
const servers: TestServer[] = [];
beforeEach(async () => {
  dir = await createTempDir();
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  await dir.remove();
});

async function serve(status: number, contentType: string, body: string): Promise<TestServer> {
  const server = await startStaticServer(status, contentType, body);
  servers.push(server);
  return server;
}

async function failure(pathOrUrl: string): Promise<RouterError> {
  const error = await readGraphSource(pathOrUrl).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(RouterError);
  expect((error as RouterError).code).toBe('SUPERGRAPH_INVALID');
  return error as RouterError;
}

describe('readGraphSource', () => {
  it('reads a supergraph SDL file', async () => {
    const file = await dir.write('supergraph.graphqls', supergraph);
    expect(await readGraphSource(file)).toEqual({
      supergraphSdl: supergraph,
      origin: file,
      subgraphs: [
        { kind: 'graphql', name: 'accounts', url: ACCOUNTS_URL },
        { kind: 'graphql', name: 'reviews', url: REVIEWS_URL },
      ],
    });
  });

  it('reads an execution config file given as a relative path or a file: URL', async () => {
    const file = await dir.write('router.execution.config.json', executionConfig);
    const fromRelative = await readGraphSource(relative(process.cwd(), file));
    const fromUrl = await readGraphSource(pathToFileURL(file).href);
    for (const source of [fromRelative, fromUrl]) {
      expect(source.origin).toBe(file);
      expect(source.subgraphs.map((s) => s.url)).toEqual(['http://accounts:4001/graphql', 'http://reviews:4002/graphql']);
    }
  });

  it('reads an execution config and a supergraph SDL from an http URL', async () => {
    const json = await serve(200, 'application/json', executionConfig);
    const sdl = await serve(200, 'application/graphql', supergraph);
    const fromJson = await readGraphSource(`${json.origin}/graph`);
    expect(fromJson.origin).toBe(`${json.origin}/graph`);
    expect(fromJson.subgraphs.map((s) => s.name)).toEqual(['accounts', 'reviews']);
    expect((await readGraphSource(`${sdl.origin}/supergraph.graphql`)).subgraphs.map((s) => s.url)).toEqual([ACCOUNTS_URL, REVIEWS_URL]);
    expect(json.requests[0].method).toBe('GET');
  });

  it('refuses a missing file, naming its absolute path', async () => {
    const missing = join(dir.path, 'nope.graphql');
    expect((await failure(missing)).message).toBe(`supergraph file not found: ${missing}`);
  });

  it('refuses a folder', async () => {
    expect((await failure(dir.path)).message).toBe(`${dir.path} is a directory, not an execution config or supergraph file`);
  });

  it('refuses a file that is neither JSON nor SDL', async () => {
    const file = await dir.write('graph.txt', '## not a graph');
    expect((await failure(file)).message).toContain(`${file}: neither an execution config (JSON) nor a supergraph SDL: syntax error at line 1, column 1`);
  });

  it('refuses an execution config file whose subgraphs do not match its supergraph', async () => {
    const config = JSON.parse(executionConfig) as { subgraphs: Array<{ name: string }> };
    config.subgraphs[1].name = 'inventory';
    const file = await dir.write('router.execution.config.json', JSON.stringify(config));
    expect((await failure(file)).message).toBe(
      `${file}: subgraphs do not match the supergraph: unknown subgraph "inventory" (not in the supergraph's join__Graph); missing subgraph "reviews" (in the supergraph's join__Graph, not in subgraphs)`,
    );
  });

  it('refuses an http answer with an error status', async () => {
    const server = await serve(404, 'text/plain', 'not here');
    expect((await failure(`${server.origin}/graph.json`)).message).toBe(`could not fetch ${server.origin}/graph.json: HTTP 404 Not Found`);
  });

  it('refuses an http URL nothing listens on', async () => {
    const server = await startStaticServer(200, 'text/plain', '');
    await server.close();
    expect((await failure(`${server.origin}/graph`)).message).toMatch(new RegExp(`^could not fetch ${server.origin}/graph: .*ECONNREFUSED`));
  });

  it('sends user:password written in the URL as HTTP Basic authorization, and never shows them', async () => {
    const server = await serve(200, 'application/graphql', supergraph);
    const withCredentials = server.origin.replace('http://', 'http://deploy:pa%24s@');
    const source = await readGraphSource(`${withCredentials}/supergraph.graphql`);
    expect(server.requests[0].headers.authorization).toBe(`Basic ${Buffer.from('deploy:pa$s').toString('base64')}`);
    expect(server.requests[0].url).toBe('/supergraph.graphql');
    expect(source.origin).toBe(`${server.origin}/supergraph.graphql`);

    const missing = await serve(404, 'text/plain', 'not here');
    const refused = await failure(`${missing.origin.replace('http://', 'http://deploy:pa%24s@')}/graph.json`);
    expect(refused.message).toBe(`could not fetch ${missing.origin}/graph.json: HTTP 404 Not Found`);
  });

  it('refuses a body declared larger than 256 MiB before reading it, naming the URL', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(300 * 1024 * 1024) });
      response.write('# only this arrives');
    });
    servers.push(server);
    expect((await failure(`${server.origin}/huge.graphql`)).message).toBe(
      `could not fetch ${server.origin}/huge.graphql: the body is ${300 * 1024 * 1024} bytes, over the 256 MiB limit`,
    );
  });

  it('stops reading a body that streams past the cap, naming the URL', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      const pump = () => {
        while (!response.destroyed && response.write(chunk));
        if (!response.destroyed) response.once('drain', pump);
      };
      pump();
    });
    servers.push(server);
    const error = await readFromUrl(`${server.origin.replace('http://', 'http://u:hidden@')}/endless`, { maxBytes: 1024 * 1024 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).message).toBe(`could not fetch ${server.origin}/endless: the body is over the 1 MiB limit`);
  });

  it('names the URL when the body stalls past the deadline', async () => {
    const server = await startServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.write('#');
    });
    servers.push(server);
    const error = await readFromUrl(`${server.origin}/stalled`, { timeoutMs: 300 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).message).toBe(`could not fetch ${server.origin}/stalled: timed out after 0.3s while reading the body`);
  });

  it('refuses a routing URL that is not http(s) without showing credentials written in it', async () => {
    const file = await dir.write('supergraph.graphql', supergraph.replace(ACCOUNTS_URL, 'ftp://user:s3cretpw@files.example/'));
    const { message } = await failure(file);
    expect(message).toBe(`${file}: subgraph "accounts": routing URL "ftp://files.example/" is not an http(s) URL`);
  });
});
