/**
 * A subgraph whose misbehaviour a test switches at will, in front of a
 * healthy one: it answers like the healthy subgraph until told to hang,
 * answer slowly, cut the connection mid-body, fail with a status, send
 * invalid JSON or an enormous body.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  | { kind: 'none' }
  | { kind: 'hang' }
  | { kind: 'slow'; ms: number }
  | { kind: 'cut-mid-body' }
  | { kind: 'status'; status: number }
  | { kind: 'invalid-json' }
  | { kind: 'huge-body'; bytes: number };

export interface FaultySubgraph {
  readonly url: string;
  fault: Fault;
  /** Requests received. */
  calls: number;
  close(): Promise<void>;
}

/** Proxies to `upstream` (a healthy subgraph's URL) unless a fault is set. */
export async function startFaultySubgraph(upstream: string): Promise<FaultySubgraph> {
  const target = new URL(upstream);
  const state: { fault: Fault; calls: number } = { fault: { kind: 'none' }, calls: 0 };
  const server: Server = createServer((req, res) => {
    state.calls++;
    const fault = state.fault;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      switch (fault.kind) {
        case 'hang':
          return; // never answer
        case 'status':
          res.writeHead(fault.status, { 'content-type': 'text/plain' }).end('fault');
          return;
        case 'invalid-json':
          res.writeHead(200, { 'content-type': 'application/json' }).end('{"data": {"book": ');
          return;
        case 'cut-mid-body':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
          res.write('{"data": {"book": {"title": "Du');
          setTimeout(() => res.socket?.destroy(), 10);
          return;
        case 'huge-body': {
          res.writeHead(200, { 'content-type': 'application/json' });
          const block = Buffer.alloc(1024 * 1024, 0x20);
          let sent = 0;
          const pump = (): void => {
            while (sent < fault.bytes) {
              sent += block.length;
              if (!res.write(block)) {
                res.once('drain', pump);
                return;
              }
            }
            res.end();
          };
          res.on('error', () => undefined);
          pump();
          return;
        }
        default: {
          const forward = () => {
            const proxied = request(
              { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json' } },
              (answer) => {
                res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' });
                answer.pipe(res);
              },
            );
            proxied.on('error', () => res.writeHead(502).end());
            proxied.end(Buffer.concat(chunks));
          };
          if (fault.kind === 'slow') setTimeout(forward, fault.ms);
          else forward();
        }
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    get fault() {
      return state.fault;
    },
    set fault(next: Fault) {
      state.fault = next;
    },
    get calls() {
      return state.calls;
    },
    set calls(value: number) {
      state.calls = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
