/**
 * docs/errors.md's tables, written from the error catalogue: the router's
 * codes (src/kernel/kernel-errors.ts, by section) and each built-in
 * plugin's (`plugins/<name>/errors.ts`, a section named for the plugin).
 * The page's prose is hand-written; each table sits between
 * `<!-- errors:begin <section> [<section> ...] -->` and `<!-- errors:end -->`.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ErrorCatalogue, ErrorSpec } from '../src/index.js';
import { kernelErrorSections } from '../src/kernel/kernel-errors.js';

/** One group of codes, shown together in one table. */
export interface ErrorSection {
  readonly name: string;
  readonly codes: ErrorCatalogue;
}

/** The router's sections, then one per built-in plugin that declares codes. */
export async function errorSections(root: string): Promise<ErrorSection[]> {
  const sections: ErrorSection[] = Object.entries(kernelErrorSections).map(([name, codes]) => ({ name, codes }));
  const pluginsDir = join(root, 'plugins');
  for (const name of readdirSync(pluginsDir).sort()) {
    const file = join(pluginsDir, name, 'errors.ts');
    if (!existsSync(file)) continue;
    const module = (await import(pathToFileURL(file).href)) as Record<string, ErrorCatalogue>;
    sections.push({ name, codes: Object.assign({}, ...Object.values(module)) });
  }
  return sections;
}

const BEGIN = /<!-- errors:begin ([a-z0-9 -]+) -->\n[\s\S]*?<!-- errors:end -->/g;

/** `page` with every marked table rewritten from `sections`. Throws when a section has no table, or a marker names no section. */
export function renderErrorTables(page: string, sections: readonly ErrorSection[]): string {
  const byName = new Map(sections.map((section) => [section.name, section]));
  const placed = new Set<string>();
  const rendered = page.replace(BEGIN, (_, names: string) => {
    const codes: Array<[string, ErrorSpec]> = [];
    for (const name of names.trim().split(/\s+/)) {
      const section = byName.get(name);
      if (!section) throw new Error(`docs/errors.md: a table is marked for "${name}", which is no section of the error catalogue`);
      if (placed.has(name)) throw new Error(`docs/errors.md: section "${name}" has two tables`);
      placed.add(name);
      codes.push(...Object.entries(section.codes));
    }
    return `<!-- errors:begin ${names.trim()} -->\n${table(codes)}<!-- errors:end -->`;
  });
  const unplaced = sections.filter((section) => !placed.has(section.name)).map((section) => section.name);
  if (unplaced.length > 0)
    throw new Error(`docs/errors.md: no table for section(s) ${unplaced.join(', ')}: add <!-- errors:begin <section> --> <!-- errors:end --> where they belong`);
  return rendered;
}

function table(codes: ReadonlyArray<[string, ErrorSpec]>): string {
  const rows = codes.map(([code, spec]) => {
    const status = spec.statusText ?? (spec.status === undefined ? '—' : String(spec.status));
    return `| \`${code}\` | ${cell(status)} | ${cell(spec.description)} | ${cell(spec.solution ?? '')} |`;
  });
  return ['| Code | HTTP status | Description | How to solve |', '|---|---|---|---|', ...rows, ''].join('\n');
}

/** A table cell: one line, pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}
