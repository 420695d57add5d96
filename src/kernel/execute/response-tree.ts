import type { JsonObject } from '../fetch/subgraph-types.js';
import type { PathSegment } from '../plan/query-plan.js';

export type { JsonObject };

/** An entity position found at a merge path. */
export interface EntityNode {
  /** The object every later result for this position attaches to. */
  readonly primary: JsonObject;
  /** Every object known for this position (primary first, then what later fetches added). */
  readonly view: readonly JsonObject[];
  /** Response path of the position, with list indices. */
  readonly path: ReadonlyArray<string | number>;
}

const NONE: readonly JsonObject[] = [];

/**
 * The data of one request as fetched: root results and, per object, the
 * entity results that later fetches returned for it. Fetched objects are
 * never mutated, so identical subgraph answers can be shared between
 * requests (single flight, response cache) without copies.
 */
export class ResponseTree {
  readonly roots: JsonObject[] = [];
  private readonly extras = new Map<JsonObject, JsonObject[]>();

  addRoot(data: JsonObject): void {
    this.roots.push(data);
  }

  /** Records that `result` holds more fields of the object `primary`. */
  attach(primary: JsonObject, result: JsonObject): void {
    const list = this.extras.get(primary);
    if (list) list.push(result);
    else this.extras.set(primary, [result]);
  }

  /** The objects that together make up one response object. */
  viewOf(values: readonly unknown[]): JsonObject[] {
    if (values.length === 1) {
      const value = values[0];
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
      const more = this.extras.get(value as JsonObject);
      return more ? [value as JsonObject, ...more] : [value as JsonObject];
    }
    const view: JsonObject[] = [];
    for (const value of values) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) continue;
      const object = value as JsonObject;
      view.push(object);
      const more = this.extras.get(object);
      if (more) for (const extra of more) view.push(extra);
    }
    return view;
  }

  extrasOf(object: JsonObject): readonly JsonObject[] {
    return this.extras.get(object) ?? NONE;
  }

  /**
   * Finds every object at a merge path. `satisfies` decides `... on T`
   * segments from the objects' `__typename`.
   */
  collect(path: readonly PathSegment[], satisfies: (typename: string, condition: string) => boolean): EntityNode[] {
    const out: EntityNode[] = [];
    this.walk(this.roots, path, 0, [], satisfies, out);
    return out;
  }

  /**
   * One step of `collect`: `values` are what the fetches hold for one
   * response position (usually one value); the path is shared and copied
   * only for the positions found.
   */
  private walk(
    values: readonly unknown[],
    segments: readonly PathSegment[],
    depth: number,
    at: Array<string | number>,
    satisfies: (typename: string, condition: string) => boolean,
    out: EntityNode[],
  ): void {
    if (depth === segments.length) {
      const view = this.viewOf(values);
      if (view.length > 0) out.push({ primary: view[0]!, view, path: at.slice() });
      return;
    }
    const segment = segments[depth]!;
    if (segment === '@') {
      if (values.length === 1) {
        const list = values[0];
        if (!Array.isArray(list)) return;
        for (let i = 0; i < list.length; i++) {
          const item: unknown = list[i];
          if (item === null || item === undefined) continue;
          at.push(i);
          this.walk([item], segments, depth + 1, at, satisfies, out);
          at.pop();
        }
        return;
      }
      const lists = values.filter(Array.isArray) as unknown[][];
      const length = lists.reduce((max, list) => Math.max(max, list.length), 0);
      for (let i = 0; i < length; i++) {
        const items: unknown[] = [];
        for (const list of lists) if (list[i] !== undefined && list[i] !== null) items.push(list[i]);
        if (items.length === 0) continue;
        at.push(i);
        this.walk(items, segments, depth + 1, at, satisfies, out);
        at.pop();
      }
      return;
    }
    if (segment.startsWith('... on ')) {
      // Interface objects report the interface; other fetches may know the object type.
      const condition = segment.slice(7);
      if (typenamesOf(this.viewOf(values)).some((typename) => satisfies(typename, condition))) {
        this.walk(values, segments, depth + 1, at, satisfies, out);
      }
      return;
    }
    const children = childValues(this.viewOf(values), segment);
    if (children.length === 0) return;
    at.push(segment);
    this.walk(children, segments, depth + 1, at, satisfies, out);
    at.pop();
  }
}

/** Values the objects of a view hold under a key (undefined and null skipped, null kept only when alone). */
export function childValues(view: readonly JsonObject[], key: string): unknown[] {
  const values: unknown[] = [];
  let sawNull = false;
  for (const object of view) {
    const value = object[key];
    if (value === undefined) continue;
    if (value === null) sawNull = true;
    else values.push(value);
  }
  if (values.length === 0 && sawNull) values.push(null);
  return values;
}

/** The first value the objects of a view hold under a key (a non-null one if any). */
export function firstValue(view: readonly JsonObject[], key: string): unknown {
  let found: unknown;
  for (let i = 0; i < view.length; i++) {
    const value = view[i]![key];
    if (value !== undefined && value !== null) return value;
    if (value === null) found = null;
  }
  return found;
}

/** Every `__typename` the fetches reported for one response object, in fetch order. */
export function typenamesOf(view: readonly JsonObject[]): string[] {
  const names: string[] = [];
  for (const object of view) if (typeof object.__typename === 'string') names.push(object.__typename);
  return names;
}

/**
 * The `__typename` of a response object: the first object type reported
 * (interface objects report their interface), else the first reported.
 */
export function runtimeTypenameOf(view: readonly JsonObject[], isObjectType: (name: string) => boolean): string | undefined {
  let first: string | undefined;
  for (let i = 0; i < view.length; i++) {
    const name = view[i]!.__typename;
    if (typeof name !== 'string') continue;
    if (isObjectType(name)) return name;
    first ??= name;
  }
  return first;
}

/** The `__typename` of a response object, from whichever fetch reported it first. */
export function typenameOf(view: readonly JsonObject[]): string | undefined {
  for (const object of view) {
    const typename = object.__typename;
    if (typeof typename === 'string') return typename;
  }
  return undefined;
}
