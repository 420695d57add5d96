import type { FetchAlias, PathSegment, RepresentationField, RepresentationSpec } from './query-plan.js';
import { SelectionTree } from './selection-tree.js';

/** Representation fields of one entity type, collected while planning. */
export class RepresentationBuilder {
  readonly typeCondition: string;
  readonly typename: RepresentationSpec['typename'];
  private readonly fields: RepresentationField[] = [];

  constructor(typeCondition: string, typename: RepresentationSpec['typename']) {
    this.typeCondition = typeCondition;
    this.typename = typename;
  }

  add(fields: readonly RepresentationField[]): void {
    mergeRepresentationFields(this.fields, fields);
  }

  /** False when a field would be sent under the same name with a different value (another alias). */
  compatible(fields: readonly RepresentationField[]): boolean {
    return fields.every((field) => !this.fields.some((f) => f.name === field.name && f.responseKey !== field.responseKey));
  }

  build(): RepresentationSpec {
    return { typeCondition: this.typeCondition, typename: this.typename, fields: this.fields };
  }
}

function mergeRepresentationFields(into: RepresentationField[], fields: readonly RepresentationField[]): void {
  for (const field of fields) {
    const existing = into.find((f) => f.name === field.name && f.responseKey === field.responseKey && f.typeCondition === field.typeCondition);
    if (!existing) {
      into.push({ ...field, children: field.children ? [...field.children] : undefined });
    } else if (field.children && existing.children) {
      mergeRepresentationFields(existing.children as RepresentationField[], field.children);
    }
  }
}

/**
 * One future subgraph call, grown while the planner walks the operation:
 * the selection to send, where its results go, and what must run first.
 */
export class FetchGroup {
  readonly id: number;
  readonly subgraph: string;
  readonly kind: 'root' | 'entity';
  readonly operationType: 'query' | 'mutation' | 'subscription';
  /** Root: the selection on the root type. Entity: the selection under `_entities`, one fragment per type. */
  readonly tree = new SelectionTree();
  /** Where entity results merge (empty for root fetches). */
  readonly mergePath: readonly PathSegment[];
  /** Root fields of a mutation run one after the other; groups never span two of them. */
  readonly scope: number;
  readonly representations = new Map<string, RepresentationBuilder>();
  readonly dependsOn = new Set<FetchGroup>();
  /** Fields sent under an alias because their response key clashed inside this fetch. */
  readonly aliases: FetchAlias[] = [];
  /**
   * Entity groups of other paths merged into this one call (merge-fetches.ts):
   * their objects are looked up in the same `_entities` call. Their own
   * `mergePath` and representations still say where to find the objects.
   */
  readonly mergedWith: FetchGroup[] = [];

  constructor(id: number, subgraph: string, kind: 'root' | 'entity', operationType: 'query' | 'mutation' | 'subscription', mergePath: readonly PathSegment[], scope: number) {
    this.id = id;
    this.subgraph = subgraph;
    this.kind = kind;
    this.operationType = operationType;
    this.mergePath = mergePath;
    this.scope = scope;
  }

  representation(typeCondition: string, typename: RepresentationSpec['typename']): RepresentationBuilder {
    let builder = this.representations.get(typeCondition);
    if (!builder) {
      builder = new RepresentationBuilder(typeCondition, typename);
      this.representations.set(typeCondition, builder);
    }
    return builder;
  }

  /** Whether representation fields can join this group's representation of a type. */
  acceptsRepresentation(typeCondition: string, fields: readonly RepresentationField[]): boolean {
    return this.representations.get(typeCondition)?.compatible(fields) ?? true;
  }

  /** Whether this group waits, directly or through others, for `other`. */
  dependsOnTransitively(other: FetchGroup, seen = new Set<FetchGroup>()): boolean {
    if (this === other) return true;
    for (const dependency of this.dependsOn) {
      if (seen.has(dependency)) continue;
      seen.add(dependency);
      if (dependency.dependsOnTransitively(other, seen)) return true;
    }
    return false;
  }
}
