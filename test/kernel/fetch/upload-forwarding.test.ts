/**
 * File uploads (the GraphQL multipart request spec) forwarded to a subgraph:
 * the router sends a subgraph call whose variables carry files as a
 * multipart request (`operations`, `map`, the file parts), and every other
 * call as JSON. The subgraph here is a real HTTP server on 127.0.0.1 that
 * parses what it receives (`Response.formData()`), puts each file where its
 * map says and runs the operation, with an `Upload` scalar whose resolvers
 * read the file's bytes.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { execute, GraphQLScalarType, parse } from 'graphql';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../../plugins/response-cache/index.js';
import { startTestRouter, type TestRouter } from '../../../src/testing/index.js';

const TYPE_DEFS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  scalar Upload
  type FileInfo { name: String! type: String! size: Int! base64: String! }
  input DocInput { title: String! file: Upload! tags: [String!] }
  type Query { ping: String! echo(file: Upload!): FileInfo! }
  type Mutation {
    single(file: Upload!): FileInfo!
    many(files: [Upload!]!): [FileInfo!]!
    nested(input: DocInput!): String!
    withOthers(note: String!, file: Upload!, count: Int!, again: Upload): String!
  }
`;

/** One request the subgraph received. */
interface Received {
  readonly contentType: string;
  readonly headers: Record<string, string | string[] | undefined>;
  /** The raw body, as sent. */
  readonly raw: Buffer;
  /** JSON calls: the body; multipart calls: the `operations` part, before files were put in. */
  readonly operations: { query: string; variables: Record<string, unknown> };
  /** Multipart calls only. */
  readonly map?: Record<string, string[]>;
  /** Multipart calls only: every file part. */
  readonly files?: Array<{ field: string; name: string; type: string; base64: string }>;
}

async function info(file: File): Promise<{ name: string; type: string; size: number; base64: string }> {
  return { name: file.name, type: file.type, size: file.size, base64: Buffer.from(await file.arrayBuffer()).toString('base64') };
}

const schema = buildSubgraphSchema({
  typeDefs: parse(TYPE_DEFS),
  resolvers: {
    Upload: new GraphQLScalarType({
      name: 'Upload',
      parseValue: (value) => {
        if (!(value instanceof File)) throw new TypeError('Upload expects a file part');
        return value;
      },
    }),
    Query: {
      ping: () => 'pong',
      echo: async (_: unknown, args: { file: File }) => {
        await new Promise((resolve) => setTimeout(resolve, 100));
        return info(args.file);
      },
    },
    Mutation: {
      single: (_: unknown, args: { file: File }) => info(args.file),
      many: (_: unknown, args: { files: File[] }) => Promise.all(args.files.map(info)),
      nested: async (_: unknown, args: { input: { title: string; file: File; tags?: string[] } }) =>
        JSON.stringify({ title: args.input.title, tags: args.input.tags, file: await info(args.input.file) }),
      withOthers: async (_: unknown, args: { note: string; file: File; count: number; again?: File }) =>
        JSON.stringify({ note: args.note, count: args.count, file: await info(args.file), same: args.again === args.file }),
    },
  },
});

let received: Received[] = [];
/** Answers 503 to this many calls before answering them (to see a multipart call retried). */
let failFirst = 0;

async function answer(raw: Buffer, contentType: string, headers: Received['headers']): Promise<unknown> {
  if (!contentType.startsWith('multipart/form-data')) {
    const operations = JSON.parse(raw.toString('utf8'));
    received.push({ contentType, headers, raw, operations });
    return execute({ schema, document: parse(operations.query), variableValues: operations.variables });
  }
  const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType } }).formData();
  const operations = JSON.parse(form.get('operations') as string);
  const map = JSON.parse(form.get('map') as string) as Record<string, string[]>;
  const files: NonNullable<Received['files']> = [];
  for (const [field, value] of form) {
    if (typeof value !== 'string') files.push({ field, ...(await info(value)) });
  }
  received.push({ contentType, headers, raw, operations: structuredClone(operations), map, files });
  for (const [field, paths] of Object.entries(map)) {
    for (const path of paths) {
      const keys = path.split('.');
      let target = operations;
      for (const key of keys.slice(0, -1)) target = target[key];
      target[keys.at(-1)!] = form.get(field);
    }
  }
  return execute({ schema, document: parse(operations.query), variableValues: operations.variables });
}

let subgraph: Server;
let subgraphUrl: string;
let router: TestRouter;

beforeAll(async () => {
  subgraph = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (failFirst > 0) {
        failFirst--;
        res.writeHead(503).end();
        return;
      }
      answer(Buffer.concat(chunks), req.headers['content-type'] ?? '', req.headers).then(
        // Cacheable: a response cache in front must still never serve one file's answer for another.
        (result) => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(result)),
        (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(error.stack),
      );
    });
  });
  await new Promise<void>((resolve) => subgraph.listen(0, '127.0.0.1', resolve));
  subgraphUrl = `http://127.0.0.1:${(subgraph.address() as AddressInfo).port}/graphql`;
  router = await startTestRouter({
    subgraphs: [{ name: 'files', url: subgraphUrl, typeDefs: TYPE_DEFS }],
    listen: true,
    config: {
      headers: {
        all: {
          request: [
            { op: 'set', name: 'X-Router', value: 'switchyard' },
            { op: 'set', name: 'Content-Type', value: 'text/plain' },
          ],
        },
      },
    },
  });
});

afterAll(async () => {
  await router?.close();
  await new Promise((resolve) => subgraph?.close(resolve));
});

beforeEach(() => {
  received = [];
  failFirst = 0;
});

/** Bytes no UTF-8 decoder keeps: a NUL, lone continuation and lead bytes, CR LF and a boundary-like `--`. */
const BINARY = new Uint8Array([0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28, 0x0d, 0x0a, 0x2d, 0x2d, 0x41, 0x0d, 0x0a, 0x0d, 0x0a, 0xe2, 0x82]);

/** A client's answer: `data` read as the test's query shapes it. */
interface Answer {
  data?: Record<string, string> | null;
  errors?: unknown[];
}

/** A GraphQL multipart request (`operations`, `map`, then the files as `0`, `1`, ...) from the router's listener. */
async function upload(query: string, variables: Record<string, unknown>, map: Record<string, string[]>, files: File[]): Promise<{ status: number; body: Answer }> {
  const form = new FormData();
  form.append('operations', JSON.stringify({ query, variables }));
  form.append('map', JSON.stringify(map));
  files.forEach((file, i) => form.append(String(i), file));
  const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'graphql-preflight': '1', accept: 'application/json' }, body: form });
  return { status: response.status, body: (await response.json()) as Answer };
}

describe('uploads forwarded to a GraphQL-over-HTTP subgraph', () => {
  it('sends one upload with its exact bytes, file name and content type', async () => {
    const { status, body } = await upload('mutation ($file: Upload!) { single(file: $file) { name type size base64 } }', { file: null }, { 0: ['variables.file'] }, [
      new File([BINARY], 'photo.bin', { type: 'image/x-test' }),
    ]);
    expect(status).toBe(200);
    expect(body).toEqual({ data: { single: { name: 'photo.bin', type: 'image/x-test', size: BINARY.length, base64: Buffer.from(BINARY).toString('base64') } } });
    expect(received).toHaveLength(1);
    const call = received[0]!;
    expect(call.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(call.operations.variables).toEqual({ file: null });
    expect(call.map).toEqual({ 0: ['variables.file'] });
    expect(call.files).toEqual([{ field: '0', name: 'photo.bin', type: 'image/x-test', size: BINARY.length, base64: Buffer.from(BINARY).toString('base64') }]);
    // The header rules still apply; the multipart body keeps its own content type.
    expect(call.headers['x-router']).toBe('switchyard');
    // Apollo Server's CSRF prevention takes a multipart body with it.
    expect(call.headers['apollo-require-preflight']).toBe('true');
  });

  it('sends a list of two files', async () => {
    const { body } = await upload(
      'mutation ($files: [Upload!]!) { many(files: $files) { name type base64 } }',
      { files: [null, null] },
      { 0: ['variables.files.0'], 1: ['variables.files.1'] },
      [new File(['first'], 'a.txt', { type: 'text/plain' }), new File([BINARY], 'b.bin', { type: 'application/octet-stream' })],
    );
    expect(body).toEqual({
      data: {
        many: [
          { name: 'a.txt', type: 'text/plain', base64: Buffer.from('first').toString('base64') },
          { name: 'b.bin', type: 'application/octet-stream', base64: Buffer.from(BINARY).toString('base64') },
        ],
      },
    });
    expect(received[0]!.map).toEqual({ 0: ['variables.files.0'], 1: ['variables.files.1'] });
    expect(received[0]!.operations.variables).toEqual({ files: [null, null] });
    expect(received[0]!.files!.map((file) => file.name)).toEqual(['a.txt', 'b.bin']);
  });

  it('sends an upload in a nested input object', async () => {
    const { body } = await upload(
      'mutation ($input: DocInput!) { nested(input: $input) }',
      { input: { title: 'Report', file: null, tags: ['q1', 'draft'] } },
      { 0: ['variables.input.file'] },
      [new File([BINARY], 'report.pdf', { type: 'application/pdf' })],
    );
    expect(JSON.parse(body.data!.nested!)).toEqual({
      title: 'Report',
      tags: ['q1', 'draft'],
      file: { name: 'report.pdf', type: 'application/pdf', size: BINARY.length, base64: Buffer.from(BINARY).toString('base64') },
    });
    expect(received[0]!.map).toEqual({ 0: ['variables.input.file'] });
    expect(received[0]!.operations.variables).toEqual({ input: { title: 'Report', file: null, tags: ['q1', 'draft'] } });
  });

  it('sends an upload with other variables, and one file mapped twice as one part', async () => {
    const { body } = await upload(
      'mutation ($note: String!, $file: Upload!, $count: Int!, $again: Upload) { withOthers(note: $note, file: $file, count: $count, again: $again) }',
      { note: 'hello "world"', file: null, count: 3, again: null },
      { 0: ['variables.file', 'variables.again'] },
      [new File(['x'], 'x.txt', { type: 'text/plain' })],
    );
    expect(JSON.parse(body.data!.withOthers!)).toEqual({ note: 'hello "world"', count: 3, file: expect.objectContaining({ name: 'x.txt' }), same: true });
    expect(received[0]!.operations.variables).toEqual({ note: 'hello "world"', file: null, count: 3, again: null });
    expect(received[0]!.map).toEqual({ 0: ['variables.file', 'variables.again'] });
    expect(received[0]!.files).toHaveLength(1);
  });

  it('still sends JSON for requests without files, multipart or not', async () => {
    expect((await router.query('{ ping }')).body).toEqual({ data: { ping: 'pong' } });
    expect(received[0]!.contentType).toBe('application/json');
    const { body } = await upload('{ ping }', {}, {}, []);
    expect(body).toEqual({ data: { ping: 'pong' } });
    expect(received[1]!.contentType).toBe('application/json');
  });

  it('strips line breaks from a file name, so no part header can be injected, and keeps its quotes (sent as %22, as browsers send them)', async () => {
    // `%0D%0A` and `%22` in a part's file name are decoded to CR LF and `"` by the router's form parser.
    const raw = [
      '--upload-boundary',
      'Content-Disposition: form-data; name="operations"',
      '',
      JSON.stringify({ query: 'mutation ($file: Upload!) { single(file: $file) { name type } }', variables: { file: null } }),
      '--upload-boundary',
      'Content-Disposition: form-data; name="map"',
      '',
      '{"0":["variables.file"]}',
      '--upload-boundary',
      'Content-Disposition: form-data; name="0"; filename="evil%0D%0AX-Injected: 1%0D%0AContent-Type: text/html%22.txt"',
      'Content-Type: text/plain',
      '',
      'payload',
      '--upload-boundary--',
      '',
    ].join('\r\n');
    const response = await fetch(`${router.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=upload-boundary', 'graphql-preflight': '1', accept: 'application/json' },
      body: raw,
    });
    expect(await response.json()).toEqual({ data: { single: { name: 'evilX-Injected: 1Content-Type: text/html".txt', type: 'text/plain' } } });
    const sent = received[0]!.raw.toString('latin1');
    expect(sent).not.toMatch(/\r\nX-Injected/);
    expect(sent).not.toMatch(/\r\nContent-Type: text\/html/);
    expect(sent).toContain('filename="evilX-Injected: 1Content-Type: text/html%22.txt"');
    expect(received[0]!.files).toEqual([expect.objectContaining({ field: '0', name: 'evilX-Injected: 1Content-Type: text/html".txt', type: 'text/plain' })]);
  });

  it('passes a file name with quotes and characters past ASCII on as the client named the file', async () => {
    const name = 'naïve 😀 "x".txt';
    const { body } = await upload('mutation ($file: Upload!) { single(file: $file) { name } }', { file: null }, { 0: ['variables.file'] }, [new File(['x'], name)]);
    expect(body).toEqual({ data: { single: { name } } });
  });

  it('never shares a query carrying files with another in flight', async () => {
    const query = 'query ($file: Upload!) { echo(file: $file) { base64 } }';
    const [a, b] = await Promise.all([
      upload(query, { file: null }, { 0: ['variables.file'] }, [new File(['one'], 'f.txt')]),
      upload(query, { file: null }, { 0: ['variables.file'] }, [new File(['two'], 'f.txt')]),
    ]);
    expect(a.body).toEqual({ data: { echo: { base64: Buffer.from('one').toString('base64') } } });
    expect(b.body).toEqual({ data: { echo: { base64: Buffer.from('two').toString('base64') } } });
    expect(received).toHaveLength(2);
  });

  it('sends the whole multipart body again when a query is retried', async () => {
    failFirst = 1;
    const { body } = await upload('query ($file: Upload!) { echo(file: $file) { base64 } }', { file: null }, { 0: ['variables.file'] }, [new File([BINARY], 'r.bin')]);
    expect(body).toEqual({ data: { echo: { base64: Buffer.from(BINARY).toString('base64') } } });
    expect(received).toHaveLength(1);
  });
});

describe('uploads behind the response cache', () => {
  it('never answers a query carrying files from the cache', async () => {
    const cached = await startTestRouter({
      subgraphs: [{ name: 'files', url: subgraphUrl, typeDefs: TYPE_DEFS }],
      listen: true,
      plugins: [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' } })],
    });
    try {
      const query = 'query ($file: Upload!) { echo(file: $file) { base64 } }';
      const send = async (text: string): Promise<Answer> => {
        const form = new FormData();
        form.append('operations', JSON.stringify({ query, variables: { file: null } }));
        form.append('map', JSON.stringify({ 0: ['variables.file'] }));
        form.append('0', new File([text], 'f.txt'));
        const response = await fetch(`${cached.url}/graphql`, { method: 'POST', headers: { 'graphql-preflight': '1', accept: 'application/json' }, body: form });
        return (await response.json()) as Answer;
      };
      expect(await send('one')).toEqual({ data: { echo: { base64: Buffer.from('one').toString('base64') } } });
      expect(await send('two')).toEqual({ data: { echo: { base64: Buffer.from('two').toString('base64') } } });
      expect(received).toHaveLength(2);
    } finally {
      await cached.close();
    }
  });
});

describe('multipart map keys', () => {
  it('refuses a map key naming a text field, as a missing file part', async () => {
    const form = new FormData();
    form.append('operations', JSON.stringify({ query: 'mutation ($file: Upload!) { single(file: $file) { name } }', variables: { file: null } }));
    form.append('map', JSON.stringify({ note: ['variables.file'] }));
    form.append('note', 'not a file');
    const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'graphql-preflight': '1', accept: 'application/json' }, body: form });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'Multipart form field "map" names file part "note", which the request does not have.', extensions: { code: 'BAD_REQUEST' } }],
    });
    expect(received).toHaveLength(0);
  });
});

describe('multipart part count', () => {
  it('refuses more parts than operations, map and 1000 files with 413, before parsing them', async () => {
    // `files` mapped files, then `unmapped` parts no map path names (parsed all the same).
    const send = async (files: number, unmapped = 0): Promise<{ status: number; body: Answer }> => {
      const form = new FormData();
      const map: Record<string, string[]> = {};
      for (let i = 0; i < files; i++) map[i] = [`variables.files.${i}`];
      form.append('operations', JSON.stringify({ query: 'mutation ($files: [Upload!]!) { many(files: $files) { name } }', variables: { files: Array(files).fill(null) } }));
      form.append('map', JSON.stringify(map));
      for (let i = 0; i < files + unmapped; i++) form.append(String(i), new File(['x'], 'x.txt'));
      const response = await fetch(`${router.url}/graphql`, { method: 'POST', headers: { 'graphql-preflight': '1', accept: 'application/json' }, body: form });
      return { status: response.status, body: (await response.json()) as Answer };
    };
    const tooMany = await send(1, 2000);
    expect(tooMany.status).toBe(413);
    expect(tooMany.body.errors).toEqual([{ message: 'A multipart request may have at most 1002 parts ("operations", "map" and the files).', extensions: { code: 'BAD_REQUEST' } }]);
    expect(received).toHaveLength(0);
    const allowed = await send(1000);
    expect(allowed.status).toBe(200);
    expect((allowed.body.data as unknown as { many: unknown[] }).many).toHaveLength(1000);
  });
});

describe('uploads for a subgraph served by a plugin transport', () => {
  it('answers an error for the field: files only go to GraphQL-over-HTTP subgraphs', async () => {
    const sentToPlugin: unknown[] = [];
    const viaPlugin = await startTestRouter({
      subgraphs: [{ name: 'files', url: subgraphUrl, typeDefs: TYPE_DEFS }],
      listen: true,
      plugins: [
        {
          name: 'test-transport',
          setup: () => ({
            transports: {
              graphql: () => async (request) => {
                sentToPlugin.push(request.variables);
                return { data: { ping: 'from plugin' } };
              },
            },
          }),
        },
      ],
    });
    try {
      expect((await viaPlugin.query('{ ping }')).body).toEqual({ data: { ping: 'from plugin' } });
      const form = new FormData();
      form.append('operations', JSON.stringify({ query: 'mutation ($input: DocInput!) { nested(input: $input) }', variables: { input: { title: 't', file: null } } }));
      form.append('map', JSON.stringify({ 0: ['variables.input.file'] }));
      form.append('0', new File(['x'], 'x.txt'));
      const response = await fetch(`${viaPlugin.url}/graphql`, { method: 'POST', headers: { 'graphql-preflight': '1', accept: 'application/json' }, body: form });
      const body = (await response.json()) as Answer;
      expect(body.data).toBeNull();
      expect(body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringContaining('files can only go to GraphQL-over-HTTP subgraphs'),
          extensions: expect.objectContaining({ code: 'SUBGRAPH_REQUEST_FAILED' }),
        }),
      ]);
      expect(sentToPlugin).toHaveLength(1);
    } finally {
      await viaPlugin.close();
    }
  });
});
