import type { RepresentationField, RepresentationSpec } from '../plan/query-plan.js';
import { childValues, firstValue, runtimeTypenameOf, type EntityNode, type JsonObject, type ResponseTree } from './response-tree.js';

/** Representations of one entity fetch, deduplicated, with the positions each one answers for. */
export interface EntityBatch {
  /** What `_entities(representations:)` receives. */
  readonly representations: JsonObject[];
  /** For each representation, the objects (positions) its result merges into. */
  readonly targets: JsonObject[][];
  /** Response path of the first position representation `index` answers for (where its errors go). */
  pathOf(index: number): ReadonlyArray<string | number>;
}

/** A batch built by the general code: it keeps each representation's first position for its path. */
class GeneralBatch implements EntityBatch {
  readonly representations: JsonObject[] = [];
  readonly targets: JsonObject[][] = [];
  readonly firsts: EntityNode[] = [];

  add(representation: JsonObject, node: EntityNode): number {
    this.representations.push(representation);
    this.targets.push([node.primary]);
    return this.firsts.push(node) - 1;
  }

  pathOf(index: number): ReadonlyArray<string | number> {
    return this.firsts[index]!.path;
  }
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
  const batch = new GeneralBatch();
  const { targets } = batch;
  const seen = new Map<string, number>();
  const only = specs.length === 1 ? specs[0] : undefined;
  // One scalar key field (the usual `id`): entities are told apart by the value itself.
  const onlyField = only?.fields.length === 1 && !only.fields[0]!.children && !only.fields[0]!.typeCondition ? only.fields[0] : undefined;
  const onlyTypename = only && (only.typename.kind === 'fixed' ? only.typename.name : only.typeCondition);
  const byValue = new Map<unknown, number>();
  const flat = new Map<RepresentationSpec, boolean>();
  for (const node of nodes) {
    const runtimeType = runtimeTypenameOf(node.view, facts.isObjectType);
    // One spec for exactly this type is the common case; skip the type checks for it.
    const spec =
      only && (runtimeType === undefined || runtimeType === only.typeCondition)
        ? only
        : specs.find((s) => (runtimeType === undefined ? specs.length === 1 : facts.satisfies(runtimeType, s.typeCondition)));
    if (!spec) continue;
    const typename = spec.typename.kind === 'fixed' ? spec.typename.name : (runtimeType ?? spec.typeCondition);
    // Entities of other runtime types (under an interface condition) take the general path below.
    if (onlyField && spec === only && typename === onlyTypename) {
      const value = firstValue(node.view, onlyField.responseKey);
      if (value === undefined) continue;
      if (value === null || typeof value !== 'object') {
        const known = byValue.get(value);
        if (known !== undefined) targets[known]!.push(node.primary);
        else byValue.set(value, batch.add({ __typename: typename, [onlyField.name]: value }, node));
        continue;
      }
    }
    let isFlat = flat.get(spec);
    if (isFlat === undefined) {
      isFlat = spec.fields.every((f) => !f.children && !f.typeCondition);
      flat.set(spec, isFlat);
    }
    // Flat keys (the usual `id`): find duplicates before building anything.
    const key = isFlat ? flatKey(typename, node.view, spec.fields) : undefined;
    if (key === null) continue;
    const known = key === undefined ? undefined : seen.get(key);
    if (known !== undefined) {
      targets[known]!.push(node.primary);
      continue;
    }
    const representation: Record<string, unknown> = { __typename: typename };
    if (!fill(tree, facts, representation, node.view, runtimeType, spec.fields)) continue;
    const finalKey = key ?? dedupeKey(representation);
    const index = seen.get(finalKey);
    if (index === undefined) seen.set(finalKey, batch.add(representation, node));
    else targets[index]!.push(node.primary);
  }
  return batch;
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

/** The dedupe key of a representation made of scalar fields, read straight from the view; null when a field is missing. */
function flatKey(typename: string, view: readonly JsonObject[], fields: readonly RepresentationField[]): string | null {
  let key = typename;
  for (const field of fields) {
    const value = firstValue(view, field.responseKey);
    if (value === undefined) return null;
    key += typeof value === 'string' ? `\u0001s${value}` : `\u0001${typeof value === 'object' ? JSON.stringify(value) : String(value)}`;
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
  if (!field.children) {
    const value = firstValue(view, field.responseKey);
    return value === undefined ? MISSING : value;
  }
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
    return first.map((_, i) =>
      readNested(
        tree,
        facts,
        values.filter(Array.isArray).map((a) => (a as unknown[])[i]),
        children,
      ),
    );
  }
  const view = tree.viewOf(values);
  const object: Record<string, unknown> = {};
  const typename = runtimeTypenameOf(view, facts.isObjectType);
  // Conditional fields need the type to be read back by the subgraph too.
  if (typename !== undefined && children.some((c) => c.name === '__typename' || c.typeCondition)) object.__typename = typename;
  return fill(tree, facts, object, view, typename, children) ? object : MISSING;
}
