/**
 * `npm run bench:pool` (bench/pool.ts): per-round ratios pooled over saved
 * result files, and clear errors for what it cannot read.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'bench-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function pool(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/pool.ts', ...args], { encoding: 'utf8' });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A results file with one run per contender and round, `rps` as given. */
function results(name: string, rounds: Array<Record<string, number>>): string {
  const runs = rounds.flatMap((round, index) => Object.entries(round).map(([contender, rps]) => ({ contender, round: index, rps })));
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify({ scenario: 'profiling', runs }));
  return file;
}

describe('npm run bench:pool', () => {
  it('pools the per-round ratios of several files, dividing by the mean of several --b contenders', () => {
    const first = results('first.json', [
      { on: 90, off: 100, twin: 80 },
      { on: 100, off: 100, twin: 100 },
    ]);
    // The third round lacks the twin: left out.
    const second = results('second.json', [
      { on: 110, off: 100, twin: 100 },
      { on: 120, off: 100, twin: 100 },
      { on: 1, off: 1 },
    ]);
    const out = pool('--a', 'on', '--b', 'off,twin', first, second);
    expect(out.status).toBe(0);
    // Ratios 1.0, 1.0, 1.1, 1.2: median 1.05.
    expect(out.stdout).toContain('on / the mean of off and twin, rps: median of 4 per-round ratios from 2 file(s) 1.050x');
  });

  it('says how to call it when --a, --b or the files are missing', () => {
    const out = pool('--a', 'on');
    expect(out.status).toBe(2);
    expect(out.stderr).toMatch(/^error: --a, --b and at least one results file are required\n/);
    expect(out.stderr).toContain('usage: npm run bench:pool -- --a <contender> --b <contender>');
  });

  it('prints its usage for --help (exit 0) and one error line with the usage for an unknown option (exit 2), without a stack trace', () => {
    for (const flag of ['--help', '-h']) {
      const help = pool(flag);
      expect(help.status).toBe(0);
      expect(help.stdout).toContain('usage: npm run bench:pool -- --a <contender> --b <contender>');
      expect(help.stdout).toContain('--metric <field>');
      expect(help.stderr).toBe('');
    }
    const unknown = pool('--bogus', '--a', 'on');
    expect(unknown.status).toBe(2);
    expect(unknown.stdout).toBe('');
    const lines = unknown.stderr.split('\n');
    expect(lines[0]).toMatch(/^error: Unknown option '--bogus'/);
    expect(lines.filter((line) => line.startsWith('error:'))).toHaveLength(1);
    expect(unknown.stderr).toContain('usage: npm run bench:pool -- --a <contender> --b <contender>');
    expect(unknown.stderr).not.toMatch(/ERR_PARSE_ARGS|\n\s+at /);
    const noValue = pool('--a');
    expect(noValue.status).toBe(2);
    expect(noValue.stderr).toMatch(/^error: Option '--a <value>' argument missing\n/);
    expect(noValue.stderr).not.toMatch(/ERR_PARSE_ARGS|\n\s+at /);
  });

  it('names a file it cannot read or that holds no runs', () => {
    const missing = pool('--a', 'on', '--b', 'off', join(dir, 'nope.json'));
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`${join(dir, 'nope.json')}: not a readable results file`);
    const notResults = join(dir, 'other.json');
    writeFileSync(notResults, '{"name":"switchyard"}');
    const wrong = pool('--a', 'on', '--b', 'off', notResults);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(`${notResults}: no "runs" array`);
  });

  it('refuses to pool fewer than 3 rounds', () => {
    const out = pool(
      '--a',
      'on',
      '--b',
      'off',
      results('short.json', [
        { on: 1, off: 1 },
        { on: 1, off: 1 },
      ]),
    );
    expect(out.status).toBe(1);
    expect(out.stderr).toContain('fewer than 3 rounds with on and off (rps measured)');
  });
});
