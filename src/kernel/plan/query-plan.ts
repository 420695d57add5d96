import type { DocumentNode } from 'graphql';
import type { NormalizedOperation } from './normalize.js';

/**
 * A step of a response path: a response key, `@` for every item of a list,
 * or `... on Type` for the objects of that type only.
 */
export type PathSegment = string;

/** One field read from the response tree to build an entity representation. */
export interface RepresentationField {
  /** Field name as the receiving subgraph expects it in the representation. */
  readonly name: string;
  /** Key under which the value sits in the response tree (an internal alias when the name was taken). */
  readonly responseKey: string;
  /** Nested fields, for composite key or `@requires` fields. */
  readonly children: readonly RepresentationField[] | undefined;
  /** Set for fields under `... on T` in the field set: sent only for objects of that type. */
  readonly typeCondition?: string;
}

/** How to build the representation of the objects of one type for an entity fetch. */
export interface RepresentationSpec {
  /** Objects satisfying this type condition are sent. */
  readonly typeCondition: string;
  /**
   * `__typename` written into the representation: the object's own type, or
   * a fixed name when the receiving subgraph knows the type as an interface object.
   */
  readonly typename: { readonly kind: 'runtime' } | { readonly kind: 'fixed'; readonly name: string };
  /** Key fields, then `@requires` fields. */
  readonly fields: readonly RepresentationField[];
}

/**
 * A field sent under an alias because sibling fragments of its subgraph
 * give the same response key another type; the executor renames it back.
 */
export interface FetchAlias {
  /** Where the objects are, inside the fetch's data (root) or inside each entity (entity fetches). */
  readonly path: readonly PathSegment[];
  readonly alias: string;
  readonly responseKey: string;
}

/**
 * One path whose objects a merged entity fetch looks up. Every entry's
 * entities get the part of the selection that applies to their types, which
 * is what they would have got from a call of their own.
 */
export interface FetchEntry {
  readonly path: readonly PathSegment[];
  readonly representations: readonly RepresentationSpec[];
}

/** One call to one subgraph. */
export interface FetchNode {
  readonly kind: 'Fetch';
  /** Unique within the plan. */
  readonly id: number;
  readonly subgraph: string;
  /** `root`: fields of the root type; `entity`: an `_entities` lookup. */
  readonly fetchKind: 'root' | 'entity';
  readonly operationType: 'query' | 'mutation' | 'subscription';
  /** The operation text sent to the subgraph, printed once at plan time. */
  readonly operation: string;
  readonly operationName: string | undefined;
  /** The selection set of the fetch, printed (also a cache-key component: it names the selection). */
  readonly selectionSet: string;
  /** Client variables the operation reads (besides the representations variable). */
  readonly variableUsages: readonly string[];
  /**
   * Entity fetches: the variable holding the representations when it is not
   * `representations`, which happens only when the client's operation sends
   * a `$representations` of its own with this fetch (then `representations_`,
   * see representations-variable.ts). Absent means `representations`.
   */
  readonly representationsVariable?: string;
  /** Where the entity objects sit in the response (empty for root fetches; the first entry's path for merged fetches). */
  readonly mergePath: readonly PathSegment[];
  /** Entity fetches: how to build representations, per type (for merged fetches, the union over the entries). */
  readonly representations: readonly RepresentationSpec[] | undefined;
  /**
   * Merged entity fetches: the paths whose objects this one `_entities` call
   * looks up, with their own representations (two or more; absent otherwise).
   * Equal representations from several paths are sent once.
   */
  readonly entries?: readonly FetchEntry[];
  /** Fields sent under an alias, to rename back in the answer (rare: conflicting subgraph types). */
  readonly aliases?: readonly FetchAlias[];
  /** Root fetches: the response keys of the root fields they answer. */
  readonly rootFields?: readonly string[];
  /**
   * Batched entity fetches (two or more): the fetches this one request sends
   * as aliased `_entities` fields, part `i` as `_i` with representations in
   * `$ri`; each part is read back as if it were sent alone. Absent otherwise.
   */
  readonly parts?: readonly FetchNode[];
}

/** Runs an entity fetch for the objects at `path`. */
export interface FlattenNode {
  readonly kind: 'Flatten';
  readonly path: readonly PathSegment[];
  /** A merged fetch: every path it looks objects up at (`path` is the first). */
  readonly paths?: readonly (readonly PathSegment[])[];
  readonly node: FetchNode;
}

export interface SequenceNode {
  readonly kind: 'Sequence';
  readonly nodes: readonly PlanNode[];
}

export interface ParallelNode {
  readonly kind: 'Parallel';
  readonly nodes: readonly PlanNode[];
}

export type PlanNode = FetchNode | FlattenNode | SequenceNode | ParallelNode;

/** The plan of one operation: what to fetch, in which order, and how to shape the answer. */
export interface QueryPlan {
  readonly kind: 'QueryPlan';
  /** Undefined when nothing needs a subgraph (for example only `__typename` or introspection). */
  readonly node: PlanNode | undefined;
  /** Every fetch of the plan, in id order. */
  readonly fetches: readonly FetchNode[];
  /** The client operation, normalized; the response is shaped from it. */
  readonly operation: NormalizedOperation;
  /** Introspection root fields answered by the router itself, as a document to execute locally. */
  readonly introspection: DocumentNode | undefined;
}
