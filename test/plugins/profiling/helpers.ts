import { expect } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { demoSubgraphs } from '../../../examples/demo/subgraphs.js';
import { createLogger, type Logger } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { useProfiling, type ProfilingOptionsInput } from '../../../plugins/profiling/index.js';

/** A query that crosses all four demo subgraphs. */
export const DEMO_QUERY = `{ topProducts(first: 2) { name shippingEstimate inStock reviews { body author { username name } } } }`;

/** One JSON log line. */
export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly plugin?: string;
  readonly [field: string]: unknown;
}

/** A logger whose lines are kept for assertions. */
export function captureLogs(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: {
      write(text: string) {
        for (const line of text.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LogLine);
      },
    },
  });
  return { logger, lines };
}

/** Gunzips and decodes a pprof body with pprof-format's decoder. */
export function decodePprof(body: ArrayBuffer | Uint8Array): Profile {
  const bytes = body instanceof Uint8Array ? body : new Uint8Array(body);
  expect(bytes[0]).toBe(0x1f);
  expect(bytes[1]).toBe(0x8b);
  return Profile.decode(gunzipSync(bytes));
}

/** A decoded sample, with names resolved. */
export interface ReadableSample {
  readonly values: number[];
  /** Function names, leaf first. */
  readonly frames: string[];
  /** File names, leaf first. */
  readonly files: string[];
  readonly labels: Record<string, string | number>;
}

/** `[type/unit, ...]` of a profile. */
export function sampleTypesOf(profile: Profile): string[] {
  const text = (index: number | bigint) => profile.stringTable.strings[Number(index)];
  return profile.sampleType.map((type) => `${text(type.type)}/${text(type.unit)}`);
}

/** Every sample with its stack and labels as text. */
export function readSamples(profile: Profile): ReadableSample[] {
  const text = (index: number | bigint) => profile.stringTable.strings[Number(index)] ?? '';
  const functions = new Map(profile.function.map((fn) => [Number(fn.id), fn]));
  const locations = new Map(profile.location.map((location) => [Number(location.id), location]));
  return profile.sample.map((sample) => {
    const lines = sample.locationId.flatMap((id) => locations.get(Number(id))?.line ?? []);
    const fns = lines.map((line) => functions.get(Number(line.functionId)));
    const labels: Record<string, string | number> = {};
    for (const label of sample.label) labels[text(label.key)] = Number(label.str) !== 0 ? text(label.str) : Number(label.num);
    return {
      values: sample.value.map(Number),
      frames: fns.map((fn) => (fn ? text(fn.name) : '')),
      files: fns.map((fn) => (fn ? text(fn.filename) : '')),
      labels,
    };
  });
}

/** The sum of one sample type over samples whose stack contains `frame`. */
export function totalFor(profile: Profile, typeIndex: number, frame: string): number {
  return readSamples(profile)
    .filter((sample) => sample.frames.includes(frame))
    .reduce((sum, sample) => sum + (sample.values[typeIndex] ?? 0), 0);
}

/** A router over the demo subgraphs with the profiling plugin, and the captured logs. */
export interface ProfilingRouter {
  readonly router: TestRouter;
  readonly logs: LogLine[];
  /** `http://127.0.0.1:<port>` of the profiling listener, when `pprof_addr` was set. */
  readonly pprofUrl: string | undefined;
  close(): Promise<void>;
}

/** Starts the demo subgraphs and a router with `useProfiling(options)`. */
export async function startProfilingRouter(options: ProfilingOptionsInput): Promise<ProfilingRouter> {
  const subgraphs: TestSubgraph[] = await Promise.all(demoSubgraphs.map((subgraph) => startSubgraph(subgraph)));
  const { logger, lines } = captureLogs();
  const router = await startTestRouter({ subgraphs, plugins: [useProfiling(options)], logger });
  const exposed = lines.find((line) => line.msg.startsWith('Profiling endpoints exposed'));
  return {
    router,
    logs: lines,
    pprofUrl: typeof exposed?.listen_addr === 'string' ? `http://${exposed.listen_addr}` : undefined,
    async close() {
      await router.close();
      await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
    },
  };
}

/** Sends demo queries back to back until `until` resolves; returns how many were answered. */
export async function driveLoad(router: TestRouter, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  let answered = 0;
  const worker = async () => {
    while (!done) {
      const response = await router.query(DEMO_QUERY);
      expect(response.status).toBe(200);
      answered++;
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  return answered;
}

/** One push the ingest server received. */
export interface IngestPush {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly authorization: string | undefined;
  readonly partNames: string[];
  readonly fileName: string | undefined;
  readonly profile: Profile;
  /** When it arrived, epoch ms. */
  readonly receivedAt: number;
}

/** A Pyroscope-like ingest server on 127.0.0.1 that records pushes. */
export interface IngestServer {
  readonly url: string;
  readonly pushes: IngestPush[];
  /** Status answered from now on (default 200). */
  respondWith(status: number): void;
  /** Stops listening (connections are refused until `restart`). */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function recordPush(req: IncomingMessage): Promise<IngestPush> {
  const body = await readBody(req);
  const url = new URL(req.url ?? '/', 'http://ingest.local');
  const form = await new Response(new Uint8Array(body), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
  const part = form.get('profile');
  if (!(part instanceof Blob)) throw new Error('no profile part');
  return {
    method: req.method ?? '',
    path: url.pathname,
    query: url.searchParams,
    authorization: req.headers.authorization,
    partNames: [...form.keys()],
    fileName: part instanceof File ? part.name : undefined,
    profile: decodePprof(await part.arrayBuffer()),
    receivedAt: Date.now(),
  };
}

export async function startIngestServer(): Promise<IngestServer> {
  const pushes: IngestPush[] = [];
  let status = 200;
  let server: Server | undefined;
  let port = 0;
  const listen = async () => {
    const next = createServer((req, res) => {
      recordPush(req).then(
        (push) => {
          if (status >= 200 && status < 300) pushes.push(push);
          res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'try again later');
        },
        (error: unknown) => res.writeHead(400).end(String(error)),
      );
    });
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve));
    port = (next.address() as AddressInfo).port;
    server = next;
  };
  const stop = async () => {
    const current = server;
    server = undefined;
    if (!current) return;
    await new Promise<void>((resolve) => {
      current.close(() => resolve());
      current.closeAllConnections();
    });
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    pushes,
    respondWith: (next) => {
      status = next;
    },
    stop,
    restart: listen,
    close: stop,
  };
}

/** Polls until `check` returns true, or fails after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
