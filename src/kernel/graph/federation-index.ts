import { getNamedType, isListType, isNonNullType, isObjectType, isInterfaceType, type GraphQLOutputType } from 'graphql';
import type { FieldDef, FieldSource, KeyDef, Supergraph, TypeDef } from './supergraph-model.js';
import { fieldSetFieldNames } from './field-set.js';
import { isOverrideLabelActive, NO_LABELS } from './override-label.js';

const NO_KEYS: readonly KeyDef[] = [];
const NO_TYPES: readonly string[] = [];

/**
 * Answers the planner's questions about a supergraph: which subgraph can
 * resolve a field, which keys a subgraph accepts, which object types an
 * abstract type can be at runtime (overall and per subgraph).
 * Built once per graph load (and once per set of override labels on,
 * LoadedGraph.planningIndex); every answer is memoized.
 */
export class FederationIndex {
  readonly supergraph: Supergraph;
  private readonly possibleTypesCache = new Map<string, readonly string[]>();
  /** `possibleTypes` as sets, for `satisfies` (an interface may have thousands of implementations). */
  private readonly possibleTypeSets = new Map<string, ReadonlySet<string>>();
  private readonly possibleTypesInCache = new Map<string, readonly string[]>();
  private readonly resolveCache = new Map<string, boolean>();
  /** The override labels on for the plans made with this index (`percent(100)` is on whatever this says). */
  readonly overrideLabels: ReadonlySet<string>;

  constructor(supergraph: Supergraph, overrideLabels: ReadonlySet<string> = NO_LABELS.on) {
    this.supergraph = supergraph;
    this.overrideLabels = overrideLabels;
  }

  type(name: string): TypeDef | undefined {
    return this.supergraph.types.get(name);
  }

  isAbstract(typeName: string): boolean {
    const kind = this.type(typeName)?.kind;
    return kind === 'INTERFACE' || kind === 'UNION';
  }

  isComposite(typeName: string): boolean {
    const kind = this.type(typeName)?.kind;
    return kind === 'OBJECT' || kind === 'INTERFACE' || kind === 'UNION';
  }

  field(typeName: string, fieldName: string): FieldDef | undefined {
    return this.type(typeName)?.fields.get(fieldName);
  }

  /** Object types an abstract type can be at runtime, across the whole supergraph. */
  possibleTypes(typeName: string): readonly string[] {
    const cached = this.possibleTypesCache.get(typeName);
    if (cached) return cached;
    const type = this.type(typeName);
    let result: readonly string[] = NO_TYPES;
    if (type?.kind === 'OBJECT') result = [typeName];
    else if (type?.kind === 'UNION') result = [...type.unionMembersIn.keys()];
    else if (type?.kind === 'INTERFACE') {
      result = [...this.supergraph.types.values()].filter((t) => t.kind === 'OBJECT' && t.implementsIn.has(typeName)).map((t) => t.name);
    }
    this.possibleTypesCache.set(typeName, result);
    return result;
  }

  /** Whether an object of runtime type `objectType` satisfies a fragment on `condition`. */
  satisfies(objectType: string, condition: string): boolean {
    if (objectType === condition) return true;
    let set = this.possibleTypeSets.get(condition);
    if (!set) {
      set = new Set(this.possibleTypes(condition));
      this.possibleTypeSets.set(condition, set);
    }
    return set.has(objectType);
  }

  /** Whether the subgraph knows the type (as itself, or an interface as an `@interfaceObject`). */
  hasType(typeName: string, subgraph: string): boolean {
    const type = this.type(typeName);
    return !!type && (type.subgraphs.has(subgraph) || type.interfaceObjectIn.has(subgraph));
  }

  /** Whether the subgraph declares an interface as an object with `@interfaceObject`. */
  isInterfaceObjectIn(typeName: string, subgraph: string): boolean {
    return this.type(typeName)?.interfaceObjectIn.has(subgraph) ?? false;
  }

  /** Object types the subgraph itself can return where it returns `typeName`. */
  possibleTypesIn(typeName: string, subgraph: string): readonly string[] {
    const cacheKey = `${typeName}\u0000${subgraph}`;
    const cached = this.possibleTypesInCache.get(cacheKey);
    if (cached) return cached;
    const type = this.type(typeName);
    let result: readonly string[] = NO_TYPES;
    if (type?.kind === 'OBJECT') result = type.subgraphs.has(subgraph) ? [typeName] : NO_TYPES;
    else if (type?.kind === 'UNION') {
      result = [...type.unionMembersIn].filter(([, graphs]) => graphs.has(subgraph)).map(([member]) => member);
    } else if (type?.kind === 'INTERFACE') {
      result = this.possibleTypes(typeName).filter((name) => {
        const candidate = this.type(name);
        return !!candidate && candidate.subgraphs.has(subgraph) && (candidate.implementsIn.get(typeName)?.has(subgraph) ?? false);
      });
    }
    this.possibleTypesInCache.set(cacheKey, result);
    return result;
  }

  /** The field's `@join__field` record for the subgraph, if it has one. */
  fieldSource(typeName: string, fieldName: string, subgraph: string): FieldSource | undefined {
    return this.field(typeName, fieldName)?.sources.get(subgraph);
  }

  /**
   * Whether the subgraph resolves the field on that parent type by itself
   * (not counting `@provides`, which the planner tracks per path).
   */
  canResolve(typeName: string, fieldName: string, subgraph: string): boolean {
    if (fieldName === '__typename') return true;
    const cacheKey = `${typeName}\u0000${fieldName}\u0000${subgraph}`;
    const cached = this.resolveCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const result = this.computeCanResolve(typeName, fieldName, subgraph);
    this.resolveCache.set(cacheKey, result);
    return result;
  }

  private computeCanResolve(typeName: string, fieldName: string, subgraph: string): boolean {
    if (!this.hasType(typeName, subgraph)) return false;
    const field = this.field(typeName, fieldName);
    if (!field) return false;
    if (!this.declaresField(field, subgraph)) return false;
    // An interface field is only as resolvable as it is on every object the subgraph can return for it.
    const type = this.type(typeName);
    if (type?.kind === 'INTERFACE' && !type.interfaceObjectIn.has(subgraph)) {
      return this.possibleTypesIn(typeName, subgraph).every((objectType) => this.canResolve(objectType, fieldName, subgraph));
    }
    return true;
  }

  /** Whether the subgraph declares the field as its own (not external, not overridden away). */
  private declaresField(field: FieldDef, subgraph: string): boolean {
    if (field.sources.size === 0) return !field.interfaceObjectOnly;
    const source = field.sources.get(subgraph);
    if (!source || source.external) return false;
    // Progressive override: both subgraphs carry the label; the overriding one
    // (with `override:`) owns the field while the label is active, the original
    // one while it is not. The label decides before `usedOverridden`: composers
    // also mark the original's field so when it is part of one of its keys.
    if (source.overrideLabel === undefined) return !source.usedOverridden;
    const active = isOverrideLabelActive(source.overrideLabel, this.overrideLabels);
    return source.overrideFrom === undefined ? !active : active;
  }

  /** Whether the field is part of one of the type's keys in the subgraph. */
  isKeyField(typeName: string, fieldName: string, subgraph: string): boolean {
    return this.keys(typeName, subgraph).some((key) => fieldSetFieldNames(key.selectionSet).includes(fieldName));
  }

  /** Every key of the type in the subgraph (resolvable or not). */
  keys(typeName: string, subgraph: string): readonly KeyDef[] {
    return this.type(typeName)?.keys.get(subgraph) ?? NO_KEYS;
  }

  /** Keys through which the subgraph can look the entity up (`_entities`). */
  resolvableKeys(typeName: string, subgraph: string): readonly KeyDef[] {
    return this.keys(typeName, subgraph).filter((key) => key.resolvable);
  }

  /** Output type of a field from the supergraph schema (wrappers included). */
  fieldType(typeName: string, fieldName: string): GraphQLOutputType | undefined {
    const type = this.supergraph.schema.getType(typeName);
    if (!isObjectType(type) && !isInterfaceType(type)) return undefined;
    return type.getFields()[fieldName]?.type;
  }

  /** Named type a field returns. */
  fieldNamedType(typeName: string, fieldName: string): string {
    const type = this.fieldType(typeName, fieldName);
    return type ? getNamedType(type).name : '';
  }

  /**
   * Named type a field returns in one subgraph: it may differ from the
   * supergraph's (`@join__field(type:)`), for example an object where the
   * supergraph has a union.
   */
  fieldNamedTypeIn(typeName: string, fieldName: string, subgraph: string): string {
    const declared = this.fieldSource(typeName, fieldName, subgraph)?.type;
    if (declared) return declared.replace(/[[\]!]/g, '');
    return this.fieldNamedType(typeName, fieldName);
  }

  /** A field's type in one subgraph, printed (`[ID!]`): subgraphs may differ in nullability. */
  fieldTypeTextIn(typeName: string, fieldName: string, subgraph: string): string {
    return this.fieldSource(typeName, fieldName, subgraph)?.type ?? String(this.fieldType(typeName, fieldName) ?? '');
  }

  /** How many list levels wrap a field's type (`[[T!]]!` is 2). */
  fieldListDepth(typeName: string, fieldName: string): number {
    let type = this.fieldType(typeName, fieldName);
    let depth = 0;
    while (type) {
      if (isNonNullType(type)) type = type.ofType;
      else if (isListType(type)) {
        depth++;
        type = type.ofType;
      } else break;
    }
    return depth;
  }

  /** Subgraphs in declaration order. */
  subgraphNames(): string[] {
    return this.supergraph.subgraphs.map((s) => s.name);
  }
}
