import {
  getNamedType,
  isAbstractType,
  isInterfaceType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  isUnionType,
  type GraphQLInterfaceType,
  type GraphQLLeafType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
} from 'graphql';
import type { NSelection } from '../plan/normalize.js';

/** A field to write at one response position for one runtime type. */
export interface ShapeField {
  readonly responseKey: string;
  readonly name: string;
  /** Wrappers outside-in: `N` non-null, `L` list (`[T!]!` is N L N). */
  readonly wrappers: readonly ('N' | 'L')[];
  readonly namedType: GraphQLNamedType | undefined;
  /** Merged sub-selections of every occurrence of the field. */
  readonly selections: NSelection[] | undefined;
  readonly parentType: string;
  /** Introspection root fields: answered by graphql-js already, copied as they are. */
  readonly verbatim: boolean;
  /** Set for scalar and enum fields: serialized on the way out. */
  readonly leafType: GraphQLLeafType | undefined;
  /** Interface or union: the runtime type comes from `__typename`. */
  readonly abstract: boolean;
}

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);

/**
 * The schema facts response shaping reads: which fields to write for a
 * selection set at a runtime type (memoized per selection set and type),
 * and type relations. Shared by the general and the compiled shaper.
 */
export class ShapeFields {
  private readonly fieldCache = new WeakMap<readonly NSelection[], Map<string, ShapeField[]>>();
  private readonly conditionsCache = new Map<string, ReadonlySet<string>>();
  private unionMembership: ReadonlyMap<string, readonly string[]> | undefined;

  constructor(readonly schema: GraphQLSchema) {}

  fields(selections: readonly NSelection[], runtimeType: string): ShapeField[] {
    let byType = this.fieldCache.get(selections);
    if (!byType) {
      byType = new Map();
      this.fieldCache.set(selections, byType);
    }
    let fields = byType.get(runtimeType);
    if (!fields) {
      fields = [];
      this.collect(selections, runtimeType, this.conditionsMetBy(runtimeType), fields, new Map());
      byType.set(runtimeType, fields);
    }
    return fields;
  }

  objectType(name: string): GraphQLObjectType | undefined {
    const type = this.schema.getType(name);
    return isObjectType(type) ? type : undefined;
  }

  satisfies(objectType: string, condition: string): boolean {
    if (objectType === condition) return true;
    const abstract = this.schema.getType(condition);
    const object = this.schema.getType(objectType);
    return isAbstractType(abstract) && isObjectType(object) && this.schema.isSubType(abstract, object);
  }

  /** An object or interface type (interface objects report their interface as `__typename`). */
  private fieldsOwner(name: string): GraphQLObjectType | GraphQLInterfaceType | undefined {
    const type = this.schema.getType(name);
    return isObjectType(type) || isInterfaceType(type) ? type : undefined;
  }

  /**
   * The type conditions an object of `runtimeType` meets: itself, its
   * interfaces and the unions it belongs to (an interface object: itself).
   * A set, so each fragment of a selection costs one lookup, also with
   * thousands of fragments on a union answered with as many object types.
   */
  private conditionsMetBy(runtimeType: string): ReadonlySet<string> {
    const known = this.conditionsCache.get(runtimeType);
    if (known) return known;
    const met = new Set([runtimeType]);
    const type = this.schema.getType(runtimeType);
    if (isObjectType(type)) {
      for (const implemented of type.getInterfaces()) met.add(implemented.name);
      for (const union of this.unionsOf().get(runtimeType) ?? []) met.add(union);
    }
    // Kept for the schema's own types only: the cache stays as small as the schema.
    if (type) this.conditionsCache.set(runtimeType, met);
    return met;
  }

  /** The unions each object type is a member of. */
  private unionsOf(): ReadonlyMap<string, readonly string[]> {
    if (!this.unionMembership) {
      const membership = new Map<string, string[]>();
      for (const type of Object.values(this.schema.getTypeMap())) {
        if (!isUnionType(type)) continue;
        for (const member of type.getTypes()) {
          const unions = membership.get(member.name);
          if (unions) unions.push(type.name);
          else membership.set(member.name, [type.name]);
        }
      }
      this.unionMembership = membership;
    }
    return this.unionMembership;
  }

  private collect(selections: readonly NSelection[], runtimeType: string, met: ReadonlySet<string>, into: ShapeField[], byKey: Map<string, ShapeField>): void {
    const type = this.fieldsOwner(runtimeType);
    for (const selection of selections) {
      if (selection.kind === 'Fragment') {
        if (met.has(selection.typeCondition)) this.collect(selection.selections, runtimeType, met, into, byKey);
        continue;
      }
      const existing = byKey.get(selection.responseKey);
      if (existing) {
        if (existing.selections && selection.selections) existing.selections.push(...selection.selections);
        continue;
      }
      const definition = selection.name === '__typename' ? undefined : type?.getFields()[selection.name];
      const field: ShapeField = {
        responseKey: selection.responseKey,
        name: selection.name,
        wrappers: definition ? wrappersOf(definition.type) : [],
        namedType: definition ? getNamedType(definition.type) : undefined,
        selections: selection.selections ? [...selection.selections] : undefined,
        parentType: runtimeType,
        verbatim: INTROSPECTION_FIELDS.has(selection.name),
        leafType: definition && isLeafType(getNamedType(definition.type)) ? (getNamedType(definition.type) as GraphQLLeafType) : undefined,
        abstract: !!definition && isAbstractType(getNamedType(definition.type)),
      };
      into.push(field);
      byKey.set(field.responseKey, field);
    }
  }
}

function wrappersOf(type: GraphQLOutputType): Array<'N' | 'L'> {
  const wrappers: Array<'N' | 'L'> = [];
  let current: GraphQLOutputType = type;
  for (;;) {
    if (isNonNullType(current)) {
      wrappers.push('N');
      current = current.ofType;
    } else if (isListType(current)) {
      wrappers.push('L');
      current = current.ofType;
    } else return wrappers;
  }
}
