/**
 * `switchyard router --workers <n>` takes a plain whole number from 1 to 4
 * per CPU; anything else is a usage error (exit 2) naming the range, before
 * any process is forked or any file read.
 */
import { availableParallelism } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { runCli } from './run-cli.js';

// Each case starts the CLI through tsx, which takes seconds on a busy machine.
vi.setConfig({ testTimeout: 120_000 });

describe('switchyard router --workers', () => {
  const max = 4 * availableParallelism();

  it('refuses a count that is not plain digits, or beyond 4 per CPU, with exit 2', async () => {
    const refused = ['1e1', '1e3', '0x2', '2.0', '0', String(max + 1)];
    const results = await Promise.all(refused.map((value) => runCli(['router', '--workers', value])));
    for (const [i, result] of results.entries()) {
      expect({ value: refused[i], code: result.code }).toEqual({ value: refused[i], code: 2 });
      expect(result.stderr).toContain(`expected a whole number from 1 to ${max} (4 per CPU)`);
    }
  });

  it('takes a plain count within the bound (the run then fails on the missing graph, exit 1)', async () => {
    const result = await runCli(['router', '--workers', '1', '--supergraph', 'no-such-supergraph.graphql']);
    expect(result.code).toBe(1);
    expect(result.stderr).not.toContain('--workers');
  });
});
