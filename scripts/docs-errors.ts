/**
 * `npm run docs:errors`: rewrites the tables of docs/errors.md from the
 * error catalogue. With `--check`, changes nothing and exits 1 when the page
 * is out of date (test/docs/error-codes.test.ts checks the same).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { errorSections, renderErrorTables } from './error-docs.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const path = `${root}docs/errors.md`;
const current = readFileSync(path, 'utf8');
const next = renderErrorTables(current, await errorSections(root));
if (process.argv.includes('--check')) {
  if (next !== current) {
    console.error('docs/errors.md is out of date: run npm run docs:errors');
    process.exit(1);
  }
} else if (next !== current) {
  writeFileSync(path, next);
  console.log('docs/errors.md: tables rewritten');
} else {
  console.log('docs/errors.md: up to date');
}
