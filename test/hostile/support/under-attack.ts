/**
 * Runs an attack against a router process while a well-behaved client keeps
 * asking it normal questions, and reports both sides: what each attack
 * request got, and how long each normal request took and whether its
 * answer was right.
 */
import { Worker } from 'node:worker_threads';
import { sleep, startLoad, type LoadSample } from '../../faults/load-loop.js';
import { CONNECT_PATH, PRODUCT_P1, PRODUCT_QUERY } from './graph.js';

/** A normal request must be answered within this while an attack runs. */
export const PROBE_BOUND_MS = 1_000;

/** What an attack did and what normal clients saw meanwhile. */
export interface AttackReport {
  /** Attack requests made. */
  readonly attacks: number;
  /** Attack requests that got something other than the refusal expected (each described). */
  readonly wrong: string[];
  /** Every normal request made while the attack ran. */
  readonly probes: readonly LoadSample[];
}

/** One kind of normal request and the exact answer it must get. */
export interface ProbeRequest {
  readonly label: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly expected: string;
}

/** The normal requests a probe sends in turn. */
export type Probe = readonly ProbeRequest[];

/** `{ __typename }`, then a real query through both subgraphs, on `/graphql`; and a Connect call when `connectBase` is given. */
export function normalTraffic(base: string, connectBase?: string): Probe {
  const json = { 'content-type': 'application/json' };
  return [
    { label: '__typename', url: `${base}/graphql`, headers: json, body: '{"query":"{ __typename }"}', expected: '{"data":{"__typename":"Query"}}' },
    {
      label: 'product query',
      url: `${base}/graphql`,
      headers: json,
      body: JSON.stringify({ query: PRODUCT_QUERY, variables: { upc: 'p1' } }),
      expected: JSON.stringify(PRODUCT_P1),
    },
    ...(connectBase
      ? [
          {
            label: 'Connect call',
            url: `${connectBase}${CONNECT_PATH}`,
            headers: { ...json, 'connect-protocol-version': '1' },
            body: '{"upc":"p1"}',
            expected: JSON.stringify({ product: PRODUCT_P1.data.product }),
          },
        ]
      : []),
  ];
}

const PROBE_WORKER = new URL('./probe-worker.mjs', import.meta.url);

/** Starts the probe in its own thread; `stop()` returns every sample it took. */
function startProbe(probe: Probe, maxMs: number): { stop(): Promise<LoadSample[]> } {
  const worker = new Worker(PROBE_WORKER, { workerData: { requests: probe, pauseMs: 20, deadlineMs: maxMs } });
  const samples = new Promise<LoadSample[]>((resolve, reject) => {
    worker.once('message', (message: LoadSample[]) => resolve(message));
    worker.once('error', reject);
  });
  return {
    stop: async () => {
      worker.postMessage('stop');
      const taken = await samples;
      await worker.terminate();
      return taken;
    },
  };
}

/**
 * Runs `attack` from `concurrency` loops for `ms` (each call returns a
 * problem or undefined) while `probe` runs in a thread of its own, started
 * first and stopped last so every attack request is covered.
 */
export async function underAttack(probe: Probe, attack: (i: number) => Promise<string | undefined>, options: { concurrency?: number; ms?: number } = {}): Promise<AttackReport> {
  const { concurrency = 4, ms = 500 } = options;
  const probes = startProbe(probe, ms + 30_000);
  await sleep(100);
  const attacks = startLoad(attack, concurrency, ms);
  await sleep(ms);
  const attackSamples = await attacks.stop();
  await sleep(50);
  const probeSamples = await probes.stop();
  return {
    attacks: attackSamples.length,
    wrong: [...new Set(attackSamples.filter((sample) => !sample.ok).map((sample) => sample.problem ?? 'failed'))],
    probes: probeSamples,
  };
}

/** The normal requests that failed or were slower than `PROBE_BOUND_MS`, described. */
export function probeProblems(report: AttackReport): string[] {
  return report.probes
    .filter((sample) => !sample.ok || sample.ms > PROBE_BOUND_MS)
    .map((sample) => sample.problem ?? `${(sample as LoadSample & { label?: string }).label} took ${sample.ms}ms`);
}

/** A refusal check for an attack answer: 4xx (with `code` when given), never 5xx. */
export function refused(answer: { status: number; text: string; error?: string }, code?: string): string | undefined {
  if (answer.status === 0) return `no answer: ${answer.error}`;
  if (answer.status < 400 || answer.status >= 500) return `${answer.status}: ${answer.text.slice(0, 200)}`;
  if (code !== undefined && !answer.text.includes(`"code":"${code}"`)) return `${answer.status} without ${code}: ${answer.text.slice(0, 200)}`;
  return undefined;
}
