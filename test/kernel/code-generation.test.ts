/**
 * The one code-generation helper of the kernel and plugins
 * (src/kernel/code-generation.ts, exported by the SDK): compiles where the
 * process allows it, answers undefined where it does not, so callers run
 * their general code; decided once per process.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { codeGenerationAllowed, compileGenerated } from '../../src/index.js';

const helper = fileURLToPath(new URL('../../src/kernel/code-generation.ts', import.meta.url));
const tsx = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

/** Runs `script` (with the helper imported as `cg`) in a Node process with `flags`; returns what it printed. */
function inProcess(flags: readonly string[], script: string): { status: number | null; stdout: string; stderr: string } {
  const code = `import(${JSON.stringify(helper)}).then((cg) => { ${script} })`;
  const result = spawnSync(process.execPath, [...flags, '--import', tsx, '-e', code], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('compileGenerated', () => {
  it('builds a function from the body, handing it the helpers as H', () => {
    expect(codeGenerationAllowed()).toBe(true);
    const add = compileGenerated<{ base: number }, (n: number) => number>('"use strict"; const { base } = H; return function add(n) { return base + n; };', { base: 40 });
    expect(add?.(2)).toBe(42);
  });

  it('throws a body that is not JavaScript as the SyntaxError it is (a bug in the generator, not a policy)', () => {
    expect(() => compileGenerated('return function (', {})).toThrow(SyntaxError);
    expect(codeGenerationAllowed()).toBe(true);
  });

  it('answers undefined under --disallow-code-generation-from-strings, every time, without throwing', () => {
    const run = inProcess(
      ['--disallow-code-generation-from-strings'],
      `const results = [cg.codeGenerationAllowed(), cg.compileGenerated('return 1', {}), cg.compileGenerated('return 2', {}), cg.codeGenerationAllowed()];
       console.log(JSON.stringify(results.map((value) => value === undefined ? 'undefined' : value)));`,
    );
    expect(run).toMatchObject({ status: 0, stdout: '[false,"undefined","undefined",false]\n' });
  });

  it('compiles in a process without the flag (the same script)', () => {
    const run = inProcess([], `console.log(JSON.stringify([cg.codeGenerationAllowed(), cg.compileGenerated('return 1', {})]));`);
    expect(run).toMatchObject({ status: 0, stdout: '[true,1]\n' });
  });
});
