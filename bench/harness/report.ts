/** The result table (Markdown, printed and written) and the raw JSON result file. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunResult } from './measure.js';
import type { Scenario, TargetCheck } from './scenario.js';
import type { ContenderSummary, Metric, Spread } from './summary.js';

/** Facts about the run printed above the table. */
export interface RunFacts {
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  readonly commit: string;
  readonly pinning: string;
  readonly connections: number;
  readonly durationSeconds: number;
  readonly warmupSeconds: number;
  readonly rounds: number;
  /** True for `--check`: answers checked, nothing loaded. */
  readonly checkOnly: boolean;
  readonly subgraphDelayMs: number;
  readonly expectedBytes: number;
  /** 1-minute load average at the start and the end: a busy machine shows here. */
  readonly loadAverage: readonly [number, number];
}

function fixed(value: number | undefined, digits: number): string {
  return value === undefined ? '-' : value.toFixed(digits);
}

function withSpread(spread: Spread | undefined, digits: number): string {
  if (!spread) return '-';
  if (spread.n < 2) return fixed(spread.median, digits);
  return `${fixed(spread.median, digits)} (${fixed(spread.min, digits)}-${fixed(spread.max, digits)})`;
}

function metric(summary: ContenderSummary, name: Metric): Spread | undefined {
  return summary.metrics[name];
}

function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

function mainTable(scenario: Scenario, summaries: readonly ContenderSummary[]): string[] {
  const lines = [
    row([
      'contender',
      'sharing',
      'req/s median (min-max)',
      scenario.ratioLabel ?? 'req/s / baseline',
      'p50 ms',
      'p99 ms',
      'CPU ms/req',
      'RSS peak / end MB',
      'subgraph req/req: alone, under load',
    ]),
    row(['---', '---', '---:', '---:', '---:', '---:', '---:', '---:', '---:']),
  ];
  for (const s of summaries) {
    const label = `${s.contender.label} \`${s.contender.id}\``;
    if (!s.metrics.rps && s.problems.length === 0) {
      const alone = fixed(metric(s, 'fetchesAlone')?.median, 0);
      lines.push(row([label, s.contender.sharing, 'answer checked, not loaded', '', '', '', '', '', `${alone}, -`]));
      continue;
    }
    if (!s.metrics.rps) {
      const problem = (s.problems[0] ?? 'no run').split('\n')[0]!;
      lines.push(row([label, s.contender.sharing, `failed: ${problem.length > 100 ? `${problem.slice(0, 100)}...` : problem}`, '', '', '', '', '', '']));
      continue;
    }
    lines.push(
      row([
        label,
        s.contender.sharing,
        withSpread(metric(s, 'rps'), 0),
        withSpread(s.ratio, 2),
        fixed(metric(s, 'latencyP50Ms')?.median, 1),
        fixed(metric(s, 'latencyP99Ms')?.median, 1),
        withSpread(metric(s, 'cpuMsPerRequest'), 2),
        `${fixed(metric(s, 'rssPeakMB')?.median, 0)} / ${fixed(metric(s, 'rssEndMB')?.median, 0)}`,
        `${fixed(metric(s, 'fetchesAlone')?.median, 0)}, ${fixed(metric(s, 'subgraphRequestsPerRequest')?.median, 2)}`,
      ]),
    );
  }
  return lines;
}

function detailTable(summaries: readonly ContenderSummary[]): string[] {
  const lines = [
    row(['contender', 'start ms', 'first request ms', 'idle RSS MB', 'response KB', 'errors', 'load side CPU', 'byte-identical', 'failed runs']),
    row(['---', '---:', '---:', '---:', '---:', '---:', '---:', '---', '---:']),
  ];
  for (const s of summaries) {
    const busy = metric(s, 'loadSideBusy');
    lines.push(
      row([
        `\`${s.contender.id}\``,
        fixed(metric(s, 'startupMs')?.median, 0),
        fixed(metric(s, 'firstResponseMs')?.median, 1),
        fixed(metric(s, 'rssIdleMB')?.median, 0),
        fixed((metric(s, 'responseBytes')?.median ?? NaN) / 1024, 1).replace('NaN', '-'),
        fixed(metric(s, 'errors')?.max, 0),
        busy ? `${(busy.max * 100).toFixed(0)}%` : '-',
        s.runs.some((r) => !r.problem) ? (s.exactBytes ? 'yes' : 'no (deep-equal)') : '-',
        String(s.problems.length),
      ]),
    );
  }
  return lines;
}

function targetLines(targets: readonly TargetCheck[]): string[] {
  return targets.map((t) => {
    const verdict = t.met === undefined ? 'not judged' : t.met ? 'MET' : 'NOT MET';
    const spread = t.spread ? ` [rounds ${t.spread[0].toFixed(2)}-${t.spread[1].toFixed(2)}]` : '';
    return `- ${verdict}: ${t.name}: ${t.shown}${spread}`;
  });
}

/** The report as Markdown: facts, the main table, details, targets, problems. */
export function renderReport(scenario: Scenario, facts: RunFacts, summaries: readonly ContenderSummary[], targets: readonly TargetCheck[]): string {
  const lines = [
    `## Benchmark \`${scenario.name}\`: ${scenario.description}`,
    '',
    `${facts.date}; node ${facts.node}; ${facts.cpu}; commit ${facts.commit}; ${facts.pinning}; ` +
      (facts.checkOnly ? 'answers checked, no load; ' : `${facts.connections} connections; ${facts.warmupSeconds}s warm-up + ${facts.durationSeconds}s measured per run; `) +
      `${facts.rounds} alternating round(s); subgraph delay ${facts.subgraphDelayMs} ms; expected response ${facts.expectedBytes} bytes; ` +
      `load average ${facts.loadAverage[0].toFixed(2)} -> ${facts.loadAverage[1].toFixed(2)}.`,
    '',
    ...mainTable(scenario, summaries),
    '',
    ...detailTable(summaries),
  ];
  if (targets.length > 0) lines.push('', `Targets (medians of ${facts.rounds} round(s); per-round spread in brackets):`, ...targetLines(targets));
  const problems = summaries.flatMap((s) => s.problems.map((p) => `- \`${s.contender.id}\`: ${p.split('\n').slice(0, 6).join(' / ')}`));
  if (problems.length > 0) lines.push('', 'Problems:', ...problems);
  const saturated = summaries.filter((s) => (s.metrics.loadSideBusy?.max ?? 0) > 0.9).map((s) => s.contender.id);
  if (saturated.length > 0) {
    lines.push('', `Note: the load side (load generator + subgraphs) was above 90% of its core for ${saturated.join(', ')}: their req/s may be capped by it.`);
  }
  return `${lines.join('\n')}\n`;
}

/** Writes `<stamp>-<scenario>.json` (every run) and `.md`, and `latest-<scenario>.md`; returns the JSON path. */
export function writeResults(
  outDir: string,
  scenario: Scenario,
  facts: RunFacts,
  results: readonly RunResult[],
  summaries: readonly ContenderSummary[],
  targets: readonly TargetCheck[],
  markdown: string,
): string {
  mkdirSync(outDir, { recursive: true });
  const stamp = facts.date.replace(/[:.]/g, '-');
  const base = join(outDir, `${stamp}-${scenario.name}`);
  const json = {
    scenario: scenario.name,
    facts,
    runs: results,
    summary: summaries.map((s) => ({
      id: s.contender.id,
      label: s.contender.label,
      role: s.contender.role,
      sharing: s.contender.sharing,
      baseline: s.contender.baseline,
      metrics: s.metrics,
      ratio: s.ratio,
      exactBytes: s.exactBytes,
      problems: s.problems,
    })),
    targets,
  };
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(`${base}.md`, markdown);
  writeFileSync(join(outDir, `latest-${scenario.name}.md`), markdown);
  return `${base}.json`;
}
