/**
 * Header-rule regular expressions as Cosmo configs write them: Go's RE2,
 * often starting with `(?i)`. A leading `(?i)` is accepted (names are
 * matched ignoring case anyway); other Go-only syntax stops startup with
 * the key and what to write instead.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../../src/kernel/config/index.js';
import { startSubgraph, startTestRouter } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';
import { configRejectionOf } from './config-errors.js';

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-header-patterns-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let files = 0;
/** A config file whose only header rule is `rule` (YAML flow mapping). */
async function withRule(rule: string): Promise<string> {
  const file = join(dir, `router-${files++}.config.yaml`);
  await writeFile(file, `version: "1"\nheaders:\n  all:\n    request:\n      - ${rule}\n`);
  return file;
}

describe('a Cosmo-style (?i) pattern', () => {
  it('loads from a config file, as propagate and remove rules', async () => {
    const propagate = await loadConfigFile(await withRule(`{op: propagate, matching: "(?i)^x-.*"}`), { env: {} });
    expect(propagate.core.headers.all.request).toEqual([{ op: 'propagate', matching: '(?i)^x-.*' }]);
    const remove = await loadConfigFile(await withRule(`{op: remove, matching: "(?i)^X-Internal-"}`), { env: {} });
    expect(remove.core.headers.all.request).toEqual([{ op: 'remove', matching: '(?i)^X-Internal-' }]);
  });

  it('selects headers ignoring case on a real router', async () => {
    await using library = await startSubgraph(librarySubgraph());
    await using router = await startTestRouter({
      subgraphs: [library],
      listen: true,
      config: {
        headers: {
          all: {
            request: [
              { op: 'propagate', matching: '(?i)^X-TENANT-' },
              { op: 'propagate', matching: '(?i)^x-internal-' },
              { op: 'remove', matching: '(?i)^X-INTERNAL-SECRET$' },
            ],
          },
        },
      },
    });
    const answer = await router.query({
      query: '{ books { id } }',
      headers: { 'X-Tenant-Id': 't1', 'x-internal-trace': 'abc', 'x-internal-secret': 's3cret', 'x-other': 'dropped' },
    });
    expect(answer.body.errors).toBeUndefined();
    const sent = library.calls[0]?.headers ?? {};
    expect(sent['x-tenant-id']).toBe('t1');
    expect(sent['x-internal-trace']).toBe('abc');
    expect(sent['x-internal-secret']).toBeUndefined();
    expect(sent['x-other']).toBeUndefined();
  });
});

describe('other Go-only syntax', () => {
  it.each([
    ['(?s)^x-.*', `"(?s)^x-.*" uses Go's inline flags "(?s)"; only a leading (?i) is accepted`],
    ['(?is)^x-', `"(?is)^x-" uses Go's inline flags "(?is)"`],
    ['(?i:x-a)|x-b', `"(?i:x-a)|x-b" uses Go's inline flags "(?i:"`],
    ['^x-(?i)tenant', `"^x-(?i)tenant" uses the flag (?i) past the start; it is accepted only as the first thing in the pattern`],
    ['(?P<kind>x)-.*', `"(?P<kind>x)-.*" uses Go's named group (?P<name>...); write (?<name>...)`],
    ['\\\\Ax-tenant', `"\\Ax-tenant" uses Go's \\A (start of text); write ^`],
    ['x-tenant\\\\z', `"x-tenant\\z" uses Go's \\z (end of text); write $`],
    ['^x-[[:alpha:]]+$', `"^x-[[:alpha:]]+$" uses Go's character class "[:alpha:]"; write the characters, such as [a-z0-9]`],
    ['\\\\Qx.y\\\\E', `"\\Qx.y\\E" uses Go's \\Q...\\E quoting; put a \\ before each special character instead`],
    ['^x-\\\\pL+', `"^x-\\pL+" uses Go's Unicode class \\p`],
    ['^\\\\x{78}-', `"^\\x{78}-" uses Go's \\x{...}; write \\xHH (two hex digits)`],
  ])('refuses %s naming the key and what to write instead', async (pattern, message) => {
    const error = await configRejectionOf(async () => loadConfigFile(await withRule(`{op: propagate, matching: "${pattern}"}`), { env: {} }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.issues).toHaveLength(1);
    expect(error.issues[0]?.path).toBe('headers.all.request[0].matching');
    expect(error.issues[0]?.message.startsWith(message)).toBe(true);
  });

  it('accepts what JavaScript reads the same way: escapes, classes, groups, an escaped \\A', async () => {
    for (const pattern of ['^x-(?:tenant|user)-\\\\d+$', '^x-[a-z\\\\]]+$', '^x-(?<kind>\\\\w+)$', '^x-\\\\\\\\Ax$', '(?=x-)x-.*']) {
      await expect(loadConfigFile(await withRule(`{op: propagate, matching: "${pattern}"}`), { env: {} })).resolves.toBeDefined();
    }
  });

  it('still refuses a pattern that is no regular expression at all', async () => {
    const error = await configRejectionOf(async () => loadConfigFile(await withRule(`{op: remove, matching: "(?i)x-("}`), { env: {} }));
    expect(error.issues[0]).toMatchObject({ path: 'headers.all.request[0].matching' });
    expect(error.issues[0]?.message).toMatch(/^is not a valid regular expression: /);
  });
});
