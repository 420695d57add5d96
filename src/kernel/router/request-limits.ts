import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';
import type { LimitsConfig } from '../config/core-schema.js';
import { RouterError } from '../errors.js';
import { MAX_NESTING } from './document-scan.js';

/**
 * What a document expands to, per operation (the largest operation's figures).
 * Counts are after fragment expansion: a spread counts its fragment again.
 */
export interface DocumentMeasure {
  /** Deepest field nesting. */
  readonly depth: number;
  readonly aliases: number;
  readonly fields: number;
  /** Fragment spreads and inline fragments. */
  readonly fragments: number;
  /** Characters of field aliases and arguments as written (each field's alias, and from its first argument to its last): what the planner prints again for subgraphs wherever the field lands. */
  readonly printedText: number;
  /** The first field aliased `__typename` that is not `__typename` (`__typename: title`), by its name. */
  readonly typenameAlias: string | undefined;
  /** The first `__schema` / `__type` field anywhere in the document. */
  readonly introspection: string | undefined;
  /** A fragment that spreads itself (directly or not); the other figures are then incomplete. */
  readonly cycle: string | undefined;
  /** Selections and spreads the measure visited: at most the document's size (tests read it). */
  readonly work: number;
}

/** Counts stop here: N fragments each spreading the next twice expand to 2^N fields. */
export const SATURATED = 1e15;

/** One definition's own figures, its fragment spreads not followed. */
interface Local {
  fields: number;
  aliases: number;
  fragments: number;
  depth: number;
  printedText: number;
  /** Fragments spread (by index; -1: unknown), in order, and the field depth each spread sits at. */
  readonly spreads: number[];
  readonly spreadDepths: number[];
}

/** A definition's figures with its fragments expanded. */
interface Totals {
  readonly fields: number;
  readonly aliases: number;
  readonly fragments: number;
  readonly depth: number;
  readonly printedText: number;
}

const add = (a: number, b: number): number => Math.min(SATURATED, a + b);

const NEW = 0;
const IN_PROGRESS = 1;
const DONE = 2;

/**
 * Measures a document in one pass over its text's nodes plus a few steps per
 * fragment spread: each fragment's figures are computed once, after the
 * fragments it spreads (an explicit stack: no recursion, however long a
 * chain of fragments is), and reused at every spread.
 */
function measure(document: DocumentNode): DocumentMeasure {
  let work = 0;
  let introspection: string | undefined;
  let typenameAlias: string | undefined;
  const indexes = new Map<string, number>();
  const definitions: FragmentDefinitionNode[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION && !indexes.has(definition.name.value)) {
      indexes.set(definition.name.value, definitions.length);
      definitions.push(definition);
    }
  }
  const walk = (root: SelectionSetNode): Local => {
    const local: Local = { fields: 0, aliases: 0, fragments: 0, depth: 0, printedText: 0, spreads: [], spreadDepths: [] };
    const sets: SelectionSetNode[] = [root];
    const depths: number[] = [0];
    for (let set = sets.pop(); set; set = sets.pop()) {
      const at = depths.pop()!;
      for (const selection of set.selections) {
        work++;
        if (selection.kind === Kind.FIELD) {
          const depth = at + 1;
          local.fields++;
          if (selection.alias) {
            local.aliases++;
            local.printedText += selection.alias.value.length;
            if (typenameAlias === undefined && selection.alias.value === '__typename' && selection.name.value !== '__typename') typenameAlias = selection.name.value;
          }
          const args = selection.arguments;
          if (args && args.length > 0) local.printedText += (args[args.length - 1]!.loc?.end ?? 0) - (args[0]!.loc?.start ?? 0);
          if (depth > local.depth) local.depth = depth;
          const name = selection.name.value;
          if (introspection === undefined && (name === '__schema' || name === '__type')) introspection = name;
          if (selection.selectionSet) {
            sets.push(selection.selectionSet);
            depths.push(depth);
          }
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          local.fragments++;
          sets.push(selection.selectionSet);
          depths.push(at);
        } else {
          local.fragments++;
          local.spreads.push(indexes.get(selection.name.value) ?? -1);
          local.spreadDepths.push(at);
        }
      }
    }
    return local;
  };
  // Every definition is walked (a duplicate fragment name too, which validation refuses), for the introspection field.
  const locals: Local[] = [];
  const operations: Local[] = [];
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      const local = walk(definition.selectionSet);
      if (definitions[locals.length] === definition) locals.push(local);
    } else if (definition.kind === Kind.OPERATION_DEFINITION) {
      operations.push(walk(definition.selectionSet));
    }
  }

  const count = definitions.length;
  const fields = new Float64Array(count);
  const aliases = new Float64Array(count);
  const applied = new Float64Array(count);
  const depths = new Float64Array(count);
  const printedText = new Float64Array(count);
  const state = new Uint8Array(count);
  const cursor = new Uint32Array(count);
  const combine = (local: Local): Totals => {
    let { fields: f, aliases: a, fragments: n, depth: d, printedText: t } = local;
    for (let i = 0; i < local.spreads.length; i++) {
      work++;
      const inner = local.spreads[i]!;
      if (inner < 0) continue; // unknown fragment: validation refuses it
      f = add(f, fields[inner]!);
      a = add(a, aliases[inner]!);
      n = add(n, applied[inner]!);
      t = add(t, printedText[inner]!);
      d = Math.max(d, local.spreadDepths[i]! + depths[inner]!);
    }
    return { fields: f, aliases: a, fragments: n, depth: d, printedText: t };
  };
  // Depth-first over spreads, fragments finished after what they spread; an in-progress fragment met again is a cycle.
  let cycle: string | undefined;
  const stack: number[] = [];
  for (let start = 0; start < count && cycle === undefined; start++) {
    if (state[start] !== NEW) continue;
    state[start] = IN_PROGRESS;
    stack.push(start);
    while (stack.length > 0) {
      const fragment = stack[stack.length - 1]!;
      const spreads = locals[fragment]!.spreads;
      let target = -1;
      while (cursor[fragment]! < spreads.length) {
        const next = spreads[cursor[fragment]!++]!;
        work++;
        if (next >= 0 && state[next] !== DONE) {
          target = next;
          break;
        }
      }
      if (target >= 0 && state[target] === IN_PROGRESS) {
        cycle = definitions[target]!.name.value;
        break;
      }
      if (target >= 0) {
        state[target] = IN_PROGRESS;
        stack.push(target);
        continue;
      }
      const totals = combine(locals[fragment]!);
      fields[fragment] = totals.fields;
      aliases[fragment] = totals.aliases;
      applied[fragment] = totals.fragments;
      depths[fragment] = totals.depth;
      printedText[fragment] = totals.printedText;
      state[fragment] = DONE;
      stack.pop();
    }
  }

  let result: Totals = { fields: 0, aliases: 0, fragments: 0, depth: 0, printedText: 0 };
  if (cycle === undefined) {
    for (const operation of operations) {
      const figures = combine(operation);
      result = {
        fields: Math.max(result.fields, figures.fields),
        aliases: Math.max(result.aliases, figures.aliases),
        fragments: Math.max(result.fragments, figures.fragments),
        depth: Math.max(result.depth, figures.depth),
        printedText: Math.max(result.printedText, figures.printedText),
      };
    }
  }
  return { ...result, introspection, typenameAlias, cycle, work };
}

const measured = new WeakMap<DocumentNode, DocumentMeasure>();

/** The document's figures (computed once per document, in time linear in its size). */
export function measureDocument(document: DocumentNode): DocumentMeasure {
  let figures = measured.get(document);
  if (!figures) {
    figures = measure(document);
    measured.set(document, figures);
  }
  return figures;
}

function count(value: number): string {
  return value >= SATURATED ? `more than ${SATURATED}` : String(value);
}

/** Whether any of `limits.max_depth`, `max_aliases`, `max_fields` is set (0 = no limit). */
export function hasDocumentLimits(limits: LimitsConfig): boolean {
  return limits.max_depth > 0 || limits.max_aliases > 0 || limits.max_fields > 0;
}

/**
 * Refuses, with a 400, documents that nest fields deeper than
 * `limits.max_depth`, or use more aliases than `limits.max_aliases` or
 * select more fields than `limits.max_fields` once fragments are expanded
 * (each spread counting its fragment again). The fragment spreads and inline
 * fragments of that expansion are held to `max_fields` too, so that the work
 * of expanding a document (normalizing, planning) stays within the limit.
 * 0 = no limit. Linear in the document's size. The request-limits internal
 * plugin (builtins/request-limits.ts) runs it after parsing; the kernel then
 * runs `checkDocumentShape`. A document deeper than MAX_NESTING within
 * `max_depth` is left to the shape check, whose refusal comes before the
 * alias and field counts. Token counts are enforced before parsing
 * (document-scan.ts).
 */
export function checkConfiguredLimits(document: DocumentNode, limits: LimitsConfig): void {
  const figures = measureDocument(document);
  // A fragment cycle leaves the figures at 0: the shape check refuses it.
  if (limits.max_depth > 0 && figures.depth > limits.max_depth) {
    throw new RouterError('MAX_DEPTH_EXCEEDED', `The operation is ${figures.depth} levels deep; the limit is ${limits.max_depth}.`, { status: 400 });
  }
  if (figures.depth > MAX_NESTING) return;
  if (limits.max_aliases > 0 && figures.aliases > limits.max_aliases) {
    throw new RouterError('MAX_ALIASES_EXCEEDED', `The operation uses ${count(figures.aliases)} aliases; the limit is ${limits.max_aliases}.`, { status: 400 });
  }
  if (limits.max_fields > 0 && figures.fields > limits.max_fields) {
    throw new RouterError('MAX_FIELDS_EXCEEDED', `The operation selects ${count(figures.fields)} fields once its fragments are expanded; the limit is ${limits.max_fields}.`, {
      status: 400,
    });
  }
  if (limits.max_fields > 0 && figures.fragments > limits.max_fields) {
    throw new RouterError(
      'MAX_FIELDS_EXCEEDED',
      `The operation applies ${count(figures.fragments)} fragments (spreads and inline fragments) once they are expanded; the limit is ${limits.max_fields} (limits.max_fields).`,
      { status: 400 },
    );
  }
}

/**
 * Field aliases and arguments may come to this many characters once
 * fragments are expanded, or twice the document's length if that is more:
 * the planner writes them into the subgraph operation at every place the
 * field lands, so a large argument (or a long alias) in a fragment spread a
 * thousand times would make a subgraph request a thousand times the client's.
 */
export const MAX_EXPANDED_ARGUMENT_TEXT = 8 * 1024 * 1024;

/**
 * What the router refuses whatever the config says, before validation
 * (which, like the planner, walks the document recursively): fragments that
 * spread themselves, fields nested deeper than MAX_NESTING once fragments
 * are expanded, field aliases and arguments that expand past
 * MAX_EXPANDED_ARGUMENT_TEXT (a document written out in full never does),
 * and a field other than `__typename` aliased `__typename`.
 */
export function checkDocumentShape(document: DocumentNode): void {
  const figures = measureDocument(document);
  if (figures.cycle !== undefined) {
    throw new RouterError('GRAPHQL_VALIDATION_FAILED', `Cannot spread fragment "${figures.cycle}" within itself.`, { status: 400 });
  }
  if (figures.depth > MAX_NESTING) {
    throw new RouterError(
      'GRAPHQL_VALIDATION_FAILED',
      `The operation nests fields ${figures.depth} levels deep once its fragments are expanded; the router accepts at most ${MAX_NESTING}.`,
      {
        status: 400,
      },
    );
  }
  const allowed = Math.max(MAX_EXPANDED_ARGUMENT_TEXT, 2 * (document.loc?.end ?? 0));
  if (figures.printedText > allowed) {
    throw new RouterError(
      'GRAPHQL_VALIDATION_FAILED',
      `The operation's field aliases and arguments come to ${count(figures.printedText)} characters once its fragments are expanded; the router accepts at most ${allowed}.`,
      { status: 400 },
    );
  }
  if (figures.typenameAlias !== undefined) {
    // The router reads `__typename` itself (types of abstract fields, entity representations): a client value there would be taken for the type.
    throw new RouterError(
      'GRAPHQL_VALIDATION_FAILED',
      `The alias "__typename" is given to the field "${figures.typenameAlias}": the router reads __typename itself, so only __typename may be aliased __typename.`,
      { status: 400 },
    );
  }
}

/**
 * With introspection off, refuses a document that names `__schema` or
 * `__type` anywhere: the last word, whatever validation rules plugins set.
 */
export function checkIntrospection(document: DocumentNode, enabled: boolean): void {
  if (enabled) return;
  const field = measureDocument(document).introspection;
  if (field !== undefined) {
    throw new RouterError('GRAPHQL_VALIDATION_FAILED', `GraphQL introspection has been disabled, but the requested query contained the field "${field}".`, {
      status: 400,
    });
  }
}

/** Whether `error` is V8's stack overflow (graphql-js parses, validates and the planner walks recursively). */
export function isStackOverflow(error: unknown): error is RangeError {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** The 400 a stack overflow while parsing, validating or planning becomes (a backstop; document checks come first). */
export function nestedTooDeeply(stage: 'parse' | 'validate' | 'plan'): RouterError {
  return new RouterError(
    stage === 'parse' ? 'GRAPHQL_PARSE_FAILED' : 'GRAPHQL_VALIDATION_FAILED',
    `The operation is nested too deeply to ${stage === 'parse' ? 'parse' : stage === 'validate' ? 'validate' : 'plan'}.`,
    { status: 400 },
  );
}
