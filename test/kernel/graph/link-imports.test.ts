/**
 * `@link(import:)` entries are checked at load as the link spec and Apollo's
 * composition check them: one element imported under two names, and
 * malformed entries, refuse the supergraph (`SUPERGRAPH_INVALID`, naming the
 * `@link` url and the entry); what Apollo's and The Guild's composition
 * write (renames, the same import twice) still loads.
 */
import { readFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse, parseConstValue, print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../../src/compose/compose.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';

const RENAMED = readFileSync(new URL('./fixtures/import-renamed-supergraph.graphql', import.meta.url), 'utf8');
const INACCESSIBLE = 'https://specs.apollo.dev/inaccessible/v0.2';
const HIDDEN_LINK = `@link(url: "${INACCESSIBLE}", for: SECURITY, import: [{name: "@inaccessible", as: "@hidden"}])`;

function invalid(sdl: string): { code?: string; message: string } {
  try {
    readSupergraph(sdl);
  } catch (error) {
    return error as { code?: string; message: string };
  }
  throw new Error('readSupergraph accepted the supergraph');
}

/** The renamed fixture with the inaccessible spec's `@link` replaced by `links`. */
const withInaccessibleLinks = (links: string): string => {
  expect(RENAMED).toContain(HIDDEN_LINK);
  return RENAMED.replace(HIDDEN_LINK, links);
};

/** The renamed fixture with the inaccessible spec's `import:` list replaced by `imports`. */
const withInaccessibleImports = (imports: string): string => withInaccessibleLinks(`@link(url: "${INACCESSIBLE}", for: SECURITY, import: [${imports}])`);

const hiddenFields = (sdl: string): string[] => {
  const fields = readSupergraph(sdl).types.get('Query')?.fields;
  return [...(fields?.values() ?? [])].filter((f) => f.inaccessible).map((f) => f.name);
};

describe('one element imported under two names', () => {
  it.each([
    ['by one @link, plain then renamed', '"@inaccessible", {name: "@inaccessible", as: "@hidden"}', '@inaccessible as @hidden, but it also imports @inaccessible as @inaccessible'],
    [
      'by one @link, renamed twice',
      '{name: "@inaccessible", as: "@hidden"}, {name: "@inaccessible", as: "@secret"}',
      '@inaccessible as @secret, but it also imports @inaccessible as @hidden',
    ],
    [
      'by one @link, renamed then plain ({ name } alone)',
      '{name: "@inaccessible", as: "@hidden"}, {name: "@inaccessible"}',
      '@inaccessible as @inaccessible, but it also imports @inaccessible as @hidden',
    ],
  ])('refuses it %s', (_, imports, says) => {
    const error = invalid(withInaccessibleImports(imports));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toContain(`invalid supergraph: @link(url: "${INACCESSIBLE}") imports ${says}: one directive under two names`);
  });

  it('refuses it by two @links to the same spec, imported or brought in under its own name', () => {
    for (const first of [`@link(url: "${INACCESSIBLE}", import: ["@inaccessible"])`, `@link(url: "https://specs.apollo.dev/inaccessible/v0.1")`]) {
      const error = invalid(withInaccessibleLinks(`${first} ${HIDDEN_LINK}`));
      expect(error.code).toBe('SUPERGRAPH_INVALID');
      const url = /url: "([^"]+)"/.exec(first)?.[1];
      expect(error.message).toContain(`@link(url: "${INACCESSIBLE}") imports @inaccessible as @hidden, but @link(url: "${url}") also imports @inaccessible as @inaccessible`);
    }
  });

  it('refuses a type imported under two names', () => {
    const link = '@link(url: "https://specs.apollo.dev/link/v1.0")';
    expect(RENAMED).toContain(link);
    const error = invalid(RENAMED.replace(link, '@link(url: "https://specs.apollo.dev/link/v1.0", import: ["Purpose", {name: "Purpose", as: "LinkPurpose"}])'));
    expect(error).toMatchObject({
      code: 'SUPERGRAPH_INVALID',
      message: expect.stringContaining(
        '@link(url: "https://specs.apollo.dev/link/v1.0") imports Purpose as LinkPurpose, but it also imports Purpose as Purpose: one type under two names',
      ),
    });
  });

  it('tolerates the same import written twice identically, as Apollo composition does', () => {
    for (const imports of ['{name: "@inaccessible", as: "@hidden"}, {name: "@inaccessible", as: "@hidden"}']) {
      expect(hiddenFields(withInaccessibleImports(imports))).toEqual(['secret', 'internal']);
    }
    const plain = withInaccessibleImports('"@inaccessible", "@inaccessible", {name: "@inaccessible"}, {name: "@inaccessible", as: "@inaccessible"}').replaceAll(
      '@hidden',
      '@inaccessible',
    );
    expect(hiddenFields(plain)).toEqual(['secret', 'internal']);
  });
});

describe('malformed import entries', () => {
  it.each([
    ['"@"', '"@" is not a GraphQL name'],
    ['"@1x"', '"@1x" is not a GraphQL name'],
    ['"@a b"', '"@a b" is not a GraphQL name'],
    ['""', '"" is not a GraphQL name'],
    ['{name: "@"}', '"@" is not a GraphQL name'],
    ['{name: "@inaccessible", as: "@1x"}', '"@1x" is not a GraphQL name'],
    ['{name: "@inaccessible", as: "hidden"}', 'a directive must be renamed to a directive (with @) and a type to a type (without @)'],
    ['{name: "Purpose", as: "@Purpose"}', 'a directive must be renamed to a directive (with @) and a type to a type (without @)'],
    ['42', 'an import is a string or an object { name: "...", as: "..." }'],
    ['INACCESSIBLE', 'an import is a string or an object { name: "...", as: "..." }'],
    ['["@inaccessible"]', 'an import is a string or an object { name: "...", as: "..." }'],
    ['null', 'an import is a string or an object { name: "...", as: "..." }'],
    ['{name: 1, as: "@hidden"}', '"name" must be a string'],
    ['{name: "@inaccessible", as: null}', '"as" must be a string'],
    ['{as: "@hidden"}', 'it renames to "@hidden" but names nothing to import'],
    ['{}', 'it names nothing to import'],
    ['{name: "@inaccessible", as: "@hidden", for: "x"}', 'unknown key "for" (an import has only name and as)'],
    ['{name: "@tag", name: "@inaccessible", as: "@hidden"}', '"name" is given twice'],
  ])('refuses %s', (entry, reason) => {
    const error = invalid(withInaccessibleImports(entry));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toContain(`invalid supergraph: @link(url: "${INACCESSIBLE}") import ${print(parseConstValue(entry))}: ${reason}`);
  });

  it('reads an import: written without brackets as a list of one (input coercion), and refuses malformed imports of a @link to another spec', () => {
    // The rename is undone as in the bracketed form: the fields under @hidden stay hidden.
    const single = withInaccessibleLinks(`@link(url: "${INACCESSIBLE}", for: SECURITY, import: {name: "@inaccessible", as: "@hidden"})`);
    expect(hiddenFields(single)).toEqual(hiddenFields(RENAMED));
    expect(hiddenFields(single).length).toBeGreaterThan(0);
    expect(invalid(withInaccessibleLinks(`@link(url: "${INACCESSIBLE}", import: "@1x")`))).toMatchObject({ code: 'SUPERGRAPH_INVALID' });
    const foreign = withInaccessibleLinks(`${HIDDEN_LINK} @link(url: "https://example.com/mine/v1.0", import: ["@1x"])`);
    expect(invalid(foreign)).toMatchObject({ code: 'SUPERGRAPH_INVALID', message: expect.stringContaining('@link(url: "https://example.com/mine/v1.0") import "@1x"') });
  });
});

describe('what composition writes still loads', () => {
  const SUBGRAPH = (imports: string) => /* GraphQL */ `
    extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: [${imports}])
    type Query { pub: String secret: String @hidden priv: String @scopes(scopes: [["read"]]) }
  `;
  const IMPORTS = '"@key", "@key", {name: "@inaccessible", as: "@hidden"}, {name: "@inaccessible", as: "@hidden"}, {name: "@requiresScopes", as: "@scopes"}';

  it("Apollo's composition, with renames and the same import twice", () => {
    const composed = composeServices([{ name: 'a', url: 'http://127.0.0.1:1/graphql', typeDefs: parse(SUBGRAPH(IMPORTS)) }]);
    expect(composed.errors).toBeUndefined();
    const supergraph = readSupergraph(composed.supergraphSdl ?? '');
    const fields = supergraph.types.get('Query')?.fields;
    expect(fields?.get('secret')?.inaccessible).toBe(true);
    expect(
      supergraph.schema
        .getQueryType()
        ?.getFields()
        .priv?.astNode?.directives?.map((d) => d.name.value),
    ).toEqual(['requiresScopes']);
  });

  it("Apollo's composition refuses the same forms this router refuses", () => {
    for (const imports of [
      '"@inaccessible", {name: "@inaccessible", as: "@hidden"}',
      '{name: "@inaccessible", as: "hidden"}',
      '{name: "@inaccessible", as: "@hidden", x: "y"}',
      '"@1x"',
    ]) {
      const composed = composeServices([{ name: 'a', url: 'http://127.0.0.1:1/graphql', typeDefs: parse(SUBGRAPH(`${imports}, {name: "@requiresScopes", as: "@scopes"}`)) }]);
      expect(composed.errors?.length, imports).toBeGreaterThan(0);
    }
  });

  it("The Guild's composition (switchyard compose), with renames and the same import twice", () => {
    const { supergraphSdl } = composeSubgraphs([{ name: 'a', url: 'http://127.0.0.1:1/graphql', sdl: SUBGRAPH(IMPORTS) }]);
    expect(readSupergraph(supergraphSdl).types.get('Query')?.fields.get('secret')?.inaccessible).toBe(true);
  });
});
