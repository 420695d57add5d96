/** How a Relay query map's ids are read: every key as written (duplicates included), and SHA-256 ids in one form. */
import { describe, expect, it } from 'vitest';
import { parseOperationFile, sha256Hex } from '../../src/operations/index.js';

const A = 'query A { topProducts { upc } }';
const B = 'query B { topProducts { name } }';

function read(text: string) {
  return parseOperationFile('map.json', new TextEncoder().encode(text));
}

/** [alias, id] of each operation read, or the problems. */
function aliasesOf(text: string): unknown {
  const file = read(text);
  return 'problems' in file ? file.problems : file.operations.map((operation) => [operation.aliases, operation.id]);
}

describe('Relay query map keys', () => {
  it('reads keys with escapes, odd spacing and nested-looking text exactly as JSON.parse does', () => {
    const text = `{ "a\\"}{,[" :${JSON.stringify(A)} ,\n\t"\\u0062\\\\" \r\n: ${JSON.stringify(B)}}`;
    expect(Object.keys(JSON.parse(text) as object)).toEqual(['a"}{,[', 'b\\']);
    expect(aliasesOf(text)).toEqual([
      [['a"}{,['], sha256Hex(A)],
      [['b\\'], sha256Hex(B)],
    ]);
  });

  it('reads __proto__ as a Relay id like any other', () => {
    expect(aliasesOf(`{"__proto__": ${JSON.stringify(A)}}`)).toEqual([[['__proto__'], sha256Hex(A)]]);
  });

  it('refuses a key given twice for two texts even when JSON.parse would keep only the last', () => {
    const text = `{"x": ${JSON.stringify(A)}, "y": ${JSON.stringify(A)}, "x": ${JSON.stringify(B)}}`;
    expect(aliasesOf(text)).toEqual([`Relay id "x" is given twice, for two different texts (operations ${sha256Hex(A)} and ${sha256Hex(B)}): a Relay id names one operation`]);
  });

  it('refuses two spellings of one SHA-256 id for two texts, naming both spellings', () => {
    const hex = 'c'.repeat(64);
    const text = JSON.stringify([
      [hex, A],
      [`sha256:${hex.toUpperCase()}`, B],
    ]);
    expect(aliasesOf(text)).toEqual([
      `Relay id "sha256:${hex.toUpperCase()}" (also written "${hex}") is given twice, for two different texts (operations ${sha256Hex(A)} and ${sha256Hex(B)}): a Relay id names one operation`,
    ]);
  });

  it('keeps a 64-hex Relay id in lower case, and none when it is the SHA-256 of its own text in another case', () => {
    expect(aliasesOf(JSON.stringify({ ['F'.repeat(64)]: A, [`sha256:${sha256Hex(B).toUpperCase()}`]: B }))).toEqual([
      [['f'.repeat(64)], sha256Hex(A)],
      [[], sha256Hex(B)],
    ]);
  });

  it('is not a Relay map when a duplicate key first held something else than text', () => {
    const file = read(`{"x": 1, "x": ${JSON.stringify(A)}}`);
    expect('problems' in file && file.problems[0]).toMatch(/^unknown format/);
  });
});
