import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePersistedOperations } from '../../plugins/persisted-operations/index.js';
import { createLogger } from '../../src/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { tempDir } from '../operations/support/operations.js';
import { startProducts } from '../plugins/persisted-operations/fixtures.js';

const UNKNOWN = 'Unknown operation: not a registered persisted operation';
const FORGED = '{"level":"fatal","time":1,"msg":"forged"}';

let products: TestSubgraph;
let dir: Awaited<ReturnType<typeof tempDir>>;
let router: TestRouter;
/** Every chunk the logger wrote, as written. */
const writes: string[] = [];

beforeAll(async () => {
  [products, dir] = await Promise.all([startProducts(), tempDir()]);
  router = await startTestRouter({
    subgraphs: [products],
    listen: true,
    logger: createLogger({ level: 'info', destination: { write: (chunk: string) => void writes.push(chunk) } }),
    // log_unknown logs what clients choose: their client name, operation name and query text.
    plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, log_unknown: true })],
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([products?.close(), dir?.remove()]);
});

/** Every write is one JSON object on one line; returns them parsed. */
function logLines(): Array<Record<string, unknown>> {
  return writes.map((chunk) => {
    expect(chunk.endsWith('\n')).toBe(true);
    // U+2028 and U+2029 stay as they are: valid inside JSON strings, and no line break to NDJSON readers.
    expect(chunk.slice(0, -1)).not.toMatch(/[\n\r]/);
    return JSON.parse(chunk) as Record<string, unknown>;
  });
}

/** Sends a request over a raw socket, so header bytes reach the server exactly as written; resolves with the status line. */
function rawPost(headerValue: string, body: string): Promise<string> {
  const url = new URL(router.url!);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer.split('\r\n')[0] ?? ''));
    const head = [
      'POST /graphql HTTP/1.1',
      `host: ${url.host}`,
      'content-type: application/json',
      `content-length: ${Buffer.byteLength(body)}`,
      `graphql-client-name: ${headerValue}`,
      'connection: close',
    ].join('\r\n');
    // Not end(): the HTTP server drops a request whose client half-closes before the answer.
    socket.write(Buffer.concat([Buffer.from(`${head}\r\n\r\n`, 'latin1'), Buffer.from(body)]));
  });
}

/** Strings built to break a log line: newlines, JSON closers, control characters, Unicode line separators. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 60 }),
  fc.constantFrom(`\n${FORGED}\n`, `"}\n${FORGED}`, '\r\n', '\u2028\u2029', '\u0000\u001b[31m', '\\"}', '\ud800'),
  fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom('\n', '\r', '\u0000', '\u2028'), fc.constant(FORGED)).map((parts) => parts.join('')),
);

describe('client values in logs', () => {
  it('logs operation names and query texts as escaped JSON strings, one line per entry, that read back as sent', async () => {
    let logged = 0;
    await fc.assert(
      fc.asyncProperty(hostile, hostile, async (name, comment) => {
        writes.length = 0;
        const query = `# ${comment.replace(/[\r\n]/g, ' ')}\n{ topProducts { upc } }`;
        const response = await router.query({ query, operationName: name === '' ? undefined : name });
        expect(response.status).toBeLessThan(500);
        const lines = logLines();
        expect(lines.filter((line) => line.msg === 'forged')).toEqual([]);
        const unknown = lines.filter((line) => line.msg === UNKNOWN);
        // Logged before parsing, so also for a name the document does not define (then 400).
        if (unknown.length === 0) return;
        expect(unknown).toHaveLength(1);
        expect(unknown[0]!.query).toBe(query);
        expect(unknown[0]!.operation_name).toBe(name === '' ? undefined : name);
        logged++;
      }),
      { numRuns: 150 },
    );
    expect(logged).toBeGreaterThan(20);
  });

  it('logs graphql-client-name header values escaped, whatever bytes they carry; a line break in one ends the request', async () => {
    // Weighted so most runs are values a server accepts (and logs); the hostile constants come up about 30 times.
    const headerValue = fc.oneof(
      {
        weight: 4,
        arbitrary: fc.string({
          unit: fc.oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(0x09)).map((code) => String.fromCharCode(code)),
          minLength: 1,
          maxLength: 40,
        }),
      },
      { weight: 1, arbitrary: fc.constantFrom(`x\r\n${FORGED}`, `x\n${FORGED}`, `x\r${FORGED}`, 'x\u0000y', 'x\u001by', 'x\u007fy') },
    );
    let logged = 0;
    await fc.assert(
      fc.asyncProperty(headerValue, async (value) => {
        writes.length = 0;
        const status = await rawPost(value, JSON.stringify({ query: '{ topProducts { upc } }' }));
        expect(status).toMatch(/[\r\n]/.test(value) ? /^HTTP\/1\.1 400 / : /^HTTP\/1\.1 (200|400) /);
        const lines = logLines();
        expect(lines.filter((line) => line.msg === 'forged')).toEqual([]);
        const unknown = lines.filter((line) => line.msg === UNKNOWN);
        if (!status.includes(' 200 ') || value.trim() === '') return;
        expect(unknown).toHaveLength(1);
        // Node reads header bytes as Latin-1 and trims surrounding whitespace.
        expect(unknown[0]!.client_name).toBe(value.replace(/^[\t ]+|[\t ]+$/g, ''));
        logged++;
      }),
      { numRuns: 150 },
    );
    expect(logged).toBeGreaterThan(50);
  });
});
