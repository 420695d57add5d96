/**
 * `npm run load -- --replicas N` (bench/load/replicas.ts) refuses a bad
 * replica count before it starts anything. The run itself takes a minute
 * and both cores, so it is a command to run by hand (docs/deployment.md),
 * not a test.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readLoadArgs } from '../../bench/load/args.js';

const RUN = fileURLToPath(new URL('../../bench/load/run.ts', import.meta.url));

function load(...args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', RUN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

describe('npm run load -- --replicas', () => {
  it('reads a replica count from 1 to 8, and defaults to one', () => {
    expect(readLoadArgs(['--replicas', '3', '--duration', '20'])).toEqual({ seconds: 20, connections: 256, hostile: true, replicas: 3 });
    expect(readLoadArgs([])).toMatchObject({ replicas: 1, seconds: 60 });
  });

  it('refuses a replica count that is not a whole number from 1 to 8, or an unknown option, with the usage', () => {
    for (const argv of [
      ['--replicas', '0'],
      ['--replicas', 'three'],
      ['--replicas', '9'],
      ['--replicas', '2.5'],
      ['--replica', '3'],
    ]) {
      const read = readLoadArgs(argv);
      expect(read).toHaveProperty('error');
      expect((read as { error: string }).error).toContain('usage: npm run load -- ');
    }
    expect(readLoadArgs(['--replicas', '0'])).toEqual({ error: expect.stringContaining('--replicas must be a whole number from 1 to 8') });
  });

  it('exits 2 with that message from the command line, before starting anything', async () => {
    const { code, stderr } = await load('--replicas', 'three');
    expect(code).toBe(2);
    expect(stderr).toContain('--replicas must be a whole number from 1 to 8');
  }, 60_000);
});
