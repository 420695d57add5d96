/**
 * Hostile documents: fragment fan-out (2^N fields from N fragments), cycles,
 * text nested thousands of levels deep, comments used to dodge `max_tokens`,
 * introspection reached through an envelop plugin's validation rules, and
 * large invalid documents sent to fill the caches. The checks must be linear
 * in the document's size, answer 400 (never 500), and keep nothing of a
 * refused document.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Plugin as EnvelopPlugin } from '@envelop/core';
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import fc from 'fast-check';
import { buildSchema, Kind, Lexer, parse, Source, specifiedRules, TokenKind, type DocumentNode, type SelectionSetNode, type ValidationRule } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useAutomaticPersistedQueries } from '../../plugins/automatic-persisted-queries/index.js';
import { coreConfigSchema } from '../../src/kernel/config/core-schema.js';
import { parseConfigValue } from '../../src/kernel/config/load-config.js';
import { normalizeOperation, selectOperation, type NSelection } from '../../src/kernel/plan/normalize.js';
import { MAX_NESTING, scanDocument } from '../../src/kernel/router/document-scan.js';
import { DocumentCache } from '../../src/kernel/router/execution-engine.js';
import { checkConfiguredLimits, checkDocumentShape, measureDocument, SATURATED } from '../../src/kernel/router/request-limits.js';
import { sha256Hex } from '../../src/operations/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';

const defaults = parseConfigValue(coreConfigSchema, { version: '1' }).limits;

/** `fragment F0 { ...F1 ...F1 } ... fragment F{n-1} { __typename }`: 2^(n-1) fields once expanded, from n lines. */
function fanOut(levels: number, leaf = '__typename'): string {
  const lines = ['query FanOut { ...F0 }'];
  for (let i = 0; i < levels - 1; i++) lines.push(`fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  lines.push(`fragment F${levels - 1} on Query { ${leaf} }`);
  return lines.join('\n');
}

/** The same shape as `fanOut`, each fragment spreading the next once beside a field: N fields once expanded. */
function chain(levels: number, leaf = '__typename'): string {
  const lines = ['query FanOut { ...F0 }'];
  for (let i = 0; i < levels - 1; i++) lines.push(`fragment F${i} on Query { ...F${i + 1} z${i + 1}abc }`);
  lines.push(`fragment F${levels - 1} on Query { ${leaf} }`);
  return lines.join('\n');
}

/** Selections written in the document (fields, inline fragments, spreads), each once. */
function writtenSelections(document: DocumentNode): number {
  let count = 0;
  const visit = (set: SelectionSetNode): void => {
    for (const selection of set.selections) {
      count++;
      if (selection.kind !== Kind.FRAGMENT_SPREAD && selection.selectionSet) visit(selection.selectionSet);
    }
  };
  for (const definition of document.definitions) if ('selectionSet' in definition && definition.selectionSet) visit(definition.selectionSet);
  return count;
}

// --- Generated fragment graphs -------------------------------------------------------------------------------------

/**
 * A selection: a leaf (`x`, `y`, maybe aliased), an object field (`a`, `b`
 * with a sub-selection), an inline fragment, or a spread of a later fragment
 * (a DAG: fragment i spreads only fragments after i; `target` picks one).
 */
type Item =
  | { kind: 'leaf'; name: string; alias: string | null }
  | { kind: 'object'; name: string; alias: string | null; items: Item[] }
  | { kind: 'inline'; items: Item[] }
  | { kind: 'spread'; target: number };

const itemArbitrary = fc.letrec<{ item: Item; items: Item[] }>((tie) => ({
  item: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('leaf' as const), name: fc.constantFrom('x', 'y'), alias: fc.option(fc.constantFrom('lx', 'ly')) }),
    fc.record({ kind: fc.constant('spread' as const), target: fc.nat() }),
    fc.record({ kind: fc.constant('spread' as const), target: fc.nat() }),
    fc.record({ kind: fc.constant('object' as const), name: fc.constantFrom('a', 'b'), alias: fc.option(fc.constantFrom('oa', 'ob')), items: tie('items') }),
    fc.record({ kind: fc.constant('inline' as const), items: tie('items') }),
  ),
  items: fc.array(tie('item'), { minLength: 1, maxLength: 4 }),
}));

/** A document: an operation and 1-10 fragments, spreads resolved to later fragments. */
const fragmentGraph = fc.tuple(fc.array(itemArbitrary.items, { minLength: 1, maxLength: 10 }), itemArbitrary.items).map(([fragments, operation]) => {
  const print = (items: Item[], self: number): string =>
    items
      .map((item) => {
        if (item.kind === 'leaf') return `${item.alias ? `${item.alias}: ` : ''}${item.name}`;
        if (item.kind === 'object') return `${item.alias ? `${item.alias}: ` : ''}${item.name} { ${print(item.items, self)} }`;
        if (item.kind === 'inline') return `... { ${print(item.items, self)} }`;
        const later = fragments.length - self - 1;
        return later > 0 ? `...F${self + 1 + (item.target % later)}` : 'x';
      })
      .join(' ');
  return [`query Q { ${print(operation, -1)} }`, ...fragments.map((items, i) => `fragment F${i} on Query { ${print(items, i)} }`)].join('\n');
});

/** Figures by expanding every spread again (the definition of the limits); undefined past `budget` steps. */
function expandNaively(document: DocumentNode, budget = 200_000): { fields: number; aliases: number; fragments: number; depth: number } | undefined {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  const figures = { fields: 0, aliases: 0, fragments: 0, depth: 0 };
  let steps = 0;
  const visit = (set: SelectionSetNode, depth: number): boolean => {
    for (const selection of set.selections) {
      if (++steps > budget) return false;
      if (selection.kind === Kind.FIELD) {
        figures.fields++;
        if (selection.alias) figures.aliases++;
        figures.depth = Math.max(figures.depth, depth + 1);
        if (selection.selectionSet && !visit(selection.selectionSet, depth + 1)) return false;
      } else {
        figures.fragments++;
        const inner = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)!;
        if (!visit(inner, depth)) return false;
      }
    }
    return true;
  };
  return visit(selectOperation(document, undefined).selectionSet, 0) ? figures : undefined;
}

/** Every field is of type Query, every fragment applies: a schema for normalizing generated documents. */
const flatSchema = { isObjectType: () => true, fieldType: () => 'Query', satisfies: () => true };

type Tree = Array<[string, Tree | null]>;

/** The merged field tree by naive expansion: first occurrence of a response key decides leaf or object. */
function mergeNaively(document: DocumentNode): Tree {
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d.selectionSet] as const] : [])));
  type Node = Map<string, Node | null>;
  const root: Node = new Map();
  // Children are merged level by level, as GraphQL's CollectFields does: all of a level first, then each field's sets in order.
  const level = (sets: SelectionSetNode[], into: Node): void => {
    const pending = new Map<string, SelectionSetNode[]>();
    const collect = (set: SelectionSetNode): void => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          if (!into.has(key)) into.set(key, selection.selectionSet ? new Map() : null);
          if (selection.selectionSet && into.get(key)) pending.set(key, [...(pending.get(key) ?? []), selection.selectionSet]);
        } else {
          collect(selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)!);
        }
      }
    };
    for (const set of sets) collect(set);
    for (const [key, childSets] of pending) level(childSets, into.get(key)!);
  };
  level([selectOperation(document, undefined).selectionSet], root);
  const toTree = (node: Node): Tree => [...node].map(([key, child]) => [key, child ? toTree(child) : null]);
  return toTree(root);
}

function normalizedTree(selections: readonly NSelection[]): Tree {
  return selections.flatMap(
    (selection): Tree =>
      selection.kind === 'Field' ? [[selection.responseKey, selection.selections ? normalizedTree(selection.selections) : null]] : normalizedTree(selection.selections),
  );
}

function sortTree(tree: Tree): Tree {
  return tree.map(([key, child]): [string, Tree | null] => [key, child ? sortTree(child) : null]).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** A full collection (twice: what the first finalizes, the second frees). */
function collectGarbage(): void {
  gc();
  gc();
}

/** Smallest of `runs` timings of `work`, repeated until it took at least 20 ms (loaded machines: take the best). */
function bestTime(work: () => void, runs = 5): number {
  let best = Infinity;
  for (let run = 0; run < runs; run++) {
    let repeats = 0;
    const started = performance.now();
    do {
      work();
      repeats++;
    } while (performance.now() - started < 20);
    best = Math.min(best, (performance.now() - started) / repeats);
  }
  return best;
}

describe('the document measure', () => {
  it('agrees with naive fragment expansion, saturating instead of overflowing', () => {
    fc.assert(
      fc.property(fragmentGraph, (text) => {
        const document = parse(text);
        const naive = expandNaively(document);
        const figures = measureDocument(document);
        expect(figures.cycle).toBeUndefined();
        if (naive) expect({ fields: figures.fields, aliases: figures.aliases, fragments: figures.fragments, depth: figures.depth }).toEqual(naive);
        else expect(figures.fields + figures.fragments).toBeGreaterThan(100_000);
      }),
      { numRuns: 300 },
    );
    expect(measureDocument(parse(fanOut(2000))).fields).toBe(SATURATED);
  });

  it('visits each written selection and spread a bounded number of times, however much the fragments expand', () => {
    fc.assert(
      fc.property(fragmentGraph, (text) => {
        const document = parse(text);
        expect(measureDocument(document).work).toBeLessThanOrEqual(3 * writtenSelections(document));
      }),
      { numRuns: 300 },
    );
    // 2^50 fields from 50 lines: work grows with the lines, not the fields.
    const small = measureDocument(parse(fanOut(50))).work;
    const large = measureDocument(parse(fanOut(200))).work;
    expect(large / small).toBeLessThan(4 * 1.5);
  });

  it('takes no longer on a document expanding to 2^N fields than on one of the same size expanding to N (pre-scan and measure)', () => {
    const time = (text: string): number => {
      let best = Infinity;
      for (let run = 0; run < 7; run++) {
        const document = parse(text); // graphql-js's own time left out; a fresh document each run (the measure is memoised)
        collectGarbage(); // so that no run pays for collecting what the others left
        const started = performance.now();
        scanDocument(text, { maxDepth: 0, maxTokens: 0 });
        checkConfiguredLimits(document, { ...defaults, max_fields: 0 });
        checkDocumentShape(document);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const exponential = fanOut(8000, 'x y z');
    const linear = chain(8000, 'x y z');
    expect(Math.abs(exponential.length - linear.length) / linear.length).toBeLessThan(0.05);
    time(linear);
    expect(time(exponential) / time(linear)).toBeLessThan(4);
  });

  it('refuses fragment cycles, direct or not, before anything follows them', () => {
    for (const text of [
      '{ ...A } fragment A on Query { x ...A }',
      '{ ...A } fragment A on Query { a { ...B } } fragment B on Query { ... { ...C } } fragment C on Query { ...A }',
      '{ x } fragment U on Query { ...V } fragment V on Query { ...U }',
    ]) {
      expect(() => checkDocumentShape(parse(text))).toThrow(/Cannot spread fragment "\w+" within itself/);
    }
  });

  it('follows a chain of fragments as long as the body allows without recursion', () => {
    const levels = 30_000;
    const lines = ['{ ...F0 }'];
    for (let i = 0; i < levels - 1; i++) lines.push(`fragment F${i} on Query { x ...F${i + 1} }`);
    lines.push(`fragment F${levels - 1} on Query { x }`);
    const figures = measureDocument(parse(lines.join('\n')));
    expect([figures.fields, figures.fragments, figures.depth]).toEqual([levels, levels, 1]);
  });

  it('counts field aliases and arguments as written, again at every spread, and refuses them past 8 MiB expanded (or twice the document)', () => {
    const big = 'x'.repeat(100_000);
    const spread = (times: number) =>
      `{ ${Array.from({ length: times }, (_, i) => `a${i}: product { ...F }`).join(' ')} } fragment F on Product { name(with: "${big}") price(cents: 1) }`;
    // Per spread: `with: "x..."` and `cents: 1`; and each alias `aN` once.
    expect(measureDocument(parse(spread(3))).printedText).toBe(3 * (big.length + 8 + 8) + 3 * 2);
    expect(() => checkDocumentShape(parse(spread(80)))).not.toThrow();
    // 100 KB in a fragment spread 400 times would be 40 MB of subgraph operation text.
    expect(() => checkDocumentShape(parse(spread(400)))).toThrow(
      /^The operation's field aliases and arguments come to 4000\d{4} characters once its fragments are expanded; the router accepts at most 8388608\.$/,
    );
    // A long alias multiplies the same way.
    const alias = 'y'.repeat(100_000);
    const aliased = `{ ${Array.from({ length: 400 }, (_, i) => `a${i}: product { ...G }`).join(' ')} } fragment G on Product { ${alias}: name }`;
    expect(() => checkDocumentShape(parse(aliased))).toThrow(/field aliases and arguments come to 400\d{5} characters/);
    // Written out in full, a document never expands past twice its length, whatever its size.
    const written = `{ ${Array.from({ length: 100 }, (_, i) => `a${i}: product { name(with: "${big}") }`).join(' ')} }`;
    expect(() => checkDocumentShape(parse(written))).not.toThrow();
  });

  it('refuses a field other than __typename aliased __typename, anywhere, and takes __typename aliased to itself', () => {
    expect(() => checkDocumentShape(parse('{ things { ...F } } fragment F on Thing { __typename: title }'))).toThrow(
      'The alias "__typename" is given to the field "title": the router reads __typename itself, so only __typename may be aliased __typename.',
    );
    expect(() => checkDocumentShape(parse('{ things { __typename: __typename kind: __typename } }'))).not.toThrow();
  });
});

describe('the normalizer', () => {
  it('merges generated fragment graphs as naive expansion does', () => {
    fc.assert(
      fc.property(fragmentGraph, (text) => {
        const document = parse(text);
        fc.pre(expandNaively(document, 20_000) !== undefined);
        const normalized = normalizeOperation(document, selectOperation(document, undefined), 'Query', {}, flatSchema);
        expect(sortTree(normalizedTree(normalized.selections))).toEqual(sortTree(mergeNaively(document)));
      }),
      { numRuns: 300 },
    );
  });

  it('collects a fragment spread many times once per output list: 2^N written as N fragments costs what N does', () => {
    const normalize = (text: string) => {
      const document = parse(text.replace('query FanOut { ...F0 }', 'query FanOut { ...F0 } fragment Leaf on Query { y }'));
      return () => normalizeOperation(document, selectOperation(document, 'FanOut'), 'Query', {}, flatSchema);
    };
    const exponential = normalize(fanOut(800, 'x a { ...Leaf }'));
    const linear = normalize(chain(800, 'x a { ...Leaf }'));
    bestTime(linear);
    expect(bestTime(exponential) / bestTime(linear)).toBeLessThan(4);
  });
});

describe('the pre-scan', () => {
  it('skips strings, block strings (with escaped quotes) and comments, and counts comments as tokens', () => {
    const text = ['# { [ ( "', 'query Q($v: String = "} ] ) \\" {") {', '  a: echo(text: """ {{{ \\""" ((( """)', '  b: echo(text: "[[[")', '}'].join('\n');
    const scan = scanDocument(text, { maxDepth: 0, maxTokens: 0 });
    expect(scan.nesting).toBe(2);
    // # comment, query Q ( $ v : String = "..." ) { a : echo ( text : """...""" ) b : echo ( text : "..." ) }
    expect(scan.tokens).toBe(1 + 11 + 8 + 8 + 1);
    expect(() => scanDocument(text, { maxDepth: 0, maxTokens: scan.tokens - 1 })).toThrow(/more than \d+ tokens/);
    // Tokens as graphql-js counts them (it skips comments): names, numbers, punctuators, spreads.
    for (const source of ['{ x...F a(v: -1.5e+3, w: [1,2]) @skip(if: $v) }', 'query Q($id: ID! = "a") { b: book(id: $id) { ... on Book { id } } }']) {
      let tokens = 0;
      const lexer = new Lexer(new Source(source));
      while (lexer.advance().kind !== TokenKind.EOF) tokens++;
      expect(scanDocument(source, { maxDepth: 0, maxTokens: 0 }).tokens, source).toBe(tokens);
    }
  });

  it(`refuses nesting beyond ${MAX_NESTING} levels of braces, brackets and parentheses`, () => {
    const deep = (n: number) => `${'{a'.repeat(n)}${'}'.repeat(n)}`;
    expect(scanDocument(deep(MAX_NESTING), { maxDepth: 0, maxTokens: 0 }).nesting).toBe(MAX_NESTING);
    expect(() => scanDocument(deep(MAX_NESTING + 1), { maxDepth: 0, maxTokens: 0 })).toThrow(expect.objectContaining({ code: 'GRAPHQL_PARSE_FAILED', status: 400 }));
    expect(() => scanDocument(deep(MAX_NESTING + 1), { maxDepth: 10, maxTokens: 0 })).toThrow(expect.objectContaining({ code: 'MAX_DEPTH_EXCEEDED', status: 400 }));
    expect(() => scanDocument(`{ a(v: ${'['.repeat(5000)}) }`, { maxDepth: 10, maxTokens: 0 })).toThrow(expect.objectContaining({ code: 'GRAPHQL_PARSE_FAILED' }));
  });
});

describe('a router under hostile documents', () => {
  let library: TestSubgraph;
  let router: TestRouter;
  let strict: TestRouter;
  let unlimited: TestRouter;

  beforeAll(async () => {
    library = await startSubgraph(librarySubgraph());
    router = await startTestRouter({ subgraphs: [library] });
    strict = await startTestRouter({ subgraphs: [library], config: { limits: { max_tokens: 60 } } });
    unlimited = await startTestRouter({ subgraphs: [library], config: { limits: { max_fields: 0 } } });
  });

  afterAll(async () => {
    await Promise.all([router?.close(), strict?.close(), unlimited?.close()]);
    await library?.close();
  });

  it('refuses 2^40 fields from 40 fragments at once, with MAX_FIELDS_EXCEEDED, and keeps answering others meanwhile', async () => {
    const started = performance.now();
    const [fanned, typename] = await Promise.all([router.query(fanOut(40)), router.query('{ __typename }')]);
    expect(fanned.status).toBe(400);
    expect(fanned.body.errors?.[0]?.extensions?.code).toBe('MAX_FIELDS_EXCEEDED');
    expect(fanned.body.errors?.[0]?.message).toMatch(/selects \d+ fields once its fragments are expanded; the limit is 5000/);
    expect(typename).toMatchObject({ status: 200, body: { data: { __typename: 'Query' } } });
    // Generous: the unbounded expansion took 12 s at 22 levels; 40 levels would take days.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(library.calls).toHaveLength(0);
  });

  it('refuses a long chain of fragments spread from many places (expansion work, not fields), within max_fields', async () => {
    const lines = [`{ ${Array.from({ length: 100 }, (_, i) => `b${i}: book(id: "b1") { ...C0 }`).join(' ')} }`];
    for (let i = 0; i < 99; i++) lines.push(`fragment C${i} on Book { ...C${i + 1} }`);
    lines.push('fragment C99 on Book { id }');
    const response = await router.query(lines.join('\n'));
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('MAX_FIELDS_EXCEEDED');
    expect(response.body.errors?.[0]?.message).toMatch(/applies \d+ fragments/);
  });

  it('refuses fragment cycles with 400 even with every limit off', async () => {
    const response = await unlimited.query('{ ...A } fragment A on Query { __typename ...B } fragment B on Query { ...A }');
    expect(response.status).toBe(400);
    expect(response.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });

  it('plans 2^30 fields written as 30 fragments in linear time when max_fields is 0 (opted out)', async () => {
    const response = await unlimited.query(fanOut(30, '__typename books { id }'));
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ __typename: 'Query', books: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }] });
  });

  it('answers 400, not 500, to 2,000 nested selections, lists or objects, and to fragments nesting fields too deep', async () => {
    const deep = `{${'a{'.repeat(2000)}b${'}'.repeat(2000)}}`;
    for (const query of [deep, `{ echo(text: ${'['.repeat(2000)}"x"${']'.repeat(2000)}) }`, `{ echo(text: ${'{a:'.repeat(2000)}1${'}'.repeat(2000)}) }`]) {
      const response = await router.query(query);
      expect(response.status, query.slice(0, 20)).toBe(400);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    }
    const depthLimited = await startTestRouter({ subgraphs: [library], config: { limits: { max_depth: 10 } } });
    try {
      const limited = await depthLimited.query(deep);
      expect([limited.status, limited.body.errors?.[0]?.extensions?.code]).toEqual([400, 'MAX_DEPTH_EXCEEDED']);
    } finally {
      await depthLimited.close();
    }
    // Depth through fragments: each fragment one level deeper, none deep in its own text.
    const lines = ['{ book(id: "b1") { ...D0 } }'];
    for (let i = 0; i < 399; i++) lines.push(`fragment D${i} on Book { author { ...D${i + 1} } }`);
    lines.push('fragment D399 on Book { id }');
    const chained = await router.query(lines.join('\n'));
    expect(chained.status).toBe(400);
    expect(chained.body.errors?.[0]?.message).toMatch(/nests fields 401 levels deep once its fragments are expanded/);
    // Text nested 200 levels is still parsed (and then judged on its merits).
    const fine = await router.query(`{${'... on Query {'.repeat(200)} __typename ${'}'.repeat(200)}}`);
    expect(fine).toMatchObject({ status: 200, body: { data: { __typename: 'Query' } } });
  });

  it('counts comments toward limits.max_tokens', async () => {
    const query = '{ books { id title } }';
    expect((await strict.query(query)).status).toBe(200);
    const commented = `${'# a comment\n'.repeat(60)}${query}`;
    const response = await strict.query(commented);
    expect([response.status, response.body.errors?.[0]?.extensions?.code]).toEqual([400, 'MAX_TOKENS_EXCEEDED']);
  });

  it('does not keep invalid documents: memory after 50 distinct ~1 MB invalid documents stays within 150 MB', async () => {
    const measure = () => {
      collectGarbage();
      return process.memoryUsage().heapUsed;
    };
    // ~20,000 list items (some 10 MB of AST each) and a long string: valid syntax, within max_fields, unknown field.
    const document = (i: number) => `{ nope${i}(values: [${'1 '.repeat(20_000)}]) echo(text: "${'x'.repeat(900_000)}") }`;
    await router.query(document(999));
    const before = measure();
    for (let i = 0; i < 50; i++) {
      const response = await router.query(document(i));
      expect(response.status).toBe(400);
      expect(response.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    }
    const grown = measure() - before;
    expect(grown / 1024 / 1024).toBeLessThan(150);
  });

  it('keeps a valid document parsed once', async () => {
    const query = `{ ${Array.from({ length: 50 }, (_, i) => `e${i}: echo(text: "${i}")`).join(' ')} }`;
    const parses: DocumentNode[] = [];
    const spy = await startTestRouter({
      subgraphs: [library],
      plugins: [{ name: 'spy', setup: () => ({ hooks: { onParse: () => (after) => void parses.push(after.output) } }) }],
    });
    try {
      expect((await spy.query(query)).status).toBe(200);
      expect((await spy.query(query)).status).toBe(200);
      expect(parses).toHaveLength(2);
      expect(parses[1]).toBe(parses[0]);
      const invalid = '{ nope }';
      await spy.query(invalid);
      await spy.query(invalid);
      expect(parses[3]).not.toBe(parses[2]);
    } finally {
      await spy.close();
    }
  });
});

describe('introspection off with envelop plugins installed', () => {
  let library: TestSubgraph;
  const routers: TestRouter[] = [];

  beforeAll(async () => {
    library = await startSubgraph(librarySubgraph());
  });

  afterAll(async () => {
    await Promise.all(routers.map((r) => r.close()));
    await library?.close();
  });

  async function withEnvelop(plugins: EnvelopPlugin[], apq = false): Promise<TestRouter> {
    const router = await startTestRouter({
      subgraphs: [library],
      config: { introspection: { enabled: false } },
      plugins: [...(apq ? [useAutomaticPersistedQueries({ enabled: true })] : []), { name: 'envelop-plugins', setup: () => ({ envelop: plugins }) }],
    });
    routers.push(router);
    return router;
  }

  const introspections = [
    '{ __schema { types { name } } }',
    '{ __type(name: "Book") { fields { name } } }',
    'query { ...I } fragment I on Query { __schema { queryType { name } } }',
  ];

  it('refuses __schema and __type on /graphql, through router.execute and APQ with graphql-armor installed', async () => {
    const router = await withEnvelop([blockFieldSuggestionsPlugin()], true);
    for (const query of introspections) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const http = await router.query(query);
        expect(http.status, query).toBe(400);
        expect(http.body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
        expect(JSON.stringify(http.body)).not.toContain('Book"');
        const executed = await router.router.execute({ query });
        expect(executed.status, query).toBe(400);
        expect(executed.body.data).toBeUndefined();
        const apq = await router.query({ query, extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(query) } } });
        expect(apq.status).toBe(400);
      }
    }
    // The plugin still works: suggestions are masked; ordinary queries answer.
    const typo = await router.query('{ boks { id } }');
    expect(typo.body.errors?.[0]?.message).toContain('[Suggestion hidden]');
    expect((await router.query('{ __typename books { id } }')).body).toEqual({ data: { __typename: 'Query', books: [{ id: 'b1' }, { id: 'b2' }, { id: 'b3' }] } });
  });

  it('refuses them when a plugin adds its own validation rule, and when one clears the validation result', async () => {
    const addsRule: EnvelopPlugin = { onValidate: ({ addValidationRule }) => addValidationRule(() => ({})) };
    const clearsResult: EnvelopPlugin = {
      onValidate:
        () =>
        ({ setResult }) =>
          setResult([]),
    };
    library.reset();
    for (const plugins of [[addsRule], [clearsResult], [addsRule, blockFieldSuggestionsPlugin()]]) {
      const router = await withEnvelop(plugins);
      for (const query of introspections) {
        const response = await router.query(query);
        expect(response.status, query).toBe(400);
        expect(response.body.errors?.[0]?.message).toMatch(/introspection has been disabled/);
        expect((await router.router.execute({ query })).status).toBe(400);
      }
    }
    expect(library.calls).toHaveLength(0);
  });

  it("validates envelop's copy of the standard rules from the cache, with the introspection rule added to any other set", () => {
    const config = parseConfigValue(coreConfigSchema, { version: '1', introspection: { enabled: false } });
    const documents = new DocumentCache(config);
    let validations = 0;
    // graphql-js's validate reads __validationErrors once a call: a count of the validations that really ran.
    const schema = new Proxy(buildSchema('type Query { a: String }'), {
      get(target, key, receiver) {
        if (key === '__validationErrors') validations++;
        return Reflect.get(target, key, receiver);
      },
    });
    const document = documents.parse('{ a }');
    for (let i = 0; i < 3; i++) expect(documents.validate(schema, document, [...specifiedRules])).toEqual([]);
    expect(validations).toBe(1);
    const introspection = documents.parse('{ __schema { queryType { name } } }');
    expect(documents.validate(schema, introspection, [...specifiedRules])[0]?.message).toMatch(/introspection has been disabled/);
    const custom: ValidationRule = () => ({});
    expect(documents.validate(schema, introspection, [...specifiedRules, custom])[0]?.message).toMatch(/introspection has been disabled/);
    expect(documents.validate(schema, introspection, [custom])[0]?.message).toMatch(/introspection has been disabled/);
  });

  it('does not register an APQ text that was refused', async () => {
    const router = await withEnvelop([], true);
    const query = '{ __schema { types { name } } }';
    const hash = sha256Hex(query);
    expect((await router.query({ query, extensions: { persistedQuery: { version: 1, sha256Hash: hash } } })).status).toBe(400);
    const hashOnly = await router.query({ extensions: { persistedQuery: { version: 1, sha256Hash: hash } } });
    expect(hashOnly.body.errors?.[0]?.extensions?.code).toBe('PERSISTED_QUERY_NOT_FOUND');
  });
});
