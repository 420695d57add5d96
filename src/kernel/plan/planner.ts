import { Kind, type FieldNode, type SelectionSetNode } from 'graphql';
import type { FederationIndex } from '../graph/federation-index.js';
import { subFieldSet } from '../graph/field-set.js';
import type { KeyDef } from '../graph/supergraph-model.js';
import { estimateJumps } from './estimate.js';
import { FetchGroup } from './fetch-group.js';
import type { NField, NFragment, NormalizedOperation, NSelection } from './normalize.js';
import { sharedUnionMembers } from './partial-unions.js';
import { ClientKeys, convertFieldSet, INTERNAL_MARK, planningError, providedFor } from './planner-support.js';
import type { PathSegment, RepresentationField, RepresentationSpec } from './query-plan.js';
import type { SelectionTree } from './selection-tree.js';

const INTROSPECTION_FIELDS = new Set(['__schema', '__type']);
const MAX_KEY_DEPTH = 6;

/** One step from a position to a child position: through a field, or a type condition. */
type PathStep = { readonly kind: 'field'; readonly field: NField; readonly parentType: string } | { readonly kind: 'fragment'; readonly typeCondition: string };

/** A place in a fetch group's selection where fields for one response position go. */
interface Position {
  readonly group: FetchGroup;
  readonly tree: SelectionTree;
  /** Response path of the objects (with `@` for list items and `... on T` for type conditions). */
  readonly path: readonly PathSegment[];
  /** Static type of the objects at this position, as the group's subgraph sees it. */
  readonly parentType: string;
  /** What `@provides` makes resolvable here, if anything. */
  readonly provided: SelectionSetNode | undefined;
  /** How many key look-ups deep a key-field resolution is (guards against loops). */
  readonly keyDepth: number;
  /** The position this one was reached from, for jumps that re-fetch a path from an ancestor. */
  readonly parent: { readonly position: Position; readonly step: PathStep } | undefined;
  /** Fields whose `@requires` were fetched for this entity position (resolve them here, do not jump again). */
  readonly requiresMet: ReadonlySet<string>;
  /** For a position inside an entity fetch: the position it was entered from (same objects, another subgraph). */
  readonly origin?: Position;
  /** At a partial union several subgraphs could serve: the only members resolved (see partial-unions.ts). */
  readonly members?: readonly string[];
}

/** A subgraph the planner can jump to for a field, and as which type. */
interface JumpTarget {
  readonly subgraph: string;
  /** Type named in `... on X` under `_entities` (an interface when the target knows it as an interface object). */
  readonly entityType: string;
  readonly typename: RepresentationSpec['typename'];
}

/** Where a field is re-fetched from: the steps to it from an ancestor, in another subgraph. */
interface Reentry {
  readonly subgraph: string;
  readonly steps: PathStep[];
  /** The ancestor entity position whose key the re-fetch uses, or the root of a query. */
  readonly source: Position | 'root';
}

/** The fetch groups of a plan and what the router answers itself. */
export interface PlannedGroups {
  readonly groups: readonly FetchGroup[];
  /** Root fields answered locally by introspection. */
  readonly introspectionFields: readonly NField[];
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Walks the normalized operation and assigns every field to a subgraph
 * fetch: the current subgraph when it can resolve the field, else an entity
 * jump through `@key` to one that can (with `@requires` fields fetched
 * first), else a re-fetch of the path from the nearest ancestor entity (or
 * the root) in a subgraph that can resolve the whole path.
 */
export class Planner {
  private readonly groups: FetchGroup[] = [];
  private readonly rootGroups = new Map<string, FetchGroup>();
  private readonly entityGroups = new Map<string, FetchGroup[]>();
  /** `obtainableFields` answers of this plan, by subgraph, type, excluded target, key depth and field names. */
  private readonly obtainable = new Map<string, ReadonlyMap<string, number>>();
  private readonly introspectionFields: NField[] = [];
  /** The client's response keys, for the fields the planner adds itself (made on the first one). */
  private clientKeys: ClientKeys | undefined;

  constructor(
    private readonly index: FederationIndex,
    private readonly operation: NormalizedOperation,
  ) {}

  plan(): PlannedGroups {
    const { operation } = this;
    const rootFields = operation.selections.filter((s): s is NField => s.kind === 'Field');
    const fetched = rootFields.filter((field) => field.name !== '__typename' && !INTROSPECTION_FIELDS.has(field.name));
    for (const field of rootFields) if (INTROSPECTION_FIELDS.has(field.name)) this.introspectionFields.push(field);
    const candidates = fetched.map((field) => this.rootCandidates(field));
    const mutation = operation.operationType === 'mutation';
    let scope = 0;
    let previous: FetchGroup | undefined;
    const choice = rootChoice(candidates, mutation, (s) => (mutation ? previous?.subgraph === s : this.rootGroups.has(s)));
    fetched.forEach((field, i) => {
      const subgraph = this.chooseRootSubgraph(field, candidates[i]!, (s) => choice.joins(i, s), choice.sharers);
      let group: FetchGroup;
      if (mutation) {
        // Mutation fields run in order; consecutive ones to the same subgraph share one call.
        if (previous && previous.subgraph === subgraph) group = previous;
        else group = this.newGroup(subgraph, 'root', [], ++scope);
        previous = group;
      } else {
        group = this.rootGroup(subgraph);
      }
      this.planField(this.rootPosition(group), field);
      // Each mutation field's whole result, its selections from other subgraphs included, comes before the next
      // field runs (GraphQL's serial execution): a field whose selection needs another fetch ends its call.
      if (mutation && this.groups.some((other) => other !== group && other.scope === group.scope)) previous = undefined;
    });
    return { groups: this.groups.filter((g) => !g.tree.isEmpty), introspectionFields: this.introspectionFields };
  }

  private rootGroup(subgraph: string): FetchGroup {
    let group = this.rootGroups.get(subgraph);
    if (!group) {
      group = this.newGroup(subgraph, 'root', [], 0);
      this.rootGroups.set(subgraph, group);
    }
    return group;
  }

  private rootPosition(group: FetchGroup): Position {
    return {
      group,
      tree: group.tree,
      path: [],
      parentType: this.operation.rootType,
      provided: undefined,
      keyDepth: 0,
      parent: undefined,
      requiresMet: NONE,
    };
  }

  private newGroup(subgraph: string, kind: 'root' | 'entity', mergePath: readonly PathSegment[], scope: number): FetchGroup {
    const operationType = kind === 'entity' ? 'query' : this.operation.operationType;
    const group = new FetchGroup(this.groups.length, subgraph, kind, operationType, mergePath, scope);
    this.groups.push(group);
    return group;
  }

  /** Subgraphs that resolve a root field. */
  private rootCandidates(field: NField): readonly string[] {
    const rootType = this.operation.rootType;
    const candidates = this.index.subgraphNames().filter((s) => this.index.canResolve(rootType, field.name, s));
    if (candidates.length === 0) throw planningError(`no subgraph resolves ${rootType}.${field.name}`);
    return candidates;
  }

  /**
   * Picks the subgraph for a root field by planning the field in each
   * candidate on a scratch planner: fewest fetches first (a root fetch the
   * field can ride along with, per `joins`, costs none), then fewest further
   * fetches (entity calls wait for the root fetch), then the subgraph more of the
   * other root fields can go to, then fewest fields fetched through entity
   * calls; a candidate that cannot plan is skipped.
   */
  private chooseRootSubgraph(field: NField, candidates: readonly string[], joins: (subgraph: string) => boolean, sharers: (subgraph: string) => number): string {
    if (candidates.length === 1) return candidates[0]!;
    let best: string | undefined;
    let bestCost: readonly number[] | undefined;
    let firstError: unknown;
    for (const candidate of candidates) {
      const scratch = new Planner(this.index, this.operation);
      try {
        scratch.planField(scratch.rootPosition(scratch.newGroup(candidate, 'root', [], 0)), field);
      } catch (error) {
        firstError ??= error;
        continue;
      }
      // Fetches besides the root one: entity calls after it (or another subgraph's root re-fetch).
      const further = scratch.groups.length - 1;
      const cost = [further + (joins(candidate) ? 0 : 1), further, -sharers(candidate), scratch.entityFieldCount()];
      if (!bestCost || lexicallyLess(cost, bestCost)) {
        best = candidate;
        bestCost = cost;
      }
    }
    if (best === undefined) throw firstError;
    return best;
  }

  /** Fields fetched through entity calls: the tie-breaker between plans with as many fetches. */
  private entityFieldCount(): number {
    return this.groups.filter((g) => g.kind === 'entity').reduce((sum, g) => sum + g.tree.fieldCount(), 0);
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
    if (index.isInterfaceObjectIn(position.parentType, subgraph)) {
      // The subgraph only knows the interface: ask a subgraph that knows the implementations.
      return this.planThroughEntityInterface(position, [fragment]);
    }
    const here = this.runtimeTypesAt(position);
    // Objects here that the client's condition covers (by the supergraph), and whether the subgraph's
    // own view of the condition covers them all: implementations can differ per subgraph.
    // An object condition covers itself only: one scan of `here`, not a check per type (`here` may hold thousands).
    const needed = index.isAbstract(condition) ? here.filter((t) => index.satisfies(t, condition)) : here.includes(condition) ? [condition] : [];
    const conditionHere = index.possibleTypesIn(condition, subgraph);
    if (index.hasType(condition, subgraph) && needed.length > 0 && needed.every((t) => conditionHere.includes(t))) {
      const tree = position.tree.fragment(condition);
      if (index.isAbstract(condition)) tree.addTypename();
      return this.planSelections(
        {
          ...position,
          tree,
          parentType: condition,
          path: [...position.path, `... on ${condition}`],
          provided: providedFor(index, position.provided, condition),
          parent: { position, step: { kind: 'fragment', typeCondition: condition } },
        },
        fragment.selections,
      );
    }
    // The subgraph cannot express this condition here: spell it out per object type it can return.
    const holders = new Set<FetchGroup>();
    for (const objectType of needed) {
      if (objectType === condition) continue;
      for (const group of this.planFragment(position, { kind: 'Fragment', typeCondition: objectType, selections: fragment.selections })) {
        holders.add(group);
      }
    }
    return holders;
  }

  /** Object types the current subgraph can hand back at a position. */
  private runtimeTypesAt(position: Position): readonly string[] {
    const { index } = this;
    const subgraph = position.group.subgraph;
    if (!index.isAbstract(position.parentType)) return [position.parentType];
    if (index.isInterfaceObjectIn(position.parentType, subgraph)) return index.possibleTypes(position.parentType);
    const types = index.possibleTypesIn(position.parentType, subgraph);
    const { members } = position;
    return members ? types.filter((t) => members.includes(t)) : types;
  }

  private resolvableHere(position: Position, fieldName: string): boolean {
    if (fieldName === '__typename') return true;
    if (position.provided && subFieldSet(position.provided, fieldName)) return true;
    return this.index.canResolve(position.parentType, fieldName, position.group.subgraph);
  }

  private planField(position: Position, field: NField): Set<FetchGroup> {
    const { index } = this;
    const subgraph = position.group.subgraph;
    const interfaceObject = index.isInterfaceObjectIn(position.parentType, subgraph);
    if (field.name === '__typename') {
      // An interface object only knows its interface's name; the real type comes from its owner.
      if (interfaceObject && position.path.length > 0) return this.planThroughEntityInterface(position, [field]);
      if (field.responseKey !== '__typename' || index.isAbstract(position.parentType)) position.tree.addTypename();
      return new Set([position.group]);
    }
    if (this.resolvableHere(position, field.name)) {
      const provided = position.provided && subFieldSet(position.provided, field.name);
      const requires = index.fieldSource(position.parentType, field.name, subgraph)?.requires;
      if (!requires || provided || position.requiresMet.has(field.name)) return this.planLocalField(position, field);
      // `@requires` needs an `_entities` call carrying the required fields, even to this same subgraph;
      // an interface object there knows only its interface's name, whatever the object's real type.
      const typename = interfaceObject ? ({ kind: 'fixed', name: position.parentType } as const) : ({ kind: 'runtime' } as const);
      return this.planJump(position, field, [{ subgraph, entityType: position.parentType, typename }]);
    }
    const runtimeTypes = this.runtimeTypesAt(position);
    if (index.isAbstract(position.parentType) && !interfaceObject && runtimeTypes.length > 0) {
      const holders = new Set<FetchGroup>();
      for (const objectType of runtimeTypes) {
        const groups = this.planFragment(position, { kind: 'Fragment', typeCondition: objectType, selections: [field] });
        for (const group of groups) holders.add(group);
      }
      return holders;
    }
    const targets = this.jumpTargets(position, field);
    // A target whose key takes a chain of other keys is the last resort: a re-fetch through an ancestor comes first.
    const direct = targets.filter((target) => this.keyHops(position, target) <= 1);
    if (direct.length > 0) return this.planJump(position, field, direct);
    const reentry = this.planReentry(position, field);
    if (reentry) return reentry;
    if (targets.length > 0) return this.planJump(position, field, targets);
    throw planningError(`cannot reach ${position.parentType}.${field.name} from subgraph "${subgraph}" at ${position.path.join('.') || 'the root'}`);
  }

  private planLocalField(position: Position, field: NField): Set<FetchGroup> {
    const { index } = this;
    const subgraph = position.group.subgraph;
    // Two fields may share a key when their types have the same shape: same wrappers, and the same leaf type.
    const typeText = field.selections
      ? index.fieldTypeTextIn(position.parentType, field.name, subgraph).replace(/\w+/, '#')
      : index.fieldTypeTextIn(position.parentType, field.name, subgraph);
    const composite = field.selections !== undefined;
    let added = position.tree.add(field.responseKey, field.name, field.arguments, composite, typeText);
    if (!added) {
      // The key holds another type elsewhere in this fetch: send under an alias, renamed back on arrival.
      let alias = `${field.responseKey}${INTERNAL_MARK}${position.group.aliases.length}`;
      // A client may write `rel__sy_0` itself: the planner's alias must not take its place.
      while (this.keys().has(alias)) alias += '_';
      added = position.tree.add(alias, field.name, field.arguments, composite, typeText);
      if (!added) throw planningError(`response key "${field.responseKey}" is used twice at ${position.path.join('.') || 'the root'}`);
      position.group.aliases.push({ path: position.path.slice(position.group.mergePath.length), alias, responseKey: field.responseKey });
    }
    const holders = new Set<FetchGroup>([position.group]);
    if (!field.selections || !added.children) return holders;
    const childType = index.fieldNamedTypeIn(position.parentType, field.name, subgraph);
    const provided = subFieldSet(position.provided, field.name)?.selectionSet ?? index.fieldSource(position.parentType, field.name, subgraph)?.provides;
    // The client-facing type may be abstract where this subgraph's is not (`@join__field(type:)`).
    if (index.isAbstract(childType) || index.isAbstract(index.fieldNamedType(position.parentType, field.name))) added.children.addTypename();
    const step: PathStep = { kind: 'field', field, parentType: position.parentType };
    const childPosition: Position = {
      group: position.group,
      tree: added.children,
      path: childPath(index, position, field),
      parentType: childType,
      // At an abstract position fragments of the provided set apply per type condition, later.
      provided: index.isAbstract(childType) ? provided : providedFor(index, provided, childType),
      keyDepth: position.keyDepth,
      parent: { position, step },
      requiresMet: NONE,
      members: index.type(childType)?.kind === 'UNION' ? sharedUnionMembers(index, this.operation.rootType, [...stepsTo(position), step], childType, subgraph) : undefined,
    };
    for (const group of this.planSelections(childPosition, field.selections)) holders.add(group);
    return holders;
  }

  /** Moves a field to another subgraph (or the same one, for `@requires`) through an entity key. */
  private planJump(position: Position, field: NField, targets: readonly JumpTarget[]): Set<FetchGroup> {
    const target = this.chooseTarget(position, field, targets);
    const requires = this.index.fieldSource(target.entityType, field.name, target.subgraph)?.requires;
    const entry = this.enterEntity(position, target, requires, field.name);
    return this.withGroup(this.planField(entry, field), entry.group);
  }

  /**
   * Opens (or joins) an entity fetch to `target` for the objects at the
   * position: fetches the key (and `@requires` fields) where they are, and
   * returns the position inside the `_entities` selection.
   */
  private enterEntity(position: Position, target: JumpTarget, requires: SelectionSetNode | undefined, requiresFor?: string): Position {
    const key = this.chooseKey(position, target);
    if (!key) {
      throw planningError(`no key of ${target.entityType} in "${target.subgraph}" can be obtained from "${position.group.subgraph}"`);
    }
    if (needsTypename(this.index, position, target)) position.tree.addTypename();
    const dependencies = new Set<FetchGroup>();
    const representation: RepresentationField[] = [];
    const keyPart = this.fetchFieldSet(position, key.selectionSet, target.entityType);
    for (const group of keyPart.holders) dependencies.add(group);
    representation.push(...keyPart.fields);
    if (requires) {
      const requiredPart = this.fetchFieldSet(position, requires, target.entityType);
      for (const group of requiredPart.holders) dependencies.add(group);
      representation.push(...requiredPart.fields);
    }
    const group = this.entityGroup(target.subgraph, position, dependencies, target.entityType, representation);
    for (const dependency of dependencies) if (dependency !== group) group.dependsOn.add(dependency);
    group.representation(target.entityType, target.typename).add(representation);
    return {
      group,
      tree: group.tree.fragment(target.entityType),
      path: position.path,
      parentType: target.entityType,
      provided: undefined,
      keyDepth: position.keyDepth,
      parent: position.parent,
      requiresMet: requiresFor ? new Set([requiresFor]) : NONE,
      origin: position,
    };
  }

  /**
   * An interface object's subgraph cannot tell the implementations apart:
   * ask a subgraph that has the interface as an entity, with `__typename`.
   */
  private planThroughEntityInterface(position: Position, selections: readonly NSelection[]): Set<FetchGroup> {
    const { index } = this;
    const interfaceName = position.parentType;
    const owner = index
      .subgraphNames()
      .find((s) => !index.isInterfaceObjectIn(interfaceName, s) && index.hasType(interfaceName, s) && index.resolvableKeys(interfaceName, s).length > 0);
    if (!owner) throw planningError(`no subgraph resolves the implementations of interface ${interfaceName}`);
    const entry = this.enterEntity(position, { subgraph: owner, entityType: interfaceName, typename: { kind: 'runtime' } }, undefined);
    entry.tree.addTypename();
    return this.withGroup(this.planSelections(entry, selections), entry.group);
  }

  /**
   * Re-fetches the path to a field from the nearest ancestor that another
   * subgraph can reach (an entity through its key, or the root of a query),
   * when that subgraph resolves every field on the way.
   */
  private planReentry(position: Position, field: NField): Set<FetchGroup> | undefined {
    const route = this.findReentry(position, field.name, undefined, true);
    if (!route) return undefined;
    const entry =
      route.source === 'root'
        ? this.rootPosition(this.rootGroup(route.subgraph))
        : this.enterEntity(route.source, { subgraph: route.subgraph, entityType: route.source.parentType, typename: { kind: 'runtime' } }, undefined);
    const target = this.replay(entry, route.steps);
    return this.withGroup(this.planField(target, field), entry.group);
  }

  /**
   * Finds where a field can be re-fetched from (without planning anything):
   * the nearest ancestor some subgraph reaches; among the subgraphs there,
   * with `preferJoining`, one that already has a fetch the re-fetch can join.
   */
  private findReentry(position: Position, fieldName: string, exclude: string | undefined, preferJoining = false): Reentry | undefined {
    const { index } = this;
    const steps: PathStep[] = [];
    const usable = (subgraph: string) => subgraph !== position.group.subgraph && subgraph !== exclude;
    let ancestor: Position | undefined = position;
    while (ancestor?.parent) {
      steps.unshift(ancestor.parent.step);
      ancestor = ancestor.parent.position;
      if (preferJoining) {
        // A cheap look-up first: only subgraphs with a fetch at this position are tried in full.
        for (const subgraph of index.subgraphNames()) {
          if (!usable(subgraph) || !this.hasFetchAt(ancestor, subgraph)) continue;
          const route = this.reentryAt(ancestor, subgraph, steps, fieldName);
          if (route) return route;
        }
      }
      for (const subgraph of index.subgraphNames()) {
        if (!usable(subgraph)) continue;
        const route = this.reentryAt(ancestor, subgraph, steps, fieldName);
        if (route) return route;
      }
    }
    return undefined;
  }

  /** A re-fetch of `steps` then the field from an ancestor position in one subgraph, if that subgraph can do it. */
  private reentryAt(ancestor: Position, subgraph: string, steps: readonly PathStep[], fieldName: string): Reentry | undefined {
    const { index } = this;
    if (!this.pathResolvableIn(subgraph, ancestor.parentType, steps, fieldName)) return undefined;
    if (ancestor.path.length === 0 && ancestor.group.kind === 'root' && this.operation.operationType === 'query') {
      return { subgraph, steps: [...steps], source: 'root' };
    }
    if (index.resolvableKeys(ancestor.parentType, subgraph).length === 0) return undefined;
    // The objects at the ancestor may have been fetched by several subgraphs: use one that gives the key.
    const target: JumpTarget = { subgraph, entityType: ancestor.parentType, typename: { kind: 'runtime' } };
    for (let source: Position | undefined = ancestor; source; source = source.origin) {
      if (this.chooseKey(source, target)) return { subgraph, steps: [...steps], source };
    }
    return undefined;
  }

  /**
   * Whether the plan already fetches from a subgraph at an ancestor position,
   * so a re-fetch from there joins that fetch: the root fetch of a query, or
   * an entity fetch at the ancestor's path (its origins share path and scope).
   */
  private hasFetchAt(ancestor: Position, subgraph: string): boolean {
    if (ancestor.path.length === 0 && ancestor.group.kind === 'root') return this.operation.operationType === 'query' && this.rootGroups.has(subgraph);
    return this.entityGroups.has(this.entityGroupKey(subgraph, ancestor));
  }

  /**
   * Whether a subgraph resolves every step of a path and then the field.
   * Entities on the way must be reached through their keys, not by fetching
   * the path again: a path through an entity the subgraph can look up does not count.
   */
  private pathResolvableIn(subgraph: string, startType: string, steps: readonly PathStep[], fieldName: string): boolean {
    const { index } = this;
    let type = startType;
    for (const step of steps) {
      if (step.kind === 'fragment') {
        if (!index.hasType(step.typeCondition, subgraph)) return false;
        type = step.typeCondition;
      } else {
        if (!index.canResolve(type, step.field.name, subgraph)) return false;
        type = index.fieldNamedTypeIn(type, step.field.name, subgraph);
      }
      if (index.resolvableKeys(type, subgraph).length > 0) return false;
    }
    return index.canResolve(type, fieldName, subgraph) || (index.isAbstract(type) && index.possibleTypesIn(type, subgraph).length > 0);
  }

  /** Walks `steps` from an entry position, adding the fields on the way. */
  private replay(entry: Position, steps: readonly PathStep[]): Position {
    let position = entry;
    for (const step of steps) {
      if (step.kind === 'fragment') {
        const tree = position.tree.fragment(step.typeCondition);
        position = { ...position, tree, parentType: step.typeCondition, path: [...position.path, `... on ${step.typeCondition}`], parent: { position, step } };
        continue;
      }
      const added = position.tree.add(step.field.responseKey, step.field.name, step.field.arguments, true);
      if (!added?.children) throw planningError(`cannot re-fetch "${step.field.responseKey}" at ${position.path.join('.')}`);
      const childType = this.index.fieldNamedTypeIn(position.parentType, step.field.name, position.group.subgraph);
      if (this.index.isAbstract(childType)) added.children.addTypename();
      position = {
        ...position,
        tree: added.children,
        path: childPath(this.index, position, step.field),
        parentType: childType,
        provided: undefined,
        parent: { position, step },
        requiresMet: NONE,
      };
    }
    return position;
  }

  private withGroup(holders: Set<FetchGroup>, group: FetchGroup): Set<FetchGroup> {
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
    return targets.filter((target) => this.chooseKey(position, target) !== undefined);
  }

  private chooseTarget(position: Position, field: NField, targets: readonly JumpTarget[]): JumpTarget {
    if (targets.length === 1) return targets[0]!;
    let best = targets[0]!;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const target of targets) {
      const existing = this.entityGroups.get(this.entityGroupKey(target.subgraph, position))?.length ?? 0;
      // Each entity hop its key takes costs as much as fetching a key from elsewhere did before chains were planned.
      const keyHops = this.keyHops(position, target);
      const childType = this.index.fieldNamedTypeIn(target.entityType, field.name, target.subgraph);
      const jumps = field.selections ? estimateJumps(this.index, target.subgraph, childType, field.selections, undefined) : 0;
      const requires = this.index.fieldSource(target.entityType, field.name, target.subgraph)?.requires ? 1 : 0;
      const cost = jumps * 2 + (existing > 0 ? 0 : 1) + keyHops * 3 + requires;
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
    return keys.find((key) => this.fieldSetReachable(position, key.selectionSet, target.subgraph));
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

  /** The fewest entity hops the position needs to obtain a key of the target (0: one is here). */
  private keyHops(position: Position, target: JumpTarget): number {
    const keys = this.index.resolvableKeys(target.entityType, target.subgraph);
    return Math.min(MAX_KEY_DEPTH, ...keys.map((k) => this.fieldSetHops(position, k.selectionSet, target.subgraph) ?? MAX_KEY_DEPTH));
  }

  /** Whether every top-level field of a field set resolves somewhere the position can reach (not the target itself). */
  private fieldSetReachable(position: Position, set: SelectionSetNode, target: string): boolean {
    return this.fieldSetHops(position, set, target) !== undefined;
  }

  /**
   * How many entity hops the position needs to obtain a field set without
   * asking `target` (0: all here; the most any of its fields needs), or
   * undefined when it cannot. A field only a re-entry reaches counts one.
   */
  private fieldSetHops(position: Position, set: SelectionSetNode, target: string): number | undefined {
    if (this.fieldSetLocal(position, set)) return 0;
    if (set.selections.some((selection) => selection.kind !== Kind.FIELD)) return undefined;
    const names = set.selections.map((selection) => (selection as FieldNode).name.value);
    const hops = this.obtainableFields(position, names, target);
    // Not wholly here (a nested field may be missing): one hop at least.
    let most = 1;
    for (const name of names) {
      const needed = hops.get(name) ?? (this.findReentry(position, name, target) !== undefined ? 1 : undefined);
      if (needed === undefined) return undefined;
      most = Math.max(most, needed);
    }
    return most;
  }

  /**
   * Which of `names` (and of the type's key fields) the position can obtain
   * without asking `exclude`, each with the entity hops it takes: 0 for
   * those resolvable here, then those a subgraph resolves whose key is
   * obtained so far, hop after hop, as far as the key depth left allows (a
   * key may be reachable only through a chain of other keys: k0 gives k1
   * in one subgraph, k1 gives k2 in the next). Polynomial in subgraphs,
   * keys and hops, whatever the chain.
   */
  private obtainableFields(position: Position, names: readonly string[], exclude: string): ReadonlyMap<string, number> {
    const { index } = this;
    const from = position.group.subgraph;
    const type = position.parentType;
    // The same question comes back for every field planned at such a position: answered once (fields @provides
    // makes available depend on the path, so those positions are not remembered).
    const memoKey = position.provided ? undefined : `${from}|${type}|${exclude}|${position.keyDepth}|${names.join(',')}`;
    const known = memoKey === undefined ? undefined : this.obtainable.get(memoKey);
    if (known) return known;
    const subgraphs = index.subgraphNames().filter((s) => s !== from && s !== exclude);
    const keysOf = new Map(subgraphs.map((s) => [s, index.resolvableKeys(type, s)] as const));
    const wanted = new Set(names);
    for (const keys of keysOf.values())
      for (const key of keys) for (const selection of key.selectionSet.selections) if (selection.kind === Kind.FIELD) wanted.add(selection.name.value);
    const have = new Map<string, number>();
    for (const name of wanted) if (this.resolvableHere(position, name)) have.set(name, 0);
    const hops = Math.max(0, MAX_KEY_DEPTH - position.keyDepth);
    for (let hop = 1; hop <= hops; hop++) {
      const gained: string[] = [];
      for (const s of subgraphs) {
        // The first hop needs a key wholly here (nested fields too); later ones, a key whose fields earlier hops obtain.
        const entered = keysOf
          .get(s)!
          .some((key) =>
            hop === 1
              ? this.fieldSetLocal(position, key.selectionSet)
              : key.selectionSet.selections.every((selection) => selection.kind === Kind.FIELD && have.has(selection.name.value)),
          );
        if (!entered) continue;
        for (const name of wanted) if (!have.has(name) && index.canResolve(type, name, s)) gained.push(name);
      }
      if (gained.length === 0) break;
      for (const name of gained) if (!have.has(name)) have.set(name, hop);
    }
    if (memoKey !== undefined) this.obtainable.set(memoKey, have);
    return have;
  }

  /**
   * Makes sure a field set (a key or `@requires`) is fetched at the position:
   * plans its fields like client fields under keys that do not clash with the
   * client's, and reports where the representation finds them.
   */
  private fetchFieldSet(position: Position, set: SelectionSetNode, typeName: string): { holders: Set<FetchGroup>; fields: RepresentationField[] } {
    const converted = convertFieldSet(this.index, set, this.keys(), typeName);
    const holders = this.planSelections({ ...position, keyDepth: position.keyDepth + 1 }, converted.selections);
    return { holders, fields: converted.fields };
  }

  /** The client's response keys, made on first use. */
  private keys(): ClientKeys {
    this.clientKeys ??= new ClientKeys(this.operation.selections);
    return this.clientKeys;
  }

  private entityGroupKey(subgraph: string, position: Position): string {
    return `${position.group.scope}|${subgraph}|${position.path.join('.')}`;
  }

  /**
   * Reuses a group that fetches from the same subgraph at the same path,
   * unless that would create a cycle or mix two representations of a field
   * (for example `@requires` of one field with different arguments).
   */
  private entityGroup(subgraph: string, position: Position, dependencies: ReadonlySet<FetchGroup>, entityType: string, representation: readonly RepresentationField[]): FetchGroup {
    const key = this.entityGroupKey(subgraph, position);
    const candidates = this.entityGroups.get(key) ?? [];
    for (const candidate of candidates) {
      if (dependencies.has(candidate)) continue;
      let cycle = false;
      for (const dependency of dependencies) {
        if (dependency !== candidate && dependency.dependsOnTransitively(candidate)) cycle = true;
      }
      if (cycle || !candidate.acceptsRepresentation(entityType, representation)) continue;
      return candidate;
    }
    const group = this.newGroup(subgraph, 'entity', position.path, position.group.scope);
    candidates.push(group);
    this.entityGroups.set(key, candidates);
    return group;
  }
}

/** What the other root fields tell the choice of a root field's subgraph. */
interface RootChoice {
  /** Whether root field `i` sent to `subgraph` rides along with another root field's fetch. */
  joins(i: number, subgraph: string): boolean;
  /** How many root fields `subgraph` can resolve (a tie-breaker: later fields may join it). */
  sharers(subgraph: string): number;
}

/**
 * A query's root fields go in one fetch per subgraph, so a field joins a
 * subgraph that a field with a single candidate must use, whatever the
 * order, or that an earlier field went to (`taken`). A mutation's go in
 * order, one call per run of consecutive fields to one subgraph (a run ends
 * after a field whose selection needs another fetch): a field joins its
 * predecessor's subgraph (`taken`), or the one its successor must use.
 */
function rootChoice(candidates: ReadonlyArray<readonly string[]>, mutation: boolean, taken: (subgraph: string) => boolean): RootChoice {
  // Built on first use: most operations have no root field with a choice.
  let counts: Map<string, number> | undefined;
  let pinned: Set<string> | undefined;
  const only = (list: readonly string[] | undefined) => (list?.length === 1 ? list[0] : undefined);
  const sharers = (subgraph: string) => {
    if (!counts) {
      counts = new Map();
      for (const list of candidates) for (const s of list) counts.set(s, (counts.get(s) ?? 0) + 1);
    }
    return counts.get(subgraph) ?? 0;
  };
  if (mutation) return { joins: (i, subgraph) => taken(subgraph) || only(candidates[i + 1]) === subgraph, sharers };
  return {
    joins: (_i, subgraph) => {
      pinned ??= new Set(candidates.map(only).filter((s) => s !== undefined));
      return taken(subgraph) || pinned.has(subgraph);
    },
    sharers,
  };
}

function lexicallyLess(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]!;
  return false;
}

/** The client's steps from the operation's root to a position. */
function stepsTo(position: Position): PathStep[] {
  const steps: PathStep[] = [];
  for (let at = position.parent; at; at = at.position.parent) steps.push(at.step);
  return steps.reverse();
}

function childPath(index: FederationIndex, position: Position, field: NField): PathSegment[] {
  const path = [...position.path, field.responseKey];
  for (let depth = index.fieldListDepth(position.parentType, field.name); depth > 0; depth--) path.push('@');
  return path;
}

/**
 * Whether an entity jump must fetch `__typename` where its objects are: not
 * when they are of one object type the representation is written for (the
 * executor then takes the spec's type), only when the type is known at
 * runtime alone (abstract types, type conditions on the way).
 */
function needsTypename(index: FederationIndex, position: Position, target: JumpTarget): boolean {
  if (index.isAbstract(position.parentType)) return true;
  if (target.typename.kind === 'runtime' && target.entityType !== position.parentType) return true;
  return position.path.some((segment) => segment.startsWith('... on '));
}
