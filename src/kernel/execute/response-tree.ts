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
  private readonly extras = new Map<JsonObject, readonly JsonObject[]>();
  /** Attachments not made yet, in arrival order (see `later`). */
  private pending: Array<() => void> | undefined;

  addRoot(data: JsonObject): void {
    this.roots.push(data);
  }

  /**
   * Records that `result` holds more fields of the object `primary`. Lists
   * are replaced, not pushed to: an object gets a result from each of a few
   * fetches, and growing an array by push reserves 17 slots for its second
   * element (most of a request's garbage when thousands of objects get two).
   */
  attach(primary: JsonObject, result: JsonObject): void {
    const list = this.extras.get(primary);
    if (list === undefined) this.extras.set(primary, [result]);
    else this.extras.set(primary, grown(list, result));
  }

  /**
   * Defers a batch of `attach` calls until the tree is first read. A request
   * whose later work is all shared (shared-answers.ts) never reads its tree,
   * so it never pays for building it.
   */
  later(attachments: () => void): void {
    (this.pending ??= []).push(attachments);
  }

  private settle(): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    for (const attachments of pending) attachments();
  }

  /** The objects that together make up one response object. */
  viewOf(values: readonly unknown[]): JsonObject[] {
    this.settle();
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

  /** Every object's later parts, by object (what compiled code reads directly). */
  extrasMap(): ReadonlyMap<JsonObject, readonly JsonObject[]> {
    this.settle();
    return this.extras;
  }

  extrasOf(object: JsonObject): readonly JsonObject[] {
    this.settle();
    return this.extras.get(object) ?? NONE;
  }

  /**
   * Finds every object at a merge path. `satisfies` decides `... on T`
   * segments from the objects' `__typename`.
   */
  collect(path: readonly PathSegment[], satisfies: (typename: string, condition: string) => boolean): EntityNode[] {
    this.settle();
    const out: EntityNode[] = [];
    this.walkMany(this.roots, path, 0, undefined, satisfies, out);
    return out;
  }

  /**
   * One step of `collect` for a position that one fetch alone answered
   * (the common case): no arrays of values, no views. Positions found keep
   * a link to their parent step; their path is spelled out only if asked.
   */
  private walkOne(
    value: unknown,
    segments: readonly PathSegment[],
    depth: number,
    at: PathLink | undefined,
    satisfies: (typename: string, condition: string) => boolean,
    out: EntityNode[],
  ): void {
    if (value === null || typeof value !== 'object') return;
    const segment = segments[depth];
    if (segment === '@') {
      if (!Array.isArray(value)) return;
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        if (item !== null && item !== undefined) this.walkOne(item, segments, depth + 1, { parent: at, segment: i }, satisfies, out);
      }
      return;
    }
    if (Array.isArray(value)) return;
    const object = value as JsonObject;
    const extras = this.extras.get(object);
    if (extras) {
      this.walkMany([object], segments, depth, at, satisfies, out);
      return;
    }
    if (segment === undefined) {
      out.push(new FoundEntity(object, [object], at));
      return;
    }
    if (segment.startsWith('... on ')) {
      const typename = object.__typename;
      if (typeof typename === 'string' && satisfies(typename, segment.slice(7))) this.walkOne(object, segments, depth + 1, at, satisfies, out);
      return;
    }
    const child = ownField(object, segment);
    if (child !== undefined && child !== null) this.walkOne(child, segments, depth + 1, { parent: at, segment }, satisfies, out);
  }

  /**
   * One step of `collect`: `values` are what the fetches hold for one
   * response position (several when later fetches added to it).
   */
  private walkMany(
    values: readonly unknown[],
    segments: readonly PathSegment[],
    depth: number,
    at: PathLink | undefined,
    satisfies: (typename: string, condition: string) => boolean,
    out: EntityNode[],
  ): void {
    if (values.length === 1) {
      const only = values[0];
      if (only === null || typeof only !== 'object' || Array.isArray(only) || !this.extras.has(only as JsonObject)) {
        this.walkOne(only, segments, depth, at, satisfies, out);
        return;
      }
    }
    if (depth === segments.length) {
      const view = this.viewOf(values);
      if (view.length > 0) out.push(new FoundEntity(view[0]!, view, at));
      return;
    }
    const segment = segments[depth]!;
    if (segment === '@') {
      const lists = values.filter(Array.isArray) as unknown[][];
      const length = lists.reduce((max, list) => Math.max(max, list.length), 0);
      for (let i = 0; i < length; i++) {
        const items: unknown[] = [];
        for (const list of lists) if (list[i] !== undefined && list[i] !== null) items.push(list[i]);
        if (items.length > 0) this.walkMany(items, segments, depth + 1, { parent: at, segment: i }, satisfies, out);
      }
      return;
    }
    if (segment.startsWith('... on ')) {
      // Interface objects report the interface; other fetches may know the object type.
      const condition = segment.slice(7);
      if (typenamesOf(this.viewOf(values)).some((typename) => satisfies(typename, condition))) {
        this.walkMany(values, segments, depth + 1, at, satisfies, out);
      }
      return;
    }
    const children = childValues(this.viewOf(values), segment);
    if (children.length > 0) this.walkMany(children, segments, depth + 1, { parent: at, segment }, satisfies, out);
  }
}

/** A copy of `list` with `item` added, allocated at its exact length. */
function grown(list: readonly JsonObject[], item: JsonObject): JsonObject[] {
  const length = list.length;
  if (length === 1) return [list[0]!, item];
  const out = new Array<JsonObject>(length + 1);
  for (let i = 0; i < length; i++) out[i] = list[i]!;
  out[length] = item;
  return out;
}

/** One step of a response path, linked to the step before it. */
interface PathLink {
  readonly parent: PathLink | undefined;
  readonly segment: string | number;
}

/** An entity position as `collect` finds it; its path is spelled out on first use (most are never asked). */
class FoundEntity implements EntityNode {
  private spelled: ReadonlyArray<string | number> | undefined;

  constructor(
    readonly primary: JsonObject,
    readonly view: readonly JsonObject[],
    private readonly at: PathLink | undefined,
  ) {}

  get path(): ReadonlyArray<string | number> {
    if (!this.spelled) {
      const path: Array<string | number> = [];
      for (let link = this.at; link; link = link.parent) path.push(link.segment);
      this.spelled = path.reverse();
    }
    return this.spelled;
  }
}

/**
 * `object[key]` when the object holds the key itself. A key it lacks that
 * names an Object.prototype member (a client may alias a field
 * `constructor` or `__proto__`, and another fetch holds it) reads as absent:
 * JSON holds no functions, and none of its objects is Object.prototype.
 */
export function ownField(object: JsonObject, key: string): unknown {
  const value = object[key];
  return typeof value === 'function' || value === Object.prototype ? undefined : value;
}

/** Values the objects of a view hold under a key (undefined and null skipped, null kept only when alone). */
export function childValues(view: readonly JsonObject[], key: string): unknown[] {
  const values: unknown[] = [];
  let sawNull = false;
  for (const object of view) {
    const value = ownField(object, key);
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
    const value = ownField(view[i]!, key);
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
