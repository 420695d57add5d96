import type { RepresentationField, RepresentationSpec } from '../plan/query-plan.js';
import { childValues, runtimeTypenameOf, type EntityNode, type JsonObject, type ResponseTree } from './response-tree.js';

/** Representations of one entity fetch, deduplicated, with the positions each one answers for. */
export interface EntityBatch {
  /** What `_entities(representations:)` receives. */
  readonly representations: JsonObject[];
  /** For each representation, the positions its result merges into. */
  readonly targets: EntityNode[][];
}

/** Type questions representation building needs answered. */
export interface TypeFacts {
  readonly satisfies: (typename: string, condition: string) => boolean;
  readonly isObjectType: (typename: string) => boolean;
}

const MISSING = Symbol('missing');

/**
 * Builds the representations for the objects found at a fetch's merge path.
 * Objects whose key fields are missing (their earlier fetch failed) are left
 * out; equal representations are sent once.
 */
export function buildEntityBatch(tree: ResponseTree, nodes: readonly EntityNode[], specs: readonly RepresentationSpec[], facts: TypeFacts): EntityBatch {
  const representations: JsonObject[] = [];
  const targets: EntityNode[][] = [];
  const seen = new Map<string, number>();
  for (const node of nodes) {
    const runtimeType = runtimeTypenameOf(node.view, facts.isObjectType);
    const spec = specs.find((s) => (runtimeType === undefined ? specs.length === 1 : facts.satisfies(runtimeType, s.typeCondition)));
    if (!spec) continue;
    const typename = spec.typename.kind === 'fixed' ? spec.typename.name : runtimeType ?? spec.typeCondition;
    const representation: Record<string, unknown> = { __typename: typename };
    if (!fill(tree, facts, representation, node.view, runtimeType, spec.fields)) continue;
    const key = dedupeKey(representation);
    const index = seen.get(key);
    if (index === undefined) {
      seen.set(key, representations.length);
      representations.push(representation);
      targets.push([node]);
    } else {
      targets[index]!.push(node);
    }
  }
  return { representations, targets };
}

/**
 * A key equal for equal representations. Keys are usually a few scalars:
 * joining them is much cheaper than JSON.stringify for each entity.
 */
function dedupeKey(representation: Record<string, unknown>): string {
  let key = '';
  for (const name in representation) {
    const value = representation[name];
    switch (typeof value) {
      case 'string':
        key += `\u0001${name}\u0002s${value}`;
        break;
      case 'number':
      case 'boolean':
        key += `\u0001${name}\u0002${typeof value === 'number' ? 'n' : 'b'}${value}`;
        break;
      default:
        key += `\u0001${name}\u0002j${JSON.stringify(value)}`;
    }
  }
  return key;
}

function fill(
  tree: ResponseTree,
  facts: TypeFacts,
  into: Record<string, unknown>,
  view: readonly JsonObject[],
  runtimeType: string | undefined,
  fields: readonly RepresentationField[],
): boolean {
  for (const field of fields) {
    if (field.typeCondition && (runtimeType === undefined || !facts.satisfies(runtimeType, field.typeCondition))) continue;
    const value = readField(tree, facts, view, field);
    if (value === MISSING) {
      if (field.typeCondition) continue;
      return false;
    }
    into[field.name] = value;
  }
  return true;
}

function readField(tree: ResponseTree, facts: TypeFacts, view: readonly JsonObject[], field: RepresentationField): unknown {
  const values = childValues(view, field.responseKey);
  if (values.length === 0) return MISSING;
  const first = values[0];
  if (!field.children || first === null) return first;
  return readNested(tree, facts, values, field.children);
}

function readNested(tree: ResponseTree, facts: TypeFacts, values: readonly unknown[], children: readonly RepresentationField[]): unknown {
  const first = values[0];
  if (first === null || first === undefined) return null;
  if (Array.isArray(first)) {
    return first.map((_, i) => readNested(tree, facts, values.filter(Array.isArray).map((a) => (a as unknown[])[i]), children));
  }
  const view = tree.viewOf(values);
  const object: Record<string, unknown> = {};
  const typename = runtimeTypenameOf(view, facts.isObjectType);
  // Conditional fields need the type to be read back by the subgraph too.
  if (typename !== undefined && children.some((c) => c.name === '__typename' || c.typeCondition)) object.__typename = typename;
  return fill(tree, facts, object, view, typename, children) ? object : MISSING;
}
