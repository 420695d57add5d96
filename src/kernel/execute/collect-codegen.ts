import type { PathSegment, RepresentationSpec } from '../plan/query-plan.js';
import { firstFromSource, INHERITED_KEYS, oneOfSource } from './object-parts.js';

/**
 * Writes the JavaScript of a compiled entity collector for one fetch: nested
 * loops along the merge path that find each entity position, build its
 * representation as one object literal and deduplicate it, exactly as
 * `ResponseTree.collect` + `buildEntityBatch` do, for the common case: one
 * representation spec of flat (scalar) key and `@requires` fields.
 *
 * The function is `collect(o, x, X, b)`: the root object `o` with its other
 * parts `x`, `X` mapping an object to its other parts, `b` the batch to fill
 * (compiled-collect.ts). It returns false where the general code must
 * decide (a key holding values from several fetches, an object as the one
 * key value); the caller then runs the general code for the whole fetch.
 * Names enter the code only as JSON string literals. Undefined when the
 * fetch has something this code does not handle.
 */
export function generateCollectSource(mergePath: readonly PathSegment[], specs: readonly RepresentationSpec[]): string | undefined {
  const spec = specs.length === 1 ? specs[0]! : undefined;
  if (!spec || spec.fields.length === 0) return undefined;
  if (spec.fields.some((field) => field.children || field.typeCondition || field.name === '__proto__' || field.name === '__typename')) return undefined;
  if (spec.fields.some((field) => INHERITED_KEYS.has(field.responseKey)) || mergePath.some((segment) => INHERITED_KEYS.has(segment))) return undefined;
  const writer = new CollectWriter(mergePath, spec);
  return `"use strict";
const { MULTI, typenameOf, satisfiesAny, satisfies, same } = H;
return function collect(o, x, X, b) {
  ${writer.step(0, { object: 'o', more: 'x', indices: [] })}
  return true;
};`;
}

/** Where the walk stands: the object's variable, its other parts' variable, and the list indices so far. */
interface Standing {
  readonly object: string;
  readonly more: string;
  readonly indices: readonly string[];
}

class CollectWriter {
  constructor(
    private readonly path: readonly PathSegment[],
    private readonly spec: RepresentationSpec,
  ) {}

  /** The step at `depth`, standing on an object. */
  step(depth: number, at: Standing): string {
    if (depth === this.path.length) return this.position(at);
    const segment = this.path[depth]!;
    if (segment.startsWith('... on ')) {
      return `if (satisfiesAny(${at.object}, ${at.more}, ${JSON.stringify(segment.slice(7))})) { ${this.step(depth + 1, at)} }`;
    }
    if (segment === '@') return ''; // an object where the path expects a list: nothing there
    const key = JSON.stringify(segment);
    const child = `c${depth}`;
    return `{ let ${child}; if (${at.more} === undefined) ${child} = ${at.object}[${key}]; else ${oneOfSource(child, at.object, at.more, key)}
    if (${child} === MULTI) return false;
    ${this.value(depth + 1, child, at.indices)} }`;
  }

  /** A value reached at `depth`: its items on an `@` step, else the object to stand on. */
  private value(depth: number, value: string, indices: readonly string[]): string {
    if (this.path[depth] === '@') {
      const index = `i${depth}`;
      const item = `e${depth}`;
      return `if (Array.isArray(${value})) for (let ${index} = 0; ${index} < ${value}.length; ${index}++) {
    const ${item} = ${value}[${index}];
    ${this.value(depth + 1, item, [...indices, index])} }`;
    }
    const object = `o${depth}`;
    const more = `x${depth}`;
    return `if (typeof ${value} === 'object' && ${value} !== null && !Array.isArray(${value})) {
    const ${object} = ${value}, ${more} = X.get(${object});
    ${this.step(depth, { object, more, indices })} }`;
  }

  /** At an entity position: the runtime type and the spec's check, the key values, the representation (new or a duplicate). */
  private position(at: Standing): string {
    const spec = this.spec;
    const { object, more } = at;
    const condition = JSON.stringify(spec.typeCondition);
    const fixed = spec.typename.kind === 'fixed' ? JSON.stringify(spec.typename.name) : undefined;
    const reads = spec.fields.map((field, i) => {
      const key = JSON.stringify(field.responseKey);
      return `let k${i} = ${object}[${key}];
    if ((k${i} === undefined || k${i} === null) && ${more} !== undefined) ${firstFromSource(`k${i}`, more, key)}
    if (k${i} === undefined) break position;`;
    });
    const literal = `{ __typename: t, ${spec.fields.map((field, i) => `${JSON.stringify(field.name)}: k${i}`).join(', ')} }`;
    const added = `b.representations.push(${literal}); b.targets.push([${object}]);${at.indices.length > 0 ? ` b.indices.push(${at.indices.join(', ')});` : ''}`;
    // Duplicates are found by the first key value, then the rest compared: as equal as buildEntityBatch's joined keys
    // for scalars, far cheaper than building a string per position. Objects as values are left to the general code.
    const objectCheck = spec.fields.map((_, i) => `(k${i} !== null && typeof k${i} === 'object')`).join(' || ');
    const rest = spec.fields
      .slice(1)
      .map((field, i) => ` && same(r[${JSON.stringify(field.name)}], k${i + 1})`)
      .join('');
    return `position: {
    const r0 = typenameOf(${object}, ${more});
    if (r0 !== undefined && r0 !== ${condition} && !satisfies(r0, ${condition})) break position;
    const t = ${fixed ?? `r0 ?? ${condition}`};
    ${reads.join('\n    ')}
    if (${objectCheck}) return false;
    let known = b.byFirst.get(k0);
    while (known !== undefined) {
      const r = b.representations[known];
      if (r.__typename === t${rest}) break;
      known = b.sameFirst[known];
    }
    if (known !== undefined) b.targets[known].push(${object});
    else { b.sameFirst.push(b.byFirst.get(k0)); b.byFirst.set(k0, b.representations.length); ${added} }  }`;
  }
}
