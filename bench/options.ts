/** `npm run bench` options: flags, each with an environment variable. */
import { parseArgs } from 'node:util';

/** What to run and how long. */
export interface BenchOptions {
  /** `--scenario` / `BENCH_SCENARIO`; default `federated`. */
  readonly scenario: string;
  /** `--contenders a,b` / `BENCH_CONTENDERS`; default: all of the scenario. */
  readonly contenders?: readonly string[];
  /** `--sharing on|off|both` / `BENCH_SHARING`: keep contenders with this sharing (and `n/a`); default `both`. */
  readonly sharing: 'on' | 'off' | 'both';
  /** `--duration` / `BENCH_DURATION`, seconds of measured load per run; default 8 (`--quick`: 3). */
  readonly durationSeconds: number;
  /** `--warmup` / `BENCH_WARMUP`, seconds of load before measuring; default 3 (`--quick`: 1). */
  readonly warmupSeconds: number;
  /** `--connections` / `BENCH_CONNECTIONS`; default 32. */
  readonly connections: number;
  /** `--rounds` / `BENCH_ROUNDS`, alternating runs of every contender; default 3 (`--quick`: 1). */
  readonly rounds: number;
  /** True when `--rounds` or `BENCH_ROUNDS` gave `rounds` (else a scenario's own default may apply). */
  readonly roundsGiven: boolean;
  /** `--quick`: one short round, planner with fewer iterations. */
  readonly quick: boolean;
  /** `--planner`: only the planner benchmark. */
  readonly plannerOnly: boolean;
  /** `--no-planner`: skip the planner benchmark. */
  readonly planner: boolean;
  /** `--no-pin`: do not pin processes with taskset. */
  readonly pin: boolean;
  /** `--switchyard-cli <file>` / `BENCH_SWITCHYARD_CLI`: run this build (e.g. `dist/cli/main.js`) instead of building the working tree. */
  readonly switchyardCli?: string;
  /** `--subgraph-delay <ms>` / `BENCH_SUBGRAPH_DELAY_MS`: delay of every subgraph answer; default: the scenario's, else 0. */
  readonly subgraphDelayMs?: number;
  /** `--out <dir>` / `BENCH_OUT`: result files; default `bench/results`. */
  readonly outDir: string;
  /** `--start-timeout <s>`: seconds a contender may take to serve; default 60. */
  readonly startTimeoutSeconds: number;
  /** `--check`: start every contender once, check its answer and count its fetches; no load, no planner. */
  readonly checkOnly: boolean;
  /** `--list`: print scenarios and contenders, run nothing. */
  readonly list: boolean;
  readonly help: boolean;
}

export const USAGE = `Usage: npm run bench -- [options]

  --quick                 one short round (about a minute)
  --check                 only check every contender's answer and fetch count (no load)
  --rounds <n>            alternating rounds (default 3 or the scenario's)   BENCH_ROUNDS
  --duration <s>          measured seconds per run (default 8)                BENCH_DURATION
  --warmup <s>            warm-up seconds per run (default 3)                 BENCH_WARMUP
  --connections <n>       concurrent connections (default 32)                 BENCH_CONNECTIONS
  --contenders <a,b>      contender ids (default: all; see --list)           BENCH_CONTENDERS
  --sharing <on|off|both> contenders by in-flight fetch sharing (default both) BENCH_SHARING
  --scenario <name>       scenario (default federated; see --list)           BENCH_SCENARIO
  --switchyard-cli <file> run this Switchyard build instead of building one   BENCH_SWITCHYARD_CLI
  --subgraph-delay <ms>   delay every subgraph answer (default: scenario's, 0) BENCH_SUBGRAPH_DELAY_MS
  --start-timeout <s>     seconds a contender may take to start (default 60)
  --out <dir>             result files (default bench/results)                BENCH_OUT
  --planner               only the planner benchmark
  --no-planner            skip the planner benchmark
  --no-pin                do not pin processes to cores with taskset
  --list                  list scenarios and contenders
  --help`;

/** A bad option: its message is printed with the usage, exit code 2. */
export class UsageError extends Error {}

function number(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new UsageError(`${name} must be a number >= ${min}, got "${raw}"`);
  return value;
}

function optionalNumber(name: string, raw: string | undefined, min: number): number | undefined {
  return raw === undefined || raw === '' ? undefined : number(name, raw, min, min);
}

function integer(name: string, raw: string | undefined, fallback: number, min: number): number {
  const value = number(name, raw, fallback, min);
  if (!Number.isInteger(value)) throw new UsageError(`${name} must be a whole number, got "${raw}"`);
  return value;
}

export function parseBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): BenchOptions {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        quick: { type: 'boolean' },
        check: { type: 'boolean' },
        rounds: { type: 'string' },
        duration: { type: 'string' },
        warmup: { type: 'string' },
        connections: { type: 'string' },
        contenders: { type: 'string' },
        sharing: { type: 'string' },
        scenario: { type: 'string' },
        'switchyard-cli': { type: 'string' },
        'subgraph-delay': { type: 'string' },
        'start-timeout': { type: 'string' },
        out: { type: 'string' },
        planner: { type: 'boolean' },
        'no-planner': { type: 'boolean' },
        'no-pin': { type: 'boolean' },
        list: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const quick = parsed.quick ?? false;
  const sharing = parsed.sharing ?? env.BENCH_SHARING ?? 'both';
  if (sharing !== 'on' && sharing !== 'off' && sharing !== 'both') throw new UsageError(`--sharing must be on, off or both, got "${sharing}"`);
  const contenders = (parsed.contenders ?? env.BENCH_CONTENDERS)
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (parsed.planner && parsed['no-planner']) throw new UsageError('--planner and --no-planner exclude each other');
  return {
    scenario: parsed.scenario ?? env.BENCH_SCENARIO ?? 'federated',
    contenders: contenders && contenders.length > 0 ? contenders : undefined,
    sharing,
    durationSeconds: number('--duration', parsed.duration ?? env.BENCH_DURATION, quick ? 3 : 8, 1),
    warmupSeconds: number('--warmup', parsed.warmup ?? env.BENCH_WARMUP, quick ? 1 : 3, 0),
    connections: integer('--connections', parsed.connections ?? env.BENCH_CONNECTIONS, 32, 1),
    rounds: parsed.check ? 1 : integer('--rounds', parsed.rounds ?? env.BENCH_ROUNDS, quick ? 1 : 3, 1),
    roundsGiven: (parsed.rounds ?? env.BENCH_ROUNDS ?? '') !== '',
    quick,
    plannerOnly: parsed.planner ?? false,
    planner: !(parsed['no-planner'] ?? parsed.check ?? false),
    pin: !(parsed['no-pin'] ?? false),
    switchyardCli: parsed['switchyard-cli'] ?? env.BENCH_SWITCHYARD_CLI,
    subgraphDelayMs: optionalNumber('--subgraph-delay', parsed['subgraph-delay'] ?? env.BENCH_SUBGRAPH_DELAY_MS, 0),
    outDir: parsed.out ?? env.BENCH_OUT ?? 'bench/results',
    startTimeoutSeconds: number('--start-timeout', parsed['start-timeout'], 60, 1),
    checkOnly: parsed.check ?? false,
    list: parsed.list ?? false,
    help: parsed.help ?? false,
  };
}
