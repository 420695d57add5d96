/**
 * A router as users run it: `switchyard router -c <config>` in its own
 * process (the build named by `SWITCHYARD_TEST_CLI`, as CI runs it, else the
 * sources through tsx; see test/cli/run-cli.ts), so that a crash shows as an
 * exit, its memory can be read from /proc, and a stalled event loop cannot
 * hide behind the test's own.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { spawnCli, waitFor } from '../../cli/run-cli.js';

/** A running router process. */
export interface RouterProcess {
  readonly pid: number;
  /** `http://127.0.0.1:<listen_addr port>` */
  readonly base: string;
  /** Whether the process is still running. */
  alive(): boolean;
  /** Resident set size now, bytes (undefined once it exited). */
  rss(): number | undefined;
  /** Everything it printed (stdout and stderr). */
  output(): string;
  /** SIGTERM, then the exit code (or signal); SIGKILL after 10 s. */
  stop(): Promise<number | string | null>;
  /** SIGKILL, and waits for the exit. */
  kill(): Promise<void>;
}

/** Writes `config` as `<name>.config.yaml` in `dir`, starts the router on it (`env` added to the environment) and waits for `/health/ready`. */
export async function startRouterProcess(dir: string, name: string, config: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<RouterProcess> {
  const listen = String(config.listen_addr);
  const configPath = join(dir, `${name}.config.yaml`);
  await writeFile(configPath, stringify({ version: '1', ...config }));
  const child = spawnCli(['router', '-c', configPath], { cwd: dir, env: { LOG_LEVEL: 'warn', ...env } });
  let exitedWith: number | string | null | undefined;
  const exited = child.exited.then(() => (exitedWith = child.exitCode ?? child.signalCode));
  const output = () => {
    const { stdout, stderr } = child.output();
    return `${stdout}${stderr}`;
  };
  const base = `http://${listen}`;
  try {
    await waitFor(async () => {
      if (exitedWith !== undefined) throw new Error('exited');
      return (await fetch(`${base}/health/ready`)).status === 200;
    }, 60_000);
  } catch {
    child.kill('SIGKILL');
    throw new Error(`router "${name}" did not get ready (exit ${String(exitedWith)}):\n${output()}`);
  }
  return {
    pid: child.pid!,
    base,
    alive: () => exitedWith === undefined && child.exitCode === null && child.signalCode === null,
    rss: () => {
      try {
        const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
        return kb === undefined ? undefined : Number(kb) * 1024;
      } catch {
        return undefined;
      }
    },
    output,
    stop: async () => {
      if (exitedWith !== undefined) return exitedWith;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      return exitedWith ?? null;
    },
    kill: async () => {
      if (exitedWith !== undefined) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/**
 * What went wrong in a router's output, one entry per kind with its count:
 * log lines at error or fatal level (`level: msg (err.code)`), lines that
 * mention an uncaught or unhandled error, and anything that is not a log
 * line (a stack trace, a Node warning).
 */
export function troubleIn(output: string): string[] {
  const counts = new Map<string, number>();
  for (const line of output.split('\n')) {
    if (line.trim() === '') continue;
    let entry: string | undefined;
    if (!line.startsWith('{')) entry = line.slice(0, 200);
    else {
      try {
        const parsed = JSON.parse(line) as { level?: string; msg?: string; plugin?: string; err?: { code?: string; message?: string } };
        if (parsed.level === 'error' || parsed.level === 'fatal' || /uncaught|unhandled/i.test(line)) {
          entry = `${parsed.level}: ${parsed.plugin ? `[${parsed.plugin}] ` : ''}${parsed.msg ?? ''}${parsed.err ? ` (${parsed.err.code ?? parsed.err.message ?? ''})` : ''}`;
        }
      } catch {
        entry = line.slice(0, 200);
      }
    }
    if (entry !== undefined) counts.set(entry, (counts.get(entry) ?? 0) + 1);
  }
  return [...counts].map(([entry, count]) => (count > 1 ? `${entry} ×${count}` : entry));
}

/**
 * One router of the suite, restarted (same config, same ports) when an
 * attack killed or stalled it, so that one unfixed weakness fails its own
 * test and not every test after it. `restarts` says why each restart was
 * needed.
 */
export class RouterSlot {
  private process: RouterProcess | undefined;
  readonly restarts: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly name: string,
    private readonly config: Record<string, unknown>,
  ) {}

  get current(): RouterProcess {
    if (!this.process) throw new Error(`router "${this.name}" not started`);
    return this.process;
  }

  async start(): Promise<RouterProcess> {
    this.process = await startRouterProcess(this.dir, this.name, this.config);
    return this.process;
  }

  /** Restarts the router when it exited or does not answer `/health/live` within `withinMs`. */
  async ensure(withinMs = 2_000): Promise<void> {
    const router = this.current;
    let why: string | undefined;
    if (!router.alive()) why = `it had exited:\n${router.output().slice(-3_000)}`;
    else {
      const live = await fetch(`${router.base}/health/live`, { signal: AbortSignal.timeout(withinMs) }).then(
        (response) => response.status,
        () => 0,
      );
      if (live !== 200) why = `it did not answer /health/live within ${withinMs}ms (status ${live})`;
    }
    if (why === undefined) return;
    this.restarts.push(why);
    await router.kill();
    await this.start();
  }

  stop(): Promise<number | string | null> | undefined {
    return this.process?.stop();
  }
}
