/**
 * The vocabulary of the benchmark: a scenario is a set of contenders, the
 * request the load generator sends them, and the targets it judges. A
 * contender is one process to start (Switchyard in some configuration,
 * another router, the floor, the ceiling). See bench/README.md, "Adding a
 * scenario".
 */
import type { BuiltPrograms, ServerName } from './build.js';
import type { RunningServer } from './subgraphs.js';
import type { ContenderSummary } from './summary.js';

/** One HTTP request, sent as-is by the load generator. */
export interface BenchRequest {
  readonly method: 'GET' | 'POST';
  /** Path and query string, e.g. `/graphql`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Default: no body. */
  readonly body?: string;
}

/** What a contender's `launch` gets. */
export interface LaunchContext {
  /** The port it must listen on, on 127.0.0.1. */
  readonly port: number;
  /** The supergraph SDL file (routing URLs point at the running subgraphs). */
  readonly supergraphFile: string;
  /** Subgraph GraphQL endpoints by name. */
  readonly subgraphUrls: Readonly<Record<string, string>>;
  /** The expected response body, as a file. */
  readonly expectedFile: string;
  /** A folder of its own for config files; also its working directory. */
  readonly dir: string;
  readonly programs: BuiltPrograms;
  /** URLs the scenario's `services` reported, by name (e.g. `profile-sink`); empty without services. */
  readonly services: Readonly<Record<string, string>>;
  /** Another free loopback port, for a contender with a second listener (Connect, metrics). */
  freePort(): Promise<number>;
}

/** How to start a contender: one process. */
export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
  /** Added to a clean environment (PATH, HOME, NODE_ENV=production). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Base URL that the check and the load go to, e.g. a Connect listener's
   * `http://127.0.0.1:<second port>`; default `http://127.0.0.1:<port>`.
   * The readiness probe always goes to `<port>`.
   */
  readonly url?: string;
}

/** In-flight sharing of identical subgraph fetches: `on`, `off`, or `n/a` (no fetches). */
export type Sharing = 'on' | 'off' | 'n/a';

/** One process the benchmark starts, checks and loads. */
export interface Contender {
  /** Unique in its scenario, used with `--contenders`, e.g. `switchyard`, `switchyard-nosharing`. */
  readonly id: string;
  /** Name in the table, e.g. `Hive Gateway 2.15.1`. */
  readonly label: string;
  /** `router` (judged by targets), `floor` or `ceiling` (references). */
  readonly role: 'router' | 'floor' | 'ceiling';
  /** Whether identical in-flight subgraph fetches are shared. */
  readonly sharing: Sharing;
  /** Id of the contender the ratio column compares with; default: none. */
  readonly baseline?: string;
  /** A reason it cannot run here (package missing), or undefined. */
  unavailable?(): string | undefined;
  launch(context: LaunchContext): Launch | Promise<Launch>;
  /** Default: the scenario's request. */
  readonly request?: BenchRequest;
  /** Readiness probe, answered with HTTP 200 once it serves; default: POST /graphql `{ __typename }`. */
  readonly probe?: BenchRequest;
  /**
   * The expected response body for this contender, from the scenario's
   * (parsed); e.g. a Connect answer holds `data` only. Default: the scenario's.
   */
  expect?(expected: unknown): unknown;
  /**
   * `core` (default): pinned to the contender core. `none`: not pinned, for
   * a contender that uses every core (`--workers 2`); it then shares a core
   * with the load generator.
   */
  readonly pin?: 'core' | 'none';
  /** A problem seen in its log once it answers (e.g. a silent fallback), or undefined. */
  checkLog?(log: string): string | undefined;
}

/** One judged target, computed from medians. */
export interface TargetCheck {
  /** e.g. `Switchyard >= 4x Hive Gateway (req/s)`. */
  readonly name: string;
  /** The measured value, e.g. the ratio; undefined when a contender is missing. */
  readonly value?: number;
  /** min-max of the per-round values. */
  readonly spread?: readonly [number, number];
  /** Undefined when it could not be judged. */
  readonly met?: boolean;
  /** How to read `value`, e.g. `4.20x`. */
  readonly shown: string;
}

/** A bench server program a scenario starts once, beside the subgraphs (pinned with them). */
export interface ScenarioService {
  /** A program of bench/servers (built with the others). */
  readonly program: ServerName;
  /** Added to its environment. */
  readonly env?: Readonly<Record<string, string>>;
}

/** What a scenario's `afterRounds` gets. */
export interface AfterRoundsContext {
  readonly programs: BuiltPrograms;
  /** The scenario's folder for scratch files. */
  readonly workDir: string;
  /** The scenario's running services, by program name. */
  readonly services: Readonly<Partial<Record<ServerName, RunningServer>>>;
  /** `--check`: answers only, no load. */
  readonly checkOnly: boolean;
  /** `--quick`. */
  readonly quick: boolean;
  /** Rounds run. */
  readonly rounds: number;
  /** Seconds of load in one run or phase: warm-up + measured. */
  readonly phaseSeconds: number;
  /** Ids of the contenders that ran (after `--contenders`/`--sharing`). */
  readonly contenders: readonly string[];
  /** `taskset -c` core list of the contender core when pinning is on. */
  readonly contenderCores?: string;
}

/** A benchmark scenario. */
export interface Scenario {
  /** Used with `--scenario`. */
  readonly name: string;
  readonly description: string;
  /** What the load generator sends, unless a contender has its own. */
  readonly request: BenchRequest;
  readonly contenders: readonly Contender[];
  /** How the subgraphs answer in this scenario. */
  readonly subgraphs?: {
    /** `Cache-Control` header of every subgraph answer (e.g. `max-age=60` for a response cache); default none. */
    readonly cacheControl?: string;
    /** Delay of every answer in ms, unless `--subgraph-delay` is given; default 0. */
    readonly delayMs?: number;
    /**
     * Which subgraphs servers/subgraph-server.ts serves: `federated` (the
     * four benchmark subgraphs, default) or `projects` (the gRPC scenario's
     * HTTP subgraph and gRPC service); `subgraphUrls` has their names.
     */
    readonly graph?: 'federated' | 'projects';
  };
  /**
   * The supergraph SDL every contender gets as `supergraphFile`, from the
   * subgraph URLs; default: the four benchmark subgraphs composed.
   */
  supergraph?(subgraphUrls: Readonly<Record<string, string>>): string;
  /** Programs started once before the rounds and stopped after them; default none. */
  readonly services?: readonly ScenarioService[];
  /** Rounds when neither `--rounds` nor `--quick`/`--check` says; default 3. */
  readonly defaultRounds?: number;
  /**
   * Warm phases instead of fresh runs: every contender is started once and
   * stays up; each gets one unmeasured load of `settleSeconds` (past the JIT
   * warm-up of a freshly started process), then every round is one load
   * phase per contender (warm-up + duration, as in a fresh run). During a
   * phase the loaded contender has the contender core and the others wait on
   * the load core, so an idle contender's timers cannot slow the loaded one.
   * For comparing two configurations whose difference is a few percent: the
   * phases of a round are seconds apart, not a process start apart, so a
   * machine whose speed wanders shifts both alike. Default: fresh runs.
   *
   * `starts`: the rounds are split into this many spans (as even as they
   * go, at most one per round), and every contender is started afresh and
   * settled again for each. One process per contender for the whole run
   * carries that process's luck (its code layout, its JIT's choices) into
   * every round, a bias no number of rounds averages out; several starts
   * sample it. Default: 1.
   */
  readonly warmPhases?: { readonly settleSeconds: number; readonly starts?: number };
  /** Header of the ratio column; default `req/s / baseline`. */
  readonly ratioLabel?: string;
  /** The exact expected response body for `request`, given the supergraph SDL. */
  expected(supergraphSdl: string): Promise<string>;
  /** Targets judged on the summary; default: none. */
  targets?(summary: ReadonlyMap<string, ContenderSummary>): TargetCheck[];
  /**
   * Measurements after the rounds that are not a contender under load (a
   * memory footprint, what a service received), shown with the targets;
   * default none.
   */
  afterRounds?(context: AfterRoundsContext): Promise<TargetCheck[]>;
}
