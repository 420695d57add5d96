import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  let files: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files = files.concat(sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) files.push(path);
  }
  return files;
}

/** Codes thrown or sent by the source: `new RouterError('X'`, `code: 'X'`, and the ErrorCode union. */
function codesInSource(): Map<string, string> {
  const codes = new Map<string, string>();
  const patterns = [/new RouterError\(\s*'([A-Z][A-Z0-9_]+)'/g, /\bcode: '([A-Z][A-Z0-9_]+)'/g, /^\s*\| '([A-Z][A-Z0-9_]+)'/gm];
  for (const dir of ['src', 'plugins']) {
    let files: string[] = [];
    try {
      files = sourceFiles(join(root, dir));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      for (const pattern of patterns) for (const match of text.matchAll(pattern)) codes.set(match[1]!, file.slice(root.length));
    }
  }
  return codes;
}

describe('docs/errors.md', () => {
  it('documents every error code used in the source', () => {
    const documented = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    const missing = [...codesInSource()].filter(([code]) => !documented.includes(`\`${code}\``)).map(([code, file]) => `${code} (${file})`);
    expect(missing).toEqual([]);
  });
});
