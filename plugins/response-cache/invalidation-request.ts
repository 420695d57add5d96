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

/** A validated request: the indexes to clear, or every problem found. */
export type ElementsCheck = { readonly ok: true; readonly indexes: string[] } | { readonly ok: false; readonly errors: ElementError[] };

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
 */
export function checkElements(elements: readonly unknown[], subgraphs: ReadonlySet<string> | undefined, switches: IndexSwitches): ElementsCheck {
  const errors: ElementError[] = [];
  const indexes = new Set<string>();
  elements.forEach((element, index) => {
    const fail = (kind: string, message: string) => errors.push({ index, kind, message });
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
    const before = errors.length;
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
        fail(kind, `unknown subgraph "${name}"; the graph has ${[...subgraphs].sort().join(', ')}`);
        return false;
      }
      return true;
    };
    const found: string[] = [];
    if (kind === 'subgraph') {
      if (known(fields.subgraph, 'subgraph')) found.push(indexIds.subgraph(fields.subgraph));
    } else if (kind === 'type') {
      const { subgraph, type } = fields;
      const typeGiven = typeof type === 'string' && type !== '';
      if (!typeGiven) fail(kind, '"type" is required for kind type: a __typename');
      if (known(subgraph, 'subgraph') && typeGiven) found.push(indexIds.type(subgraph, type));
    } else {
      const tag = fields.cache_tag;
      const names = fields.subgraphs;
      if (typeof tag !== 'string' || tag === '') fail(kind, '"cache_tag" is required for kind cache_tag: a tag');
      if (!Array.isArray(names) || names.length === 0) {
        fail(kind, '"subgraphs" is required for kind cache_tag: a non-empty list of subgraph names');
      } else {
        for (const name of names) if (known(name, 'subgraphs[]') && typeof tag === 'string') found.push(indexIds.tag(name, tag));
      }
    }
    if (errors.length === before) for (const id of found) indexes.add(id);
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, indexes: [...indexes] };
}

function isKind(kind: string): kind is Kind {
  return (KINDS as readonly string[]).includes(kind);
}
