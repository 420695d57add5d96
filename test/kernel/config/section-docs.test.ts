/**
 * The docs of the built-in config sections are checked against their
 * declarations (`builtinSections`): docs/configuration.md lists every section
 * with its plugin, and the key table it links to names exactly the keys the
 * section's schema accepts, with environment variables that exist.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinSections } from '../../../src/cli/builtin-plugins.js';
import { buildConfigSchema, envBindings } from '../../../src/kernel/config/index.js';
import { sectionKeyPaths } from './section-key-paths.js';

const DOCS = new URL('../../../docs/', import.meta.url).pathname;

/** A markdown table: its header cells and rows of cells, with the heading it sits under. */
interface DocTable {
  readonly heading: string;
  readonly header: readonly string[];
  readonly rows: ReadonlyArray<readonly string[]>;
}

function cells(line: string): string[] {
  return line
    .trim()
    .replace(/^\||\|$/g, '')
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim());
}

/** Every table of a page, in order, each with the heading (as GitHub anchors it) above it. */
function tablesOf(page: string): DocTable[] {
  const tables: DocTable[] = [];
  let heading = '';
  let lines: string[] = [];
  const flush = (): void => {
    if (lines.length >= 2) tables.push({ heading, header: cells(lines[0] ?? ''), rows: lines.slice(2).map(cells) });
    lines = [];
  };
  for (const line of readFileSync(join(DOCS, page), 'utf8').split('\n')) {
    if (line.startsWith('|')) {
      lines.push(line);
      continue;
    }
    flush();
    if (line.startsWith('#')) heading = anchorOf(line.replace(/^#+\s*/, ''));
  }
  flush();
  return tables;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The text of a cell that is one code span (`` `a.b` ``), else undefined. */
function codeSpan(cell: string | undefined): string | undefined {
  return /^`([^`]+)`$/.exec(cell ?? '')?.[1];
}

/** Row of docs/configuration.md's section table: section key, plugin, what switches it on, and the page and anchor of its keys. */
interface SectionRow {
  readonly key: string | undefined;
  readonly plugin: string | undefined;
  readonly onWhen: string;
  readonly page: string;
  readonly anchor: string;
}

function sectionRows(): SectionRow[] {
  const table = tablesOf('configuration.md').find((candidate) => candidate.heading === 'plugin-sections');
  if (!table) throw new Error('docs/configuration.md has no table under "Plugin sections"');
  return table.rows.map((row) => {
    const link = /\]\(([^)#]+)#([^)]+)\)/.exec(row[3] ?? '');
    return { key: codeSpan(row[0]), plugin: /`([^`]+)`/.exec(row[1] ?? '')?.[1], onWhen: row[2] ?? '', page: link?.[1] ?? '', anchor: link?.[2] ?? '' };
  });
}

/** The keys a page's table documents for a section, relative to the section; the environment variables it names. */
function documentedKeys(row: SectionRow): { keys: string[]; variables: string[] } {
  const table = tablesOf(row.page).find((candidate) => candidate.heading === row.anchor && /^key$/i.test(candidate.header[0] ?? ''));
  if (!table) throw new Error(`${row.page} has no key table under #${row.anchor}`);
  const envColumn = table.header.findIndex((title) => /^env(ironment)?$/i.test(title));
  const written = table.rows.map((cellsOfRow) => ({ key: codeSpan(cellsOfRow[0]), env: envColumn < 0 ? '' : (cellsOfRow[envColumn] ?? '') }));
  // A table of full paths (`connect_rpc.enabled`) may hold other sections' keys too; one of relative paths holds only this section's.
  const prefix = `${row.key}.`;
  const prefixed = written.some(({ key }) => key?.startsWith(prefix));
  const own = written.filter(({ key }) => key !== undefined && !key.includes('*') && (!prefixed || key.startsWith(prefix)));
  return {
    keys: own.map(({ key = '' }) => (prefixed ? key.slice(prefix.length) : key)),
    variables: own.flatMap(({ env }) => [...env.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1] ?? '')),
  };
}

describe('docs of the built-in config sections', () => {
  const rows = sectionRows();

  it('docs/configuration.md lists every built-in section, in hook order, with the plugin it switches on', () => {
    expect(rows.map((row) => [row.key, row.plugin])).toEqual(builtinSections.map((section) => [section.key, section.plugin]));
  });

  it("names each section's environment-only variables where it says what switches the section on", () => {
    for (const [index, section] of builtinSections.entries()) {
      for (const variable of Object.keys(section.env ?? {})) expect(rows[index]?.onWhen, section.key).toContain(`\`${variable}\``);
    }
  });

  it("documents every key of each section's schema, and no key the schema lacks", () => {
    for (const [index, section] of builtinSections.entries()) {
      const row = rows[index];
      if (!row) continue;
      const paths = sectionKeyPaths(section.schema);
      const { keys } = documentedKeys(row);
      expect(
        keys.filter((key) => !paths.includes(key)),
        `${row.page}#${row.anchor} documents keys ${section.key} does not have`,
      ).toEqual([]);
      // A key counts as documented when it, or the mapping or list it sits in, has a row.
      const leaves = paths.filter((path) => !paths.some((other) => other.startsWith(`${path}.`)));
      const covered = (path: string): boolean => keys.some((key) => path === key || path.startsWith(`${key}.`));
      expect(
        leaves.filter((path) => !covered(path)),
        `${row.page}#${row.anchor} leaves keys of ${section.key} undocumented`,
      ).toEqual([]);
    }
  });

  it('names only environment variables that set a key of the section', () => {
    let named = 0;
    for (const [index, section] of builtinSections.entries()) {
      const row = rows[index];
      if (!row) continue;
      const bindings = envBindings(buildConfigSchema([section])).filter((binding) => binding.path[0] === section.key);
      const known = new Set([...bindings.map((binding) => binding.variable), ...Object.keys(section.env ?? {})]);
      const { variables } = documentedKeys(row);
      named += variables.length;
      expect(
        variables.filter((variable) => !known.has(variable)),
        `${row.page}#${row.anchor}`,
      ).toEqual([]);
    }
    // The pages with an environment column (persisted operations, Connect, profiling) name some.
    expect(named).toBeGreaterThan(10);
  });
});
