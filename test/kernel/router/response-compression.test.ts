/**
 * gzip for `/graphql` answers over the listener (`traffic_shaping.router`):
 * answers of at least `response_compression_min_size` (4 KiB) go out
 * compressed to clients whose `Accept-Encoding` takes gzip, and say
 * `Vary: Accept-Encoding` whoever asks; smaller ones are untouched. Both
 * writers (the JSON POST lane and the general handler: GETs, batches, errors)
 * and the switches are checked over real sockets.
 */
import { request as httpRequest } from 'node:http';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent (compressed or not). */
  bytes: Buffer;
}

function send(router: TestRouter, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...options.headers };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const req = httpRequest(`${router.url}${options.path ?? '/graphql'}`, { method: options.method ?? 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The JSON an answer carries, gunzipped when it says gzip. */
function json(raw: Raw): unknown {
  return JSON.parse((raw.headers['content-encoding'] === 'gzip' ? gunzipSync(raw.bytes) : raw.bytes).toString());
}

const JSON_POST = { 'content-type': 'application/json' };
/** An answer of about 6 KB and one of about 100 bytes. */
const LARGE = JSON.stringify({ query: '{ echo(text: "abcdef", times: 1000) }' });
const SMALL = JSON.stringify({ query: '{ echo(text: "abc") }' });
const largeData = { data: { echo: 'abcdef'.repeat(1000) } };

let library: TestSubgraph;
const routers: TestRouter[] = [];
async function router(config: Record<string, unknown> = {}): Promise<TestRouter> {
  const started = await startTestRouter({ subgraphs: [library], listen: true, config });
  routers.push(started);
  return started;
}

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
});
afterAll(async () => {
  await Promise.all(routers.map((r) => r.close()));
  await library?.close();
});

describe('with the defaults (gzip from 4 KiB)', () => {
  let defaults: TestRouter;
  beforeAll(async () => {
    defaults = await router();
  });

  it('compresses a large answer for a client that accepts gzip, with its compressed length and Vary', async () => {
    const raw = await send(defaults, { headers: { ...JSON_POST, 'accept-encoding': 'gzip, deflate, br' }, body: LARGE });
    expect(raw.status).toBe(200);
    expect(raw.headers).toMatchObject({ 'content-encoding': 'gzip', vary: 'Accept-Encoding', 'content-length': String(raw.bytes.length) });
    expect(raw.bytes.length).toBeLessThan(1000);
    expect(json(raw)).toEqual(largeData);
  });

  it('sends it plain, with Vary, to a client that does not accept gzip', async () => {
    for (const acceptEncoding of [undefined, 'identity', 'br', 'gzip;q=0, br', 'GZIP; q=0.000', '*;q=0', 'br, *;q=0.5, gzip;q=0']) {
      const headers = acceptEncoding === undefined ? JSON_POST : { ...JSON_POST, 'accept-encoding': acceptEncoding };
      const raw = await send(defaults, { headers, body: LARGE });
      expect(raw.headers['content-encoding'], acceptEncoding).toBeUndefined();
      expect(raw.headers.vary, acceptEncoding).toBe('Accept-Encoding');
      expect(JSON.parse(raw.bytes.toString()), acceptEncoding).toEqual(largeData);
    }
  });

  it('reads every spelling of accepting gzip', async () => {
    for (const acceptEncoding of ['GZip', 'x-gzip', '*', 'br;q=1, gzip;q=0.1', 'deflate, *;q=0.2', 'gzip;q=bogus']) {
      const raw = await send(defaults, { headers: { ...JSON_POST, 'accept-encoding': acceptEncoding }, body: LARGE });
      expect(raw.headers['content-encoding'], acceptEncoding).toBe('gzip');
      expect(json(raw), acceptEncoding).toEqual(largeData);
    }
  });

  it('leaves a small answer alone, without Vary', async () => {
    const raw = await send(defaults, { headers: { ...JSON_POST, 'accept-encoding': 'gzip' }, body: SMALL });
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.headers.vary).toBeUndefined();
    expect(JSON.parse(raw.bytes.toString())).toEqual({ data: { echo: 'abc' } });
  });

  it('compresses answers of the general handler too: a GET, a compressed request, a large error', async () => {
    const get = await send(defaults, {
      method: 'GET',
      path: `/graphql?query=${encodeURIComponent('{ echo(text: "abcdef", times: 1000) }')}`,
      headers: { 'accept-encoding': 'gzip' },
    });
    expect(get.headers['content-encoding']).toBe('gzip');
    expect(json(get)).toEqual(largeData);

    const gzipped = await send(defaults, { headers: { ...JSON_POST, 'content-encoding': 'gzip', 'accept-encoding': 'gzip' }, body: gzipSync(LARGE) });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(json(gzipped)).toEqual(largeData);

    // A validation error naming a 5,000-character field: a large answer of the general handler's own.
    const invalid = await send(defaults, { headers: { ...JSON_POST, 'accept-encoding': 'gzip' }, body: JSON.stringify({ query: `{ ${'x'.repeat(5000)} }` }) });
    expect(invalid.headers['content-encoding']).toBe('gzip');
    expect(json(invalid)).toMatchObject({ errors: [{ message: expect.stringContaining('x'.repeat(5000)) }] });
  });

  it('adds Accept-Encoding to the Vary a CORS answer already has', async () => {
    const cors = await router({ cors: { enabled: true, allow_origins: ['https://app.example'] } });
    const raw = await send(cors, { headers: { ...JSON_POST, origin: 'https://app.example', 'accept-encoding': 'gzip' }, body: LARGE });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(String(raw.headers.vary).split(/,\s*/)).toEqual(expect.arrayContaining(['Origin', 'Accept-Encoding']));
    expect(json(raw)).toEqual(largeData);
  });

  it('gives requests sharing one answer (single flight) the same compressed bytes, each whole', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(defaults, { headers: { ...JSON_POST, 'accept-encoding': 'gzip' }, body: LARGE })));
    for (const raw of answers) {
      expect(raw.headers['content-encoding']).toBe('gzip');
      expect(json(raw)).toEqual(largeData);
    }
  });

  it('does not compress streamed answers', async () => {
    const raw = await send(defaults, { headers: { ...JSON_POST, accept: 'text/event-stream', 'accept-encoding': 'gzip' }, body: LARGE });
    expect(raw.headers['content-type']).toBe('text/event-stream');
    expect(raw.headers['content-encoding']).not.toBe('gzip');
    expect(raw.bytes.toString()).toContain('abcdef'.repeat(1000));
  });
});

describe('with subscriptions off (streaming formats answered whole by the general handler)', () => {
  it('sends SSE and multipart answers uncompressed, SSE keeping its content-encoding: none', async () => {
    const noStreams = await router({ subscriptions: { enabled: false } });
    const sse = await send(noStreams, { headers: { ...JSON_POST, accept: 'text/event-stream', 'accept-encoding': 'gzip' }, body: LARGE });
    expect(sse.headers).toMatchObject({ 'content-type': 'text/event-stream', 'content-encoding': 'none' });
    expect(sse.bytes.toString()).toContain('abcdef'.repeat(1000));
    const multipart = await send(noStreams, { headers: { ...JSON_POST, accept: 'multipart/mixed', 'accept-encoding': 'gzip' }, body: LARGE });
    expect(multipart.headers['content-type']).toMatch(/^multipart\/mixed/);
    expect(multipart.headers['content-encoding']).toBeUndefined();
    expect(multipart.bytes.toString()).toContain('abcdef'.repeat(1000));
  });
});

describe('traffic_shaping.router', () => {
  it('response_compression_min_size: 0 compresses every answer', async () => {
    const everything = await router({ traffic_shaping: { router: { response_compression_min_size: '0B' } } });
    const raw = await send(everything, { headers: { ...JSON_POST, 'accept-encoding': 'gzip' }, body: SMALL });
    expect(raw.headers['content-encoding']).toBe('gzip');
    expect(json(raw)).toEqual({ data: { echo: 'abc' } });
  });

  it('response_compression_enabled: false sends every answer plain, without Vary', async () => {
    const off = await router({ traffic_shaping: { router: { response_compression_enabled: false } } });
    const raw = await send(off, { headers: { ...JSON_POST, 'accept-encoding': 'gzip' }, body: LARGE });
    expect(raw.headers['content-encoding']).toBeUndefined();
    expect(raw.headers.vary).toBeUndefined();
    expect(JSON.parse(raw.bytes.toString())).toEqual(largeData);
  });

  it('decompression_enabled: false refuses compressed request bodies with 415, streamed ones too', async () => {
    const plainOnly = await router({ traffic_shaping: { router: { decompression_enabled: false } } });
    const refused = /^Content-Encoding "gzip" is not supported: this router does not decode request bodies \(traffic_shaping\.router\.decompression_enabled\)/;
    const raw = await send(plainOnly, { headers: { ...JSON_POST, 'content-encoding': 'gzip' }, body: gzipSync(SMALL) });
    expect(raw.status).toBe(415);
    expect(json(raw)).toMatchObject({ errors: [{ message: expect.stringMatching(refused), extensions: { code: 'BAD_REQUEST' } }] });
    const streamed = await send(plainOnly, { headers: { ...JSON_POST, 'content-encoding': 'gzip', accept: 'text/event-stream' }, body: gzipSync(SMALL) });
    expect(streamed.status).toBe(415);
    expect(JSON.parse(streamed.bytes.toString())).toMatchObject({ errors: [{ message: expect.stringMatching(refused) }] });
    expect((await send(plainOnly, { headers: JSON_POST, body: SMALL })).status).toBe(200);
  });

  it('refuses a size that is not one at startup', async () => {
    await expect(startTestRouter({ subgraphs: [library], config: { traffic_shaping: { router: { response_compression_min_size: 'big' } } } })).rejects.toThrow(
      /traffic_shaping\.router\.response_compression_min_size/,
    );
  });
});
