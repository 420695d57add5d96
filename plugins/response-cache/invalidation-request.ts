import { indexIds } from './index-ids.js';
import type { IndexSwitches } from './options.js';

/** One problem with one element of an invalidation request (the 400 body's items). */
export interface ElementError {
  /** Position of the element in the request array. */
  readonly index: number;
  /** The element's `kind` as sent (`unknown` when it had none). */
  readonly kind: string;
  readonly message: string;
}

/** A `__typename` a `type` element names, with its subgraph. */
export interface NamedType {
  readonly subgraph: string;
  readonly type: string;
}

/**
 * Errors listed in a 400 answer at most: a 1 MB body of bad elements would
 * otherwise answer with half a million of them (some 50 MB). The rest are
 * counted in `notListed` (`errors_not_listed` in the answer).
 */
export const MAX_LISTED_ERRORS = 100;

/** A validated request: the indexes to clear, or the problems found (the first `MAX_LISTED_ERRORS`, and how many more). */
export type ElementsCheck =
  | { readonly ok: true; readonly indexes: string[]; readonly types: ReadonlyArray<NamedType> }
  | { readonly ok: false; readonly errors: ElementError[]; readonly notListed: number };

const KINDS = ['subgraph', 'type', 'cache_tag'] as const;
type Kind = (typeof KINDS)[number];

/** Fields each kind takes (besides `kind`). */
const FIELDS: Readonly<Record<Kind, readonly string[]>> = {
  subgraph: ['subgraph'],
  type: ['subgraph', 'type'],
  cache_tag: ['subgraphs', 'cache_tag'],
};

/** The switch that keeps each kind's index. */
const SWITCH: Readonly<Record<Kind, keyof IndexSwitches>> = { subgraph: 'subgraph', type: 'type', cache_tag: 'cache_tag' };

/**
 * Validates every element before anything is removed: a known kind whose
 * index is switched on, its required fields, no unknown fields, and
 * subgraph names the graph has (`subgraphs` undefined: no graph loaded).
 * A `type` the graph lacks is no error (entities of a type a reload removed
 * may still be cached and need removing): the types named are returned so
 * the endpoint can warn about a misspelt one.
 */
export function checkElements(elements: readonly unknown[], subgraphs: ReadonlySet<string> | undefined, switches: IndexSwitches): ElementsCheck {
  const errors: ElementError[] = [];
  let problems = 0;
  const indexes = new Set<string>();
  const types = new Map<string, NamedType>();
  const graphHas = subgraphs === undefined ? '' : [...subgraphs].sort().join(', ');
  elements.forEach((element, index) => {
    const fail = (kind: string, message: string) => {
      problems++;
      if (errors.length < MAX_LISTED_ERRORS) errors.push({ index, kind, message });
    };
    if (element === null || typeof element !== 'object' || Array.isArray(element)) {
      fail('unknown', 'an element must be a JSON object with a "kind"');
      return;
    }
    const fields = element as Record<string, unknown>;
    const kind = fields.kind;
    if (typeof kind !== 'string') {
      fail('unknown', `"kind" is required: one of ${KINDS.join(', ')}`);
      return;
    }
    if (!isKind(kind)) {
      fail(kind, `unknown kind "${kind}"; expected one of ${KINDS.join(', ')}`);
      return;
    }
    const before = problems;
    for (const name of Object.keys(fields)) {
      if (name !== 'kind' && !FIELDS[kind].includes(name)) fail(kind, `unknown field "${name}" for kind ${kind} (it takes ${FIELDS[kind].join(', ')})`);
    }
    if (!switches[SWITCH[kind]]) fail(kind, `invalidation by ${kind} is switched off (response_cache.invalidation.${SWITCH[kind]}: false)`);
    const known = (name: unknown, field: string): name is string => {
      if (typeof name !== 'string' || name === '') {
        fail(kind, `"${field}" is required for kind ${kind}: a subgraph name`);
        return false;
      }
      if (subgraphs === undefined) {
        fail(kind, 'no graph is loaded yet, so no subgraph is known');
        return false;
      }
      if (!subgraphs.has(name)) {
        fail(kind, `unknown subgraph "${name}"; the graph has ${graphHas}`);
        return false;
      }
      return true;
    };
    const named: string[] = [];
    if (kind === 'subgraph') {
      if (known(fields.subgraph, 'subgraph')) named.push(indexIds.subgraph(fields.subgraph));
    } else if (kind === 'type') {
      const { subgraph, type } = fields;
      const typeGiven = typeof type === 'string' && type !== '';
      if (!typeGiven) fail(kind, '"type" is required for kind type: a __typename');
      if (known(subgraph, 'subgraph') && typeGiven) {
        named.push(indexIds.type(subgraph, type));
        types.set(indexIds.type(subgraph, type), { subgraph, type });
      }
    } else {
      const tag = fields.cache_tag;
      const names = fields.subgraphs;
      if (typeof tag !== 'string' || tag === '') fail(kind, '"cache_tag" is required for kind cache_tag: a tag');
      if (!Array.isArray(names) || names.length === 0) {
        fail(kind, '"subgraphs" is required for kind cache_tag: a non-empty list of subgraph names');
      } else {
        for (const name of names) if (known(name, 'subgraphs[]') && typeof tag === 'string') named.push(indexIds.tag(name, tag));
      }
    }
    if (problems === before) for (const id of named) indexes.add(id);
  });
  return problems > 0 ? { ok: false, errors, notListed: problems - errors.length } : { ok: true, indexes: [...indexes], types: [...types.values()] };
}

function isKind(kind: string): kind is Kind {
  return (KINDS as readonly string[]).includes(kind);
}
