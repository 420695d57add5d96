import type { RepresentationField, RepresentationSpec } from '../plan/query-plan.js';
import { childValues, runtimeTypenameOf, typenameOf, type EntityNode, type JsonObject, type ResponseTree } from './response-tree.js';

/** Representations of one entity fetch, deduplicated, with the positions each one answers for. */
export interface EntityBatch {
  /** What `_entities(representations:)` receives. */
  readonly representations: JsonObject[];
  /** For each representation, the positions its result merges into. */
  readonly targets: EntityNode[][];
}

const MISSING = Symbol('missing');

/**
 * Builds the representations for the objects found at a fetch's merge path.
 * Objects whose key fields are missing (their earlier fetch failed) are left
 * out; equal representations are sent once.
 */
export function buildEntityBatch(
  tree: ResponseTree,
  nodes: readonly EntityNode[],
  specs: readonly RepresentationSpec[],
  satisfies: (typename: string, condition: string) => boolean,
  isObjectType: (typename: string) => boolean,
): EntityBatch {
  const representations: JsonObject[] = [];
  const targets: EntityNode[][] = [];
  const seen = new Map<string, number>();
  for (const node of nodes) {
    const runtimeType = runtimeTypenameOf(node.view, isObjectType);
    const spec = specs.find((s) => (runtimeType === undefined ? specs.length === 1 : satisfies(runtimeType, s.typeCondition)));
    if (!spec) continue;
    const typename = spec.typename.kind === 'fixed' ? spec.typename.name : runtimeType ?? spec.typeCondition;
    const representation: Record<string, unknown> = { __typename: typename };
    if (!fill(tree, representation, node.view, spec.fields)) continue;
    const key = JSON.stringify(representation);
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

function fill(tree: ResponseTree, into: Record<string, unknown>, view: readonly JsonObject[], fields: readonly RepresentationField[]): boolean {
  for (const field of fields) {
    const value = readField(tree, view, field);
    if (value === MISSING) return false;
    into[field.name] = value;
  }
  return true;
}

function readField(tree: ResponseTree, view: readonly JsonObject[], field: RepresentationField): unknown {
  const values = childValues(view, field.responseKey);
  if (values.length === 0) return MISSING;
  const first = values[0];
  if (!field.children || first === null) return first;
  return readNested(tree, values, field.children);
}

function readNested(tree: ResponseTree, values: readonly unknown[], children: readonly RepresentationField[]): unknown {
  const first = values[0];
  if (first === null || first === undefined) return null;
  if (Array.isArray(first)) {
    return first.map((_, i) => readNested(tree, values.filter(Array.isArray).map((a) => (a as unknown[])[i]), children));
  }
  const view = tree.viewOf(values);
  const object: Record<string, unknown> = {};
  const typename = typenameOf(view);
  if (typename !== undefined && children.some((c) => c.name === '__typename')) object.__typename = typename;
  return fill(tree, object, view, children) ? object : MISSING;
}
