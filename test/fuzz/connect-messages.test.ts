import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_OPERATIONS, startConnectRouter, startProjectsGraph, writeContract, type ConnectRouter, type ProjectsGraph } from '../plugins/connect/fixtures.js';
import { expectPrototypeUntouched, pollutingKeys, POLLUTING_OBJECT } from './prototype.js';

let graph: ProjectsGraph;
let dir: string;
let router: ConnectRouter;

beforeAll(async () => {
  graph = await startProjectsGraph();
  dir = await mkdtemp(join(tmpdir(), 'switchyard-connect-fuzz-'));
  // Only queries: fuzzed mutations would grow the data under the other cases.
  const queries = Object.fromEntries(Object.entries(PROJECT_OPERATIONS).filter(([, text]) => !/^\s*mutation/.test(text)));
  await writeContract(join(dir, 'projects', 'v1'), queries, graph.apiSchema);
  router = await startConnectRouter(graph, dir);
});

afterAll(async () => {
  await router?.close();
  await graph?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Status of each Connect error code, as the current Connect protocol fixes it. */
const STATUS: Readonly<Record<string, number>> = {
  invalid_argument: 400,
  unauthenticated: 401,
  permission_denied: 403,
  not_found: 404,
  unimplemented: 501,
  deadline_exceeded: 504,
  unavailable: 503,
  unknown: 500,
};

const METHODS = ['GetProject', 'ListProjects', 'Search', 'GetProjectNote', 'Failing', 'CreateProject', 'Nope', '__proto__'];
const PREFIX = '/projects.v1.ProjectsService/';

/** An answer is a JSON message (200) or a Connect error whose status fits its code; never `internal`. */
async function expectConnectAnswer(response: Response, context: string): Promise<void> {
  const text = await response.text();
  if (response.status === 200) {
    expect(() => JSON.parse(text), context).not.toThrow();
    return;
  }
  let body: { code?: string; message?: string } = {};
  expect(() => (body = JSON.parse(text) as typeof body), `${response.status} ${text.slice(0, 200)} for ${context}`).not.toThrow();
  expect(Object.keys(STATUS), `${text.slice(0, 200)} for ${context}`).toContain(body.code);
  expect(response.status, `${text.slice(0, 200)} for ${context}`).toBe(STATUS[body.code!]);
  expect(typeof body.message).toBe('string');
}

const field = fc.oneof(fc.constantFrom('id', 'status', 'first', 'term', 'input', 'name', 'tags'), pollutingKeys, fc.string({ maxLength: 6 }));
const value = fc.oneof(
  fc.constantFrom('1', '2', 'ACTIVE', 'ON_HOLD', 'PROJECT_STATUS_ACTIVE', 'nope', '', 3, -1, 2 ** 31, 1.5, '9007199254740993', null, true),
  fc.jsonValue({ maxDepth: 2 }),
  fc.constant(JSON.parse(POLLUTING_OBJECT) as unknown),
);
/** A message as JSON text, keys written literally so `__proto__` stays an own key. */
const message = fc.array(fc.tuple(field, value), { maxLength: 4 }).map((pairs) => `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`);
const body = fc.oneof(
  message,
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ unit: 'binary', maxLength: 100 }),
);

describe('fuzzing Connect messages', () => {
  it('answers POSTed messages of any shape with a result or a Connect error of the right status', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), body, fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain'), async (method, text, type) => {
        const response = await fetch(`${router.connectUrl}${PREFIX}${method}`, {
          method: 'POST',
          headers: { 'content-type': type, 'connect-protocol-version': '1' },
          body: text,
        });
        await expectConnectAnswer(response, `POST ${method} ${type} ${text.slice(0, 100)}`);
        expectPrototypeUntouched();
      }),
      { numRuns: 200 },
    );
  });

  it('answers GET messages of any shape the same way', async () => {
    // JSON messages only: binary (encoding=proto) messages are the Connect plugin's own tests' concern.
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...METHODS), body, fc.constantFrom('json', 'xml', ''), fc.boolean(), async (method, text, encoding, base64) => {
        const query = new URLSearchParams({ connect: 'v1', encoding, message: base64 ? Buffer.from(text).toString('base64url') : text, ...(base64 ? { base64: '1' } : {}) });
        const response = await fetch(`${router.connectUrl}${PREFIX}${method}?${query}`);
        await expectConnectAnswer(response, `GET ${method} ${query}`);
        expectPrototypeUntouched();
      }),
      { numRuns: 200 },
    );
  });

  it('still answers a good call afterwards', async () => {
    const response = await fetch(`${router.connectUrl}${PREFIX}ListProjects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: JSON.stringify({ first: 1 }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ projects: [{ id: '1', name: 'Switchyard', status: 'PROJECT_STATUS_ACTIVE' }] });
  });
});
