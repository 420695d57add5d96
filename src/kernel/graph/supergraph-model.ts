import type { GraphQLSchema, SelectionSetNode } from 'graphql';

/** One subgraph named by the supergraph's `join__Graph` enum. */
export interface SubgraphDef {
  /** Subgraph name as composed (`accounts`). */
  readonly name: string;
  /** The `join__Graph` enum value naming it (`ACCOUNTS`). */
  readonly enumValue: string;
  /** Routing URL recorded at composition time. */
  readonly url: string;
}

/** One `@key` of a type in one subgraph. */
export interface KeyDef {
  /** The field set as written (`"id"`, `"sku package"`). */
  readonly text: string;
  /** The field set parsed. */
  readonly selectionSet: SelectionSetNode;
  /** False for `resolvable: false`: the subgraph references the entity but cannot look it up. */
  readonly resolvable: boolean;
}

/** How one field exists in one subgraph (`@join__field`). */
export interface FieldSource {
  readonly subgraph: string;
  /** `@external`: declared but resolved elsewhere (usable through `@provides` or as key). */
  readonly external: boolean;
  /** `@requires` field set, parsed. */
  readonly requires: SelectionSetNode | undefined;
  /** `@provides` field set, parsed. */
  readonly provides: SelectionSetNode | undefined;
  /** The field's type in this subgraph when it differs from the supergraph's. */
  readonly type: string | undefined;
  /** Overridden by another subgraph but still used by it for keys or requires. */
  readonly usedOverridden: boolean;
  /** Name of the subgraph this one took the field over from (`@override(from:)`). */
  readonly overrideFrom: string | undefined;
  /** Progressive override label, when present. */
  readonly overrideLabel: string | undefined;
}

/** A field of an object, interface or input type in the supergraph. */
export interface FieldDef {
  readonly name: string;
  /** Name of the type that declares it. */
  readonly parentType: string;
  /** Named type the field returns (list and non-null wrappers removed). */
  readonly namedType: string;
  /** Subgraphs that declare it, with how. Empty when the field has no `@join__field`. */
  readonly sources: ReadonlyMap<string, FieldSource>;
  /** Declared with a graph-less `@join__field`: provided only through an interface object. */
  readonly interfaceObjectOnly: boolean;
  /** Hidden from clients by `@inaccessible`. */
  readonly inaccessible: boolean;
}

export type TypeKind = 'OBJECT' | 'INTERFACE' | 'UNION' | 'ENUM' | 'INPUT_OBJECT' | 'SCALAR';

/** A named type of the supergraph with its per-subgraph facts. */
export interface TypeDef {
  readonly name: string;
  readonly kind: TypeKind;
  /** Subgraphs that define the type (`@join__type`). */
  readonly subgraphs: ReadonlySet<string>;
  /** Keys per subgraph, in declaration order. */
  readonly keys: ReadonlyMap<string, readonly KeyDef[]>;
  /** Subgraphs that declare this interface as an object with `@interfaceObject`. */
  readonly interfaceObjectIn: ReadonlySet<string>;
  /** Interfaces this type implements, with the subgraphs where it does. */
  readonly implementsIn: ReadonlyMap<string, ReadonlySet<string>>;
  /** Union members with the subgraphs where they are members. */
  readonly unionMembersIn: ReadonlyMap<string, ReadonlySet<string>>;
  /** Enum values with the subgraphs that know them. */
  readonly enumValuesIn: ReadonlyMap<string, ReadonlySet<string>>;
  /** Fields by name (objects, interfaces, inputs). */
  readonly fields: ReadonlyMap<string, FieldDef>;
  /** Hidden from clients by `@inaccessible`. */
  readonly inaccessible: boolean;
}

/** The supergraph, read once per graph load; the planner's view of who resolves what. */
export interface Supergraph {
  /** Supergraph SDL it was read from. */
  readonly sdl: string;
  /** Subgraphs in declaration order. */
  readonly subgraphs: readonly SubgraphDef[];
  /** Every named type of the supergraph. */
  readonly types: ReadonlyMap<string, TypeDef>;
  /** Root operation type names. */
  readonly rootTypes: { readonly query: string; readonly mutation?: string; readonly subscription?: string };
  /** The client-facing schema: join and link machinery and `@inaccessible` elements removed. */
  readonly apiSchema: GraphQLSchema;
  /** The whole supergraph as a schema (inaccessible elements included), for planning. */
  readonly schema: GraphQLSchema;
}
