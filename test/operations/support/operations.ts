/** Operation texts and helpers the operations tests share. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseOperationFile, sha256Hex, type OperationInput } from '../../../src/operations/index.js';

export const topProductsQuery = 'query TopProducts { topProducts { upc name } }';
export const productQuery = 'query Product($upc: ID!) { product(upc: $upc) { upc name price } }';
export const priceQuery = 'query Prices { topProducts { price } }';

/** The input `switchyard operations push` makes of one .graphql text. */
export function graphqlInput(text: string): OperationInput {
  const file = parseOperationFile('operation.graphql', new TextEncoder().encode(text));
  if ('problems' in file) throw new Error(file.problems.join('\n'));
  return file.operations[0]!;
}

/** An Apollo persisted-query manifest of the given texts. */
export function apolloManifest(texts: readonly string[]): string {
  const operations = texts.map((body) => ({ id: sha256Hex(body), name: /(?:query|mutation)\s+(\w+)/.exec(body)?.[1] ?? null, type: 'query', body }));
  return JSON.stringify({ format: 'apollo-persisted-query-manifest', version: 1, operations }, null, 2);
}

/** A temporary directory, removed by `remove()`. */
export async function tempDir(): Promise<{ path: string; remove(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'switchyard-operations-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}
