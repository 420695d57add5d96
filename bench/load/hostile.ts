/**
 * The hostile mix of `npm run load`: clients that try to crash, stall or
 * bloat the router while the valid traffic runs (docs/security.md lists
 * what each one tests). Two halves:
 *
 * - requests over HTTP (autocannon, keep-alive): deep documents, fragment
 *   bombs, documents too wide, malformed JSON, cross-site form and
 *   `text/plain` POSTs (CSRF), bodies over the 1MB limit, GET with
 *   variables that are not JSON, introspection with it off; each must get
 *   a 4xx, never a 5xx;
 * - raw sockets: connections reset (TCP RST) mid-request or before the
 *   answer, garbage bytes, and slowloris sockets trickling headers or a
 *   body, on the main and the Connect listener; the router closes those,
 *   and none of it may cost a valid request anything but time.
 */
import { randomBytes } from 'node:crypto';
import type autocannon from 'autocannon';
import { raw, resetAfter, slowloris, type Slowloris } from '../../test/hostile/support/clients.js';
import { CONNECT_PATH } from './graph.js';

/** What a hostile request must get: a 4xx, optionally with this error code in the body. */
type Expectation = { readonly code?: string };

/** 2^levels fields in a document of a few hundred bytes. */
function fragmentBomb(levels: number): string {
  const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i + 1} on Query { ${i + 1 < levels ? `...F${i + 2} ...F${i + 2}` : '__typename'} }`);
  return `query Bomb { ...F1 } ${fragments.join(' ')}`;
}

const STRICT = { accept: 'application/graphql-response+json' };

/** The HTTP half: [kind, request, expectation]. */
function hostileRequestSpecs(): Array<[string, Omit<autocannon.Request, 'onResponse'>, Expectation]> {
  const json = { 'content-type': 'application/json', ...STRICT };
  const post = (body: string, headers: Record<string, string> = json) => ({ method: 'POST' as const, path: '/graphql', headers, body });
  return [
    ['hostile: deep document', post(JSON.stringify({ query: `{ ${'a { '.repeat(2_000)}b${' }'.repeat(2_000)} }` })), {}],
    ['hostile: fragment bomb', post(JSON.stringify({ query: fragmentBomb(24) })), { code: 'MAX_FIELDS_EXCEEDED' }],
    ['hostile: too wide', post(JSON.stringify({ query: `{ ${Array.from({ length: 6_000 }, (_, i) => `f${i}: __typename`).join(' ')} }` })), {}],
    ['hostile: deep list value', post(JSON.stringify({ query: `{ product(upc: ${'['.repeat(50_000)}1${']'.repeat(50_000)}) { upc } }` })), {}],
    ['hostile: malformed JSON', post('{"query": "{ now }", "variables": {'), {}],
    ['hostile: malformed JSON', post('\u0000\u0001garbage'), {}],
    [
      'hostile: CSRF form POST',
      post(`query=${encodeURIComponent('{ now }')}`, { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.test' }),
      { code: 'CSRF_PREVENTED' },
    ],
    ['hostile: CSRF text/plain POST', post(JSON.stringify({ query: '{ now }' }), { 'content-type': 'text/plain', origin: 'https://evil.test' }), { code: 'CSRF_PREVENTED' }],
    ['hostile: oversized body', post(`{"query":"{ now }","pad":"${'x'.repeat(1_100_000)}"}`), { code: 'REQUEST_TOO_LARGE' }],
    ['hostile: GET bad variables', { method: 'GET', path: '/graphql?query=%7B__typename%7D&variables=%7B', headers: STRICT }, {}],
    ['hostile: introspection', post(JSON.stringify({ query: '{ __schema { types { name } } }' })), {}],
    ['hostile: long documentId', post(JSON.stringify({ documentId: 'a'.repeat(300) }), { ...json, 'graphql-client-name': 'load' }), {}],
  ];
}

/** The HTTP half as autocannon requests; `record(kind, status, good, body)` gets every answer. */
export function hostileRequests(record: (kind: string, status: number, good: boolean, body: string) => void): autocannon.Request[] {
  return hostileRequestSpecs().map(([kind, request, expectation]) => ({
    ...request,
    onResponse: (status: number, body: string) => {
      // PERSISTED_QUERY_NOT_FOUND is answered 200 (Apollo's protocol); every other refusal is a 4xx.
      const notFound = status === 200 && body.includes('"PERSISTED_QUERY_NOT_FOUND"');
      const good = notFound || (status >= 400 && status < 500 && (expectation.code === undefined || body.includes(`"${expectation.code}"`)));
      record(kind, status, good, body);
    },
  }));
}

/** What the socket half did. */
export interface SocketAttackStats {
  resets: number;
  garbage: number;
  /** Garbage answered with a status of 500 or more (a failure). */
  garbage5xx: number;
  /** Slowloris sockets opened, and how many of them the router closed. */
  slowOpened: number;
  slowClosedByRouter: number;
  /** Connections the attack could not even open (the listener was gone or refused). */
  connectFailures: number;
}

const GARBAGE = [
  () => randomBytes(2_048),
  () => Buffer.from(`PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n${randomBytes(256).toString('latin1')}`, 'latin1'),
  () => Buffer.from('GET /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'),
  () => Buffer.from('POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
  () => Buffer.from(`GET /graphql HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(70_000)}\r\n\r\n`),
];

/**
 * Starts the socket half on `ports` (main and Connect listener) with
 * `connections` sockets in all: a quarter resetting, a quarter sending
 * garbage, half held open as slowloris (reopened when the router closes
 * one). `stop()` ends it and returns the counts.
 */
export function startSocketAttacks(ports: { router: number; connect: number }, connections: number): { stop(): Promise<SocketAttackStats> } {
  const stats: SocketAttackStats = { resets: 0, garbage: 0, garbage5xx: 0, slowOpened: 0, slowClosedByRouter: 0, connectFailures: 0 };
  let running = true;
  const targets = [ports.router, ports.connect];
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  const request = 'POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 21\r\n\r\n{"query":"{ now }"}  ';
  const connectCall = `POST ${CONNECT_PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnect-Protocol-Version: 1\r\nContent-Length: 12\r\n\r\n{"upc":"p1"}`;
  const resetters = Array.from({ length: Math.max(1, Math.round(connections / 4)) }, async (_, i) => {
    for (let n = 0; running; n++) {
      const port = targets[(i + n) % 2]!;
      const whole = port === ports.router ? request : connectCall;
      const cut = [0, 1, 30, whole.length - 3, whole.length][n % 5]!;
      try {
        await resetAfter(port, whole.slice(0, cut), n % 3);
        stats.resets++;
      } catch {
        stats.connectFailures++;
      }
      await pause();
    }
  });
  const garblers = Array.from({ length: Math.max(1, Math.round(connections / 4)) }, async (_, i) => {
    for (let n = 0; running; n++) {
      try {
        const answer = await raw(targets[(i + n) % 2]!, GARBAGE[n % GARBAGE.length]!(), 300);
        stats.garbage++;
        if (answer.status >= 500) stats.garbage5xx++;
      } catch {
        stats.connectFailures++;
      }
      await pause();
    }
  });
  const slow = new Set<Slowloris>();
  const holders = Array.from({ length: Math.max(1, Math.round(connections / 2)) }, async (_, i) => {
    while (running) {
      let socket: Slowloris;
      try {
        socket = await slowloris(targets[i % 2]!, (['idle', 'headers', 'body'] as const)[i % 3]!, { everyMs: 1_000, path: i % 2 === 0 ? '/graphql' : CONNECT_PATH });
      } catch {
        stats.connectFailures++;
        await pause();
        continue;
      }
      stats.slowOpened++;
      slow.add(socket);
      while (running && socket.closedAt === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
      if (socket.closedAt !== undefined && running) stats.slowClosedByRouter++;
      socket.stop();
      slow.delete(socket);
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all([...resetters, ...garblers, ...holders]);
      for (const socket of slow) socket.stop();
      return stats;
    },
  };
}
