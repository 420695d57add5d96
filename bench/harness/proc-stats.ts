/**
 * CPU time and memory of a process and its descendants, read from /proc
 * (Linux). A contender that forks workers is measured as a whole.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime. */
const CLOCK_TICKS = (() => {
  const out = spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim();
  const ticks = Number(out);
  return Number.isFinite(ticks) && ticks > 0 ? ticks : 100;
})();

/** True when /proc can be read (Linux): otherwise CPU and RSS are reported as unknown. */
export const PROC_AVAILABLE = (() => {
  try {
    readFileSync(`/proc/${process.pid}/stat`, 'utf8');
    return true;
  } catch {
    return false;
  }
})();

/** Fields of /proc/<pid>/stat after the command name (which may hold spaces). */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** `pid` and all its living descendants. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (!fields) continue;
    const parent = Number(fields[1]);
    const list = children.get(parent);
    if (list) list.push(Number(entry));
    else children.set(parent, [Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    for (const child of children.get(p) ?? []) visit(child);
  };
  visit(pid);
  return tree;
}

/** User + system CPU milliseconds used so far by `pids` (exited ones count 0). */
export function cpuMs(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    const fields = statFields(pid);
    // After the name: state(0) ppid(1) ... utime(11) stime(12).
    if (fields) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / CLOCK_TICKS;
}

/** Resident set size in bytes of `pids` together. */
export function rssBytes(pids: readonly number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (match) kb += Number(match[1]);
    } catch {
      // exited
    }
  }
  return kb * 1024;
}

/** Samples a process tree's RSS while a load runs. */
export class RssSampler {
  private peak = 0;
  private last = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: readonly number[],
    intervalMs = 200,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    this.last = rssBytes(this.pids);
    if (this.last > this.peak) this.peak = this.last;
  }

  /** Stops sampling; returns the peak and the RSS at this moment. */
  stop(): { peak: number; end: number } {
    clearInterval(this.timer);
    this.sample();
    return { peak: this.peak, end: this.last };
  }
}
