/**
 * Finding the uploaded files of a subgraph call (variables-json.ts): counted
 * while the variables' JSON is written (each file as `null`), placed by a
 * walk that goes down only through the containers a multipart `map` path
 * marked.
 */
import { describe, expect, it } from 'vitest';
import { markLeadsToUpload, mayHoldUploads, UploadedFile, uploadCount, uploadsIn, variablesJson } from '../../../src/kernel/fetch/variables-json.js';

const file = (name: string) => new UploadedFile(['x'], name, { type: 'text/plain' });

/** A value as multipart-body.ts leaves it: every container on the way to a file marked. */
function marked<T extends object>(value: T): T {
  markLeadsToUpload(value);
  return value;
}

describe('uploaded files in subgraph variables', () => {
  it('writes files as null and counts them; variables without files count 0', () => {
    const a = file('a');
    const variables = { a, input: marked({ title: 't', doc: a, more: marked([null, file('b')]) }), n: 1 };
    expect(variablesJson(variables)).toBe('{"a":null,"input":{"title":"t","doc":null,"more":[null,null]},"n":1}');
    expect(uploadCount(variables)).toBe(3);
    expect(mayHoldUploads(variables)).toBe(true);
    const paths = uploadsIn(variables, 3, 'files');
    expect([...paths.entries()].map(([f, p]) => [f.name, p])).toEqual([
      ['a', ['variables.a', 'variables.input.doc']],
      ['b', ['variables.input.more.1']],
    ]);
    const plain = { n: 1, list: [{ a: 1 }] };
    expect(uploadCount(plain)).toBe(0);
    expect(mayHoldUploads(plain)).toBe(false);
  });

  it('counts files in frozen variables too', () => {
    const variables = Object.freeze({ f: file('f') });
    expect(uploadCount(variables)).toBe(1);
    expect(uploadCount(variables)).toBe(1);
  });

  it('goes down only through marked containers, and says so when a file is out of reach', () => {
    // A file in a container no map path marked (a plugin rebuilt the value): counted, not placed.
    const variables = { representations: [{ __typename: 'T', id: '1' }], input: { doc: file('hidden') } };
    expect(uploadCount(variables)).toBe(1);
    expect(mayHoldUploads(variables)).toBe(false);
    expect(() => uploadsIn(variables, 1, 'files')).toThrow(expect.objectContaining({ code: 'SUBGRAPH_REQUEST_FAILED' }));
  });

  it('refuses more files than a map may name', () => {
    const files = marked(Array.from({ length: 1001 }, (_, i) => file(String(i))));
    const variables = { files };
    expect(uploadCount(variables)).toBe(1001);
    expect(() => uploadsIn(variables, 1001, 'files')).toThrow(expect.objectContaining({ code: 'SUBGRAPH_REQUEST_FAILED' }));
  });

  it('stops at the depth client values may have', () => {
    // 300 marked levels: the walk gives up below its bound instead of recursing.
    let deep: unknown = file('deep');
    for (let i = 0; i < 300; i++) deep = marked({ d: deep });
    const variables = { deep };
    expect(uploadCount(variables)).toBe(1);
    expect(() => uploadsIn(variables, 1, 'files')).toThrow(expect.objectContaining({ code: 'SUBGRAPH_REQUEST_FAILED' }));
  });
});
