/**
 * docs/errors.md is written from the error catalogue (`npm run docs:errors`),
 * and the source uses no code the catalogue does not declare: the router's
 * own code (src/) only the router's codes, a plugin the router's or the
 * built-in plugins' codes.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ErrorSection, errorSections, renderErrorTables } from '../../scripts/error-docs.js';
import { kernelErrors } from '../../src/kernel/kernel-errors.js';

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

/**
 * Codes the files under `dir` raise or send, each with a file using it:
 * `new RouterError('X'`, `code: 'X'` (GraphQL error JSON, log fields),
 * `errorResponse('X'` and `requestErrors(..., 'X')`. Calls with a typed
 * code are checked by the compiler too; the object literals only here.
 */
function codesUsedIn(dir: string): Map<string, string> {
  const codes = new Map<string, string>();
  const patterns = [
    /new RouterError\(\s*'([A-Z][A-Z0-9_]+)'/g,
    /\bcode: '([A-Z][A-Z0-9_]+)'/g,
    /\berrorResponse\(\s*'([A-Z][A-Z0-9_]+)'/g,
    /\brequestErrors\([^,()]+,\s*'([A-Z][A-Z0-9_]+)'\)/g,
  ];
  for (const file of sourceFiles(join(root, dir))) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) codes.set(match[1]!, file.slice(root.length));
  }
  return codes;
}

let sections: ErrorSection[];
beforeAll(async () => {
  sections = await errorSections(root);
});

describe('docs/errors.md', () => {
  it('has the tables the error catalogue gives (after a change to a code: npm run docs:errors)', () => {
    const page = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    expect(renderErrorTables(page, sections)).toBe(page);
  });

  it('lists every declared code, with its status', () => {
    const page = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    for (const section of sections) {
      for (const [code, spec] of Object.entries(section.codes)) {
        const row = page.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
        expect(row, code).toBeDefined();
        if (spec.status !== undefined && spec.statusText === undefined) expect(row).toContain(`| ${spec.status} |`);
      }
    }
  });

  it('is found out of date when a table differs from the catalogue, and refuses a section without a table', () => {
    const page = readFileSync(join(root, 'docs/errors.md'), 'utf8');
    const stale = page.replace('| `GRAPH_NOT_READY` | 503 |', '| `GRAPH_NOT_READY` | 500 |');
    expect(stale).not.toBe(page);
    expect(renderErrorTables(stale, sections)).toBe(page);
    const withoutProfiling = page.replace('<!-- errors:begin profiling -->', '<!-- profiling table removed -->');
    expect(() => renderErrorTables(withoutProfiling, sections)).toThrow(/no table for section\(s\) profiling/);
    const unknown = page.replace('<!-- errors:begin profiling -->', '<!-- errors:begin profiling nonesuch -->');
    expect(() => renderErrorTables(unknown, sections)).toThrow(/"nonesuch", which is no section/);
  });
});

describe('error codes in the source', () => {
  it('are declared by the router when src/ uses them', () => {
    const used = codesUsedIn('src');
    expect(used.size).toBeGreaterThan(20);
    expect(used.get('GRAPH_NOT_READY')).toBeDefined();
    const undeclared = [...used].filter(([code]) => !Object.hasOwn(kernelErrors, code)).map(([code, file]) => `${code} (${file})`);
    expect(undeclared).toEqual([]);
  });

  it('are declared by the router or a built-in plugin when plugins/ uses them', () => {
    const used = codesUsedIn('plugins');
    expect(used.get('PROFILING_NOT_FOUND')).toBeDefined();
    const declared = new Set(sections.flatMap((section) => Object.keys(section.codes)));
    const undeclared = [...used].filter(([code]) => !declared.has(code)).map(([code, file]) => `${code} (${file})`);
    expect(undeclared).toEqual([]);
  });

  it('are declared by one owner each', () => {
    const owners = new Map<string, string[]>();
    for (const section of sections) for (const code of Object.keys(section.codes)) owners.set(code, [...(owners.get(code) ?? []), section.name]);
    expect([...owners].filter(([, names]) => names.length > 1)).toEqual([]);
  });
});
