import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OperationFileError, readOperationFiles, sha256Hex } from '../../src/operations/index.js';
import { apolloManifest, productQuery, tempDir, topProductsQuery } from './support/operations.js';

let dir: { path: string; remove(): Promise<void> };

beforeEach(async () => {
  dir = await tempDir();
});
afterEach(async () => {
  await dir.remove();
});

async function file(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(dir.path, name);
  await writeFile(path, content);
  return path;
}

async function problemsOf(...paths: string[]): Promise<readonly string[]> {
  const error = await readOperationFiles(paths).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof OperationFileError)) throw new Error('expected the files to be refused');
  return error.problems;
}

describe('operation files', () => {
  it('reads a .graphql file as one document whose id is the SHA-256 of its bytes', async () => {
    const text = `# two operations, one document\n${topProductsQuery}\n${productQuery}\n`;
    const path = await file('ops.graphql', text);
    const [read] = await readOperationFiles([path]);
    expect(read).toEqual({
      path,
      format: 'graphql',
      operations: [{ id: sha256Hex(Buffer.from(text)), body: text, name: 'TopProducts, Product', type: 'query', normalizedId: expect.stringMatching(/^[0-9a-f]{64}$/) }],
    });
  });

  it('keeps a byte order mark so the id stays the hash of the bytes', async () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(topProductsQuery)]);
    const [read] = await readOperationFiles([await file('bom.graphql', bytes)]);
    expect(read!.operations[0]!.id).toBe(sha256Hex(bytes));
    expect(sha256Hex(read!.operations[0]!.body)).toBe(sha256Hex(bytes));
  });

  it('reads an Apollo persisted-query manifest', async () => {
    const path = await file('manifest.json', apolloManifest([topProductsQuery, productQuery]));
    const [read] = await readOperationFiles([path]);
    expect(read!.format).toBe('apollo-persisted-query-manifest');
    expect(read!.operations.map(({ id, name, type, body }) => ({ id, name, type, body }))).toEqual([
      { id: sha256Hex(topProductsQuery), name: 'TopProducts', type: 'query', body: topProductsQuery },
      { id: sha256Hex(productQuery), name: 'Product', type: 'query', body: productQuery },
    ]);
  });

  it('reads a Relay query map as an object, keeping the Relay id as an alias', async () => {
    const path = await file('queries.json', JSON.stringify({ '6f1c2f0b8e1d4a7c9b3e5d2a1f0c8b7e': topProductsQuery }));
    const [read] = await readOperationFiles([path]);
    expect(read!.format).toBe('relay-query-map');
    expect(read!.operations).toEqual([
      expect.objectContaining({ id: sha256Hex(topProductsQuery), body: topProductsQuery, name: 'TopProducts', aliases: ['6f1c2f0b8e1d4a7c9b3e5d2a1f0c8b7e'] }),
    ]);
  });

  it('reads a Relay query map as a list of pairs, with no alias when the Relay id already is the SHA-256', async () => {
    const path = await file(
      'queries.json',
      JSON.stringify([
        [sha256Hex(productQuery), productQuery],
        ['md5-like', topProductsQuery],
      ]),
    );
    const [read] = await readOperationFiles([path]);
    expect(read!.operations.map((operation) => [operation.id, operation.aliases])).toEqual([
      [sha256Hex(productQuery), []],
      [sha256Hex(topProductsQuery), ['md5-like']],
    ]);
  });

  it('refuses an Apollo manifest whose id is not the SHA-256 of its body, naming the operation', async () => {
    const manifest = JSON.parse(apolloManifest([topProductsQuery])) as { operations: Array<{ id: string }> };
    manifest.operations[0]!.id = 'a'.repeat(64);
    const path = await file('manifest.json', JSON.stringify(manifest));
    expect(await problemsOf(path)).toEqual([`${path}: operation 0 ("TopProducts"): id ${'a'.repeat(64)} is not the SHA-256 of its body (which is ${sha256Hex(topProductsQuery)})`]);
  });

  it('refuses Apollo manifest versions other than 1', async () => {
    const path = await file('manifest.json', JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 2, operations: [] }));
    expect(await problemsOf(path)).toEqual([`${path}: Apollo persisted-query manifest version 2 is not supported; only version 1 is`]);
  });

  it('reports syntax errors with line and column, in every file at once', async () => {
    const broken = await file('broken.graphql', 'query {\n  topProducts {\n');
    const relay = await file('relay.json', JSON.stringify({ abc: 'query { nope( }' }));
    expect(await problemsOf(broken, relay)).toEqual([
      `${broken}: GraphQL syntax error at line 3, column 1: Expected Name, found <EOF>.`,
      `${relay}: query abc: GraphQL syntax error at line 1, column 15: Expected Name, found "}".`,
    ]);
  });

  it('refuses unknown formats, invalid JSON, missing files and documents without an operation', async () => {
    const unknown = await file('other.json', JSON.stringify({ queries: [1, 2] }));
    const otherFormat = await file('other-format.json', JSON.stringify({ format: 'something-else', version: 1 }));
    const badJson = await file('bad.json', '{"a": ');
    const fragments = await file('fragments.graphql', 'fragment F on Product { upc }');
    const missing = join(dir.path, 'missing.graphql');
    const problems = await problemsOf(unknown, otherFormat, badJson, fragments, missing);
    expect(problems).toEqual([
      expect.stringMatching(new RegExp(`^${escapeRegExp(unknown)}: unknown format: expected a GraphQL document, an Apollo persisted-query manifest`)),
      `${otherFormat}: unknown manifest format "something-else"; expected "apollo-persisted-query-manifest"`,
      expect.stringMatching(new RegExp(`^${escapeRegExp(badJson)}: is not valid JSON: `)),
      `${fragments}: holds no operation (only fragments or type definitions)`,
      `${missing}: file not found`,
    ]);
  });

  it('refuses an empty Relay map and an empty Apollo manifest: nothing to push is a mistake, not a push of 0', async () => {
    const object = await file('empty.json', '{}');
    const list = await file('empty-list.json', '[]');
    const apollo = await file('empty-apollo.json', JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations: [] }));
    expect(await problemsOf(object, list, apollo)).toEqual([
      `${object}: holds no operations (an empty Relay query map): nothing to push`,
      `${list}: holds no operations (an empty Relay query map): nothing to push`,
      `${apollo}: holds no operations (an empty Apollo persisted-query manifest): nothing to push`,
    ]);
  });

  it('refuses a file that is not UTF-8', async () => {
    const path = await file('latin1.graphql', Buffer.from([0x71, 0x75, 0x65, 0x72, 0x79, 0x20, 0xe9]));
    expect(await problemsOf(path)).toEqual([`${path}: is not UTF-8 text`]);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
