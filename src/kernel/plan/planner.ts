import { Kind, type ArgumentNode, type SelectionSetNode } from 'graphql';
import { RouterError } from '../errors.js';
import type { FederationIndex } from '../graph/federation-index.js';
import { subFieldSet } from '../graph/field-set.js';
import type { KeyDef } from '../graph/supergraph-model.js';
import { FetchGroup } from './fetch-group.js';
import type { NField, NFragment, NormalizedOperation, NSelection } from './normalize.js';
import type { PathSegment, RepresentationField, RepresentationSpec } from './query-plan.js';
import type { SelectionTree } from './selection-tree.js';
import { estimateJumps } from './estimate.js';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);
const MAX_KEY_DEPTH = 6;

/** A place in a fetch group's selection where fields for one response position go. */
interface Position {
  readonly group: FetchGroup;
  readonly tree: SelectionTree;
  /** Response path of the objects (with `@` for list items and `... on T` for type conditions). */
  readonly path: readonly PathSegment[];
  /** Static type of the objects at this position. */
  readonly parentType: string;
  /** What `@provides` makes resolvable here, if anything. */
  readonly provided: SelectionSetNode | undefined;
  /** The client's selections at this position, to keep internal fields off its response keys. */
  readonly clientSelections: readonly NSelection[] | undefined;
  /** How many key look-ups deep a key-field resolution is (guards against loops). */
  readonly keyDepth: number;
}

/** A subgraph the planner can jump to for a field, and as which type. */
interface JumpTarget {
  readonly subgraph: string;
  /** Type named in `... on X` under `_entities` (an interface when the target knows it as an interface object). */
  readonly entityType: string;
  readonly typename: RepresentationSpec['typename'];
}

/** The fetch groups of a plan and what the router answers itself. */
export interface PlannedGroups {
  readonly groups: readonly FetchGroup[];
  /** Root fields answered locally by introspection. */
  readonly introspectionFields: readonly NField[];
}

/**
 * Walks the normalized operation and assigns every field to a subgraph
 * fetch: the current subgraph when it can resolve the field, else an entity
 * jump through `@key` to one that can (with `@requires` fields fetched first).
 */
export class Planner {
  private readonly groups: FetchGroup[] = [];
  private readonly rootGroups = new Map<string, FetchGroup>();
  private readonly entityGroups = new Map<string, FetchGroup[]>();
  private readonly introspectionFields: NField[] = [];

  constructor(
    private readonly index: FederationIndex,
    private readonly operation: NormalizedOperation,
  ) {}

  plan(): PlannedGroups {
    const { operation } = this;
    if (operation.operationType === 'subscription') {
      throw new RouterError('GRAPHQL_VALIDATION_FAILED', 'Subscriptions are not supported by this router yet.', { status: 400 });
    }
    const rootFields = operation.selections.filter((s): s is NField => s.kind === 'Field');
    let scope = 0;
    let previous: FetchGroup | undefined;
    for (const field of rootFields) {
      if (field.name === '__typename') continue;
      if (INTROSPECTION_FIELDS.has(field.name)) {
        this.introspectionFields.push(field);
        continue;
      }
      const subgraph = this.chooseRootSubgraph(field);
      let group: FetchGroup;
      if (operation.operationType === 'mutation') {
        // Mutation fields run in order; consecutive ones to the same subgraph share one call.
        if (previous && previous.subgraph === subgraph) group = previous;
        else group = this.newGroup(subgraph, 'root', [], ++scope);
        previous = group;
      } else {
        group = this.rootGroups.get(subgraph) ?? this.newGroup(subgraph, 'root', [], 0);
        this.rootGroups.set(subgraph, group);
      }
      this.planField(this.rootPosition(group), field);
    }
    return { groups: this.groups.filter((g) => !g.tree.isEmpty), introspectionFields: this.introspectionFields };
  }

  private rootPosition(group: FetchGroup): Position {
    return {
      group,
      tree: group.tree,
      path: [],
      parentType: this.operation.rootType,
      provided: undefined,
      clientSelections: this.operation.selections,
      keyDepth: 0,
    };
  }

  private newGroup(subgraph: string, kind: 'root' | 'entity', mergePath: readonly PathSegment[], scope: number): FetchGroup {
    const operationType = kind === 'entity' ? 'query' : this.operation.operationType;
    const group = new FetchGroup(this.groups.length, subgraph, kind, operationType, mergePath, scope);
    this.groups.push(group);
    return group;
  }

  private chooseRootSubgraph(field: NField): string {
    const rootType = this.operation.rootType;
    const candidates = this.index.subgraphNames().filter((s) => this.index.canResolve(rootType, field.name, s));
    if (candidates.length === 0) {
      throw planningError(`no subgraph resolves ${rootType}.${field.name}`);
    }
    if (candidates.length === 1) return candidates[0]!;
    const childType = this.index.fieldNamedType(rootType, field.name);
    let best = candidates[0]!;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const candidate of candidates) {
      const provided = this.index.fieldSource(rootType, field.name, candidate)?.provides;
      const jumps = field.selections ? estimateJumps(this.index, candidate, childType, field.selections, provided) : 0;
      // Joining a root fetch that already exists saves a call.
      const cost = jumps * 2 + (this.rootGroups.has(candidate) ? 0 : 1);
      if (cost < bestCost) {
        best = candidate;
        bestCost = cost;
      }
    }
    return best;
  }

  /** Plans a list of selections at a position; returns every group that holds part of their data. */
  private planSelections(position: Position, selections: readonly NSelection[]): Set<FetchGroup> {
    const holders = new Set<FetchGroup>();
    for (const selection of selections) {
      const groups = selection.kind === 'Field' ? this.planField(position, selection) : this.planFragment(position, selection);
      for (const group of groups) holders.add(group);
    }
    return holders;
  }

  private planFragment(position: Position, fragment: NFragment): Set<FetchGroup> {
    const condition = fragment.typeCondition;
    const { index } = this;
    const subgraph = position.group.subgraph;
    if (condition === position.parentType) return this.planSelections(position, fragment.selections);
    const here = index.possibleTypesIn(position.parentType, subgraph);
    const conditionHere = index.possibleTypesIn(condition, subgraph);
    const usable =
      index.hasType(condition, subgraph) &&
      (index.isInterfaceObjectIn(position.parentType, subgraph) || conditionHere.some((t) => here.includes(t)));
    if (usable && !index.isInterfaceObjectIn(position.parentType, subgraph)) {
      const tree = position.tree.fragment(condition);
      if (index.isAbstract(condition)) tree.addTypename();
      return this.planSelections(
        {
          ...position,
          tree,
          parentType: condition,
          path: [...position.path, `... on ${condition}`],
          clientSelections: fragment.selections,
        },
        fragment.selections,
      );
    }
    // The subgraph cannot express this condition here: spell it out per object type it can return.
    const holders = new Set<FetchGroup>();
    const runtimeTypes = index.isAbstract(position.parentType) ? this.runtimeTypesAt(position) : [position.parentType];
    for (const objectType of index.possibleTypes(condition)) {
      if (!runtimeTypes.includes(objectType) || objectType === condition) continue;
      for (const group of this.planFragment(position, { kind: 'Fragment', typeCondition: objectType, selections: fragment.selections })) {
        holders.add(group);
      }
    }
    return holders;
  }

  /** Object types the current subgraph can hand back at an abstract position. */
  private runtimeTypesAt(position: Position): readonly string[] {
    const { index } = this;
    const subgraph = position.group.subgraph;
    if (index.isInterfaceObjectIn(position.parentType, subgraph)) return index.possibleTypes(position.parentType);
    return index.possibleTypesIn(position.parentType, subgraph);
  }

  private resolvableHere(position: Position, fieldName: string): boolean {
    if (fieldName === '__typename') return true;
    if (position.provided && subFieldSet(position.provided, fieldName)) return true;
    return this.index.canResolve(position.parentType, fieldName, position.group.subgraph);
  }

  private planField(position: Position, field: NField): Set<FetchGroup> {
    const { index } = this;
    if (field.name === '__typename') {
      if (field.responseKey !== '__typename' || index.isAbstract(position.parentType)) position.tree.addTypename();
      return new Set([position.group]);
    }
    if (this.resolvableHere(position, field.name)) return this.planLocalField(position, field);
    if (index.isAbstract(position.parentType) && !index.isInterfaceObjectIn(position.parentType, position.group.subgraph)) {
      const holders = new Set<FetchGroup>();
      for (const objectType of this.runtimeTypesAt(position)) {
        const groups = this.planFragment(position, { kind: 'Fragment', typeCondition: objectType, selections: [field] });
        for (const group of groups) holders.add(group);
      }
      return holders;
    }
    return this.planJump(position, field);
  }

  private planLocalField(position: Position, field: NField): Set<FetchGroup> {
    const { index } = this;
    const subgraph = position.group.subgraph;
    const added = position.tree.add(field.responseKey, field.name, field.arguments, field.selections !== undefined);
    if (!added) throw planningError(`response key "${field.responseKey}" is used twice at ${position.path.join('.') || 'the root'}`);
    const holders = new Set<FetchGroup>([position.group]);
    if (!field.selections || !added.children) return holders;
    const childType = index.fieldNamedType(position.parentType, field.name);
    const provided =
      subFieldSet(position.provided, field.name)?.selectionSet ?? index.fieldSource(position.parentType, field.name, subgraph)?.provides;
    if (index.isAbstract(childType)) added.children.addTypename();
    const childPath = [...position.path, field.responseKey];
    for (let depth = index.fieldListDepth(position.parentType, field.name); depth > 0; depth--) childPath.push('@');
    const childPosition: Position = {
      group: position.group,
      tree: added.children,
      path: childPath,
      parentType: childType,
      provided,
      clientSelections: field.selections,
      keyDepth: position.keyDepth,
    };
    for (const group of this.planSelections(childPosition, field.selections)) holders.add(group);
    return holders;
  }

  /** Moves a field the current subgraph cannot resolve to one that can, through an entity key. */
  private planJump(position: Position, field: NField): Set<FetchGroup> {
    const targets = this.jumpTargets(position, field);
    if (targets.length === 0) {
      throw planningError(
        `cannot reach ${position.parentType}.${field.name} from subgraph "${position.group.subgraph}" at ${position.path.join('.') || 'the root'}`,
      );
    }
    const target = this.chooseTarget(position, field, targets);
    const key = this.chooseKey(position, target);
    if (!key) {
      throw planningError(`no key of ${target.entityType} in "${target.subgraph}" can be obtained from "${position.group.subgraph}"`);
    }
    position.tree.addTypename();
    const dependencies = new Set<FetchGroup>();
    const representation: RepresentationField[] = [];
    const keyPart = this.fetchFieldSet(position, key.selectionSet, target.entityType);
    for (const group of keyPart.holders) dependencies.add(group);
    representation.push(...keyPart.fields);
    const requires = this.index.fieldSource(target.entityType, field.name, target.subgraph)?.requires;
    if (requires) {
      const requiredPart = this.fetchFieldSet(position, requires, target.entityType);
      for (const group of requiredPart.holders) dependencies.add(group);
      representation.push(...requiredPart.fields);
    }
    const group = this.entityGroup(target.subgraph, position, dependencies);
    for (const dependency of dependencies) if (dependency !== group) group.dependsOn.add(dependency);
    group.representation(target.entityType, target.typename).add(representation);
    const entityPosition: Position = {
      group,
      tree: group.tree.fragment(target.entityType),
      path: position.path,
      parentType: target.entityType,
      provided: undefined,
      clientSelections: position.clientSelections,
      keyDepth: position.keyDepth,
    };
    const holders = this.planField(entityPosition, field);
    holders.add(group);
    return holders;
  }

  private jumpTargets(position: Position, field: NField): JumpTarget[] {
    const { index } = this;
    const from = position.group.subgraph;
    const objectType = position.parentType;
    const targets: JumpTarget[] = [];
    for (const subgraph of index.subgraphNames()) {
      if (subgraph === from) continue;
      if (index.canResolve(objectType, field.name, subgraph) && index.resolvableKeys(objectType, subgraph).length > 0) {
        targets.push({ subgraph, entityType: objectType, typename: { kind: 'runtime' } });
        continue;
      }
      // Fields an interface object adds: ask the subgraph about the interface.
      for (const [interfaceName] of index.type(objectType)?.implementsIn ?? []) {
        if (
          index.isInterfaceObjectIn(interfaceName, subgraph) &&
          index.canResolve(interfaceName, field.name, subgraph) &&
          index.resolvableKeys(interfaceName, subgraph).length > 0
        ) {
          targets.push({ subgraph, entityType: interfaceName, typename: { kind: 'fixed', name: interfaceName } });
          break;
        }
      }
    }
    return targets;
  }

  private chooseTarget(position: Position, field: NField, targets: readonly JumpTarget[]): JumpTarget {
    if (targets.length === 1) return targets[0]!;
    let best = targets[0]!;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const target of targets) {
      const existing = this.entityGroups.get(this.entityGroupKey(target.subgraph, position))?.length ?? 0;
      const keyLocal = this.index.resolvableKeys(target.entityType, target.subgraph).some((k) => this.fieldSetLocal(position, k.selectionSet));
      const childType = this.index.fieldNamedType(target.entityType, field.name);
      const jumps = field.selections ? estimateJumps(this.index, target.subgraph, childType, field.selections, undefined) : 0;
      const requires = this.index.fieldSource(target.entityType, field.name, target.subgraph)?.requires ? 1 : 0;
      const cost = jumps * 2 + (existing > 0 ? 0 : 1) + (keyLocal ? 0 : 3) + requires;
      if (cost < bestCost) {
        best = target;
        bestCost = cost;
      }
    }
    return best;
  }

  /** Prefers a key the current subgraph resolves by itself; else one reachable through another jump. */
  private chooseKey(position: Position, target: JumpTarget): KeyDef | undefined {
    const keys = this.index.resolvableKeys(target.entityType, target.subgraph);
    const local = keys.find((key) => this.fieldSetLocal(position, key.selectionSet));
    if (local) return local;
    if (position.keyDepth >= MAX_KEY_DEPTH) return undefined;
    return keys.find((key) => this.fieldSetReachable(position, key.selectionSet));
  }

  /** Whether every field of a field set resolves in the position's subgraph. */
  private fieldSetLocal(position: Position, set: SelectionSetNode, parentType = position.parentType, provided = position.provided): boolean {
    for (const selection of set.selections) {
      if (selection.kind !== Kind.FIELD) return false;
      const name = selection.name.value;
      const providedHere = provided ? subFieldSet(provided, name) : undefined;
      if (!providedHere && !this.index.canResolve(parentType, name, position.group.subgraph)) return false;
      if (selection.selectionSet) {
        const childType = this.index.fieldNamedType(parentType, name);
        const childProvided = providedHere?.selectionSet ?? this.index.fieldSource(parentType, name, position.group.subgraph)?.provides;
        if (!this.fieldSetLocal(position, selection.selectionSet, childType, childProvided)) return false;
      }
    }
    return true;
  }

  /** Whether every top-level field of a field set resolves somewhere the position can reach. */
  private fieldSetReachable(position: Position, set: SelectionSetNode): boolean {
    const from = position.group.subgraph;
    return set.selections.every((selection) => {
      if (selection.kind !== Kind.FIELD) return false;
      const name = selection.name.value;
      if (this.resolvableHere(position, name)) return true;
      return this.index.subgraphNames().some(
        (s) =>
          s !== from &&
          this.index.canResolve(position.parentType, name, s) &&
          this.index.resolvableKeys(position.parentType, s).some((k) => this.fieldSetLocal(position, k.selectionSet)),
      );
    });
  }

  /**
   * Makes sure a field set (a key or `@requires`) is fetched at the position:
   * plans its fields like client fields under keys that do not clash with the
   * client's, and reports where the representation finds them.
   */
  private fetchFieldSet(position: Position, set: SelectionSetNode, typeName: string): { holders: Set<FetchGroup>; fields: RepresentationField[] } {
    const converted = this.convertFieldSet(set, position.clientSelections, typeName);
    const holders = this.planSelections({ ...position, keyDepth: position.keyDepth + 1 }, converted.selections);
    return { holders, fields: converted.fields };
  }

  private convertFieldSet(
    set: SelectionSetNode,
    clientSelections: readonly NSelection[] | undefined,
    parentType: string,
  ): { selections: NSelection[]; fields: RepresentationField[] } {
    const selections: NSelection[] = [];
    const fields: RepresentationField[] = [];
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition?.name.value ?? parentType;
        const inner = this.convertFieldSet(selection.selectionSet, clientSelections, condition);
        selections.push({ kind: 'Fragment', typeCondition: condition, selections: inner.selections });
        fields.push(...inner.fields);
        continue;
      }
      if (selection.kind !== Kind.FIELD) continue;
      const name = selection.name.value;
      const args = selection.arguments ?? [];
      const responseKey = internalKey(clientSelections, name, args);
      let children: { selections: NSelection[]; fields: RepresentationField[] } | undefined;
      if (selection.selectionSet) {
        const clientChild = findClientField(clientSelections, responseKey)?.selections;
        children = this.convertFieldSet(selection.selectionSet, clientChild, this.index.fieldNamedType(parentType, name));
      }
      selections.push({ kind: 'Field', responseKey, name, arguments: args, selections: children?.selections });
      fields.push({ name, responseKey, children: children?.fields });
    }
    return { selections, fields };
  }

  private entityGroupKey(subgraph: string, position: Position): string {
    return `${position.group.scope}|${subgraph}|${position.path.join('.')}`;
  }

  /** Reuses a group that fetches from the same subgraph at the same path, unless that would create a cycle. */
  private entityGroup(subgraph: string, position: Position, dependencies: ReadonlySet<FetchGroup>): FetchGroup {
    const key = this.entityGroupKey(subgraph, position);
    const candidates = this.entityGroups.get(key) ?? [];
    for (const candidate of candidates) {
      let cycle = false;
      for (const dependency of dependencies) {
        if (dependency !== candidate && dependency.dependsOnTransitively(candidate)) cycle = true;
      }
      if (!cycle && !dependencies.has(candidate)) return candidate;
    }
    const group = this.newGroup(subgraph, 'entity', position.path, position.group.scope);
    candidates.push(group);
    this.entityGroups.set(key, candidates);
    return group;
  }
}

function findClientField(selections: readonly NSelection[] | undefined, responseKey: string): NField | undefined {
  for (const selection of selections ?? []) {
    if (selection.kind === 'Field') {
      if (selection.responseKey === responseKey) return selection;
    } else {
      const found = findClientField(selection.selections, responseKey);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * The response key for a field the planner adds: its own name unless the
 * client uses that key for something else, in which case an internal alias.
 */
function internalKey(clientSelections: readonly NSelection[] | undefined, name: string, args: readonly ArgumentNode[]): string {
  const argsText = args.map((a) => `${a.name.value}:${JSON.stringify(a.value)}`).join(',');
  const natural = findClientField(clientSelections, name);
  if (args.length === 0 && (!natural || (natural.name === name && natural.arguments.length === 0))) return name;
  return `__sy_${name}${args.length > 0 ? `_${hash(argsText)}` : ''}`;
}

function hash(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = ((h << 5) + h + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}

function planningError(message: string): RouterError {
  return new RouterError('QUERY_PLANNING_FAILED', `Query planning failed: ${message}`, { status: 500 });
}
