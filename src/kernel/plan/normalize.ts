import {
  Kind,
  type ArgumentNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
  type ValueNode,
  type VariableDefinitionNode,
} from 'graphql';
import { RouterError } from '../errors.js';

/** A field of the client operation after fragments are inlined and same-key fields merged. */
export interface NField {
  readonly kind: 'Field';
  /** Alias if any, else the field name. */
  readonly responseKey: string;
  readonly name: string;
  readonly arguments: readonly ArgumentNode[];
  /** Sub-selections; undefined for leaves. */
  readonly selections: NSelection[] | undefined;
}

/** An inline fragment (named fragments are inlined into these). */
export interface NFragment {
  readonly kind: 'Fragment';
  readonly typeCondition: string;
  readonly selections: NSelection[];
}

export type NSelection = NField | NFragment;

/** The client operation in the shape the planner and the response builder read. */
export interface NormalizedOperation {
  readonly operationType: 'query' | 'mutation' | 'subscription';
  readonly name: string | undefined;
  readonly variableDefinitions: readonly VariableDefinitionNode[];
  readonly rootType: string;
  readonly selections: NSelection[];
  /** The operation as the client sent it (for local introspection execution). */
  readonly definition: OperationDefinitionNode;
  readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>;
}

/** Finds the operation to run, as GraphQL's "GetOperation" does. */
export function selectOperation(document: DocumentNode, operationName: string | undefined | null): OperationDefinitionNode {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (operationName) {
    const found = operations.find((o) => o.name?.value === operationName);
    if (!found) throw new RouterError('OPERATION_NOT_FOUND', `Unknown operation named "${operationName}".`, { status: 400 });
    return found;
  }
  if (operations.length === 1) return operations[0]!;
  if (operations.length === 0) throw new RouterError('OPERATION_NOT_FOUND', 'Must provide an operation.', { status: 400 });
  throw new RouterError('OPERATION_NOT_FOUND', 'Must provide operation name if query contains multiple operations.', { status: 400 });
}

/** Names of the variables that `@skip`/`@include` read; their values are part of the plan's identity. */
export function conditionVariables(document: DocumentNode): string[] {
  const names = new Set<string>();
  const visitSet = (set: SelectionSetNode | undefined): void => {
    for (const selection of set?.selections ?? []) {
      addConditionVariables(selection, names);
      if (selection.kind !== Kind.FRAGMENT_SPREAD) visitSet(selection.selectionSet);
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION) {
      visitSet(definition.selectionSet);
    }
  }
  return [...names].sort();
}

/**
 * Names of the variables that `@skip`/`@include` read in one operation of a
 * document (its own selections and the fragments it reaches): another
 * operation of the document may use a variable of the same name otherwise.
 */
export function operationConditionVariables(document: DocumentNode, operation: OperationDefinitionNode): readonly string[] {
  // Worked out once per operation of a cached document.
  let known = operationConditions.get(operation);
  if (!known) operationConditions.set(operation, (known = findOperationConditions(document, operation)));
  return known;
}

const operationConditions = new WeakMap<OperationDefinitionNode, readonly string[]>();

function findOperationConditions(document: DocumentNode, operation: OperationDefinitionNode): string[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const names = new Set<string>();
  const reached = new Set<string>();
  const visitSet = (set: SelectionSetNode | undefined): void => {
    for (const selection of set?.selections ?? []) {
      addConditionVariables(selection, names);
      if (selection.kind !== Kind.FRAGMENT_SPREAD) visitSet(selection.selectionSet);
      else if (!reached.has(selection.name.value)) {
        // Each fragment once: spreads may repeat it (or, in an invalid document, cycle).
        reached.add(selection.name.value);
        visitSet(fragments.get(selection.name.value)?.selectionSet);
      }
    }
  };
  visitSet(operation.selectionSet);
  return [...names];
}

/** Adds the variables a selection's `@skip`/`@include` read to `names`. */
function addConditionVariables(selection: SelectionNode, names: Set<string>): void {
  for (const directive of selection.directives ?? []) {
    if (directive.name.value !== 'skip' && directive.name.value !== 'include') continue;
    const value = directive.arguments?.find((a) => a.name.value === 'if')?.value;
    if (value?.kind === Kind.VARIABLE) names.add(value.name.value);
  }
}

/** What normalization needs to know about the schema. */
export interface NormalizeSchema {
  isObjectType(typeName: string): boolean;
  /** Named type of `parentType.fieldName`. */
  fieldType(parentType: string, fieldName: string): string;
  /** Whether an object of `objectType` satisfies a fragment on `condition`. */
  satisfies(objectType: string, condition: string): boolean;
}

/**
 * Inlines fragments, evaluates `@skip`/`@include` with the given variable
 * values and merges fields that share a response key, so that planning and
 * response building never see the same field twice at one level.
 */
export function normalizeOperation(
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rootType: string,
  variables: Readonly<Record<string, unknown>>,
  schema: NormalizeSchema,
): NormalizedOperation {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const selections: NSelection[] = [];
  new Normalizer(fragments, variables, schema).level(operation.selectionSet, rootType, selections);
  return {
    operationType: operation.operation,
    name: operation.name?.value,
    variableDefinitions: operation.variableDefinitions ?? [],
    rootType,
    selections,
    definition: operation,
    fragments,
  };
}

/** Sub-selection sets waiting to be merged into one field, with the field's parent type. */
interface PendingChildren {
  readonly parentType: string;
  readonly sets: SelectionSetNode[];
}

/**
 * Work stays linear in the size of what the operation expands to (which
 * `limits.max_fields` bounds before planning, see request-limits.ts): a
 * selection set is collected into one output list at one parent type once
 * only. Collecting it again would add nothing (fields merge by response key),
 * so `fragment A on Query { ...B ...B } fragment B on Query { ...C ...C }`
 * costs one pass per fragment, not 2^N, even with the limit off; and a
 * fragment spreading itself stops there (validation refuses it anyway).
 * Fields and fragments of an output list are found by key, not by search.
 */
class Normalizer {
  /** Selection sets already collected, per output list and parent type. */
  private readonly collected = new WeakMap<NSelection[], Map<string, Set<SelectionSetNode>>>();
  /** Output lists by response key (`f:` fields) and type condition (`t:` fragments). */
  private readonly keys = new WeakMap<NSelection[], Map<string, NSelection>>();

  constructor(
    private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>,
    private readonly variables: Readonly<Record<string, unknown>>,
    private readonly schema: NormalizeSchema,
  ) {}

  /** Collects one level, then each merged field's children (so `a { x } a { y }` becomes `a { x y }`). */
  level(set: SelectionSetNode, parentType: string, into: NSelection[]): void {
    const pending = new Map<NField, PendingChildren>();
    this.collect(set, parentType, into, pending);
    for (const [field, children] of pending) {
      const childType = this.schema.fieldType(children.parentType, field.name);
      for (const childSet of children.sets) this.level(childSet, childType, field.selections!);
    }
  }

  /** Whether `set` was collected into `into` at `parentType` already (and marks it so). */
  private seen(set: SelectionSetNode, parentType: string, into: NSelection[]): boolean {
    let byType = this.collected.get(into);
    if (!byType) {
      byType = new Map();
      this.collected.set(into, byType);
    }
    let sets = byType.get(parentType);
    if (!sets) {
      sets = new Set();
      byType.set(parentType, sets);
    }
    if (sets.has(set)) return true;
    sets.add(set);
    return false;
  }

  private index(into: NSelection[]): Map<string, NSelection> {
    let index = this.keys.get(into);
    if (!index) {
      index = new Map();
      this.keys.set(into, index);
    }
    return index;
  }

  private collect(set: SelectionSetNode, parentType: string, into: NSelection[], pending: Map<NField, PendingChildren>): void {
    if (this.seen(set, parentType, into)) return;
    const index = this.index(into);
    for (const selection of set.selections) {
      if (!this.included(selection.directives)) continue;
      if (selection.kind === Kind.FIELD) {
        const responseKey = selection.alias?.value ?? selection.name.value;
        let field = index.get(`f:${responseKey}`) as NField | undefined;
        if (!field) {
          field = {
            kind: 'Field',
            responseKey,
            name: selection.name.value,
            arguments: selection.arguments ?? [],
            selections: selection.selectionSet ? [] : undefined,
          };
          into.push(field);
          index.set(`f:${responseKey}`, field);
        }
        if (selection.selectionSet && field.selections) {
          let entry = pending.get(field);
          if (!entry) {
            entry = { parentType, sets: [] };
            pending.set(field, entry);
          }
          entry.sets.push(selection.selectionSet);
        }
        continue;
      }
      let typeCondition: string;
      let inner: SelectionSetNode;
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        typeCondition = selection.typeCondition?.name.value ?? parentType;
        inner = selection.selectionSet;
      } else {
        const name = selection.name.value;
        const fragment = this.fragments.get(name);
        if (!fragment) throw new RouterError('GRAPHQL_VALIDATION_FAILED', `Unknown fragment "${name}".`, { status: 400 });
        typeCondition = fragment.typeCondition.name.value;
        inner = fragment.selectionSet;
      }
      if (typeCondition === parentType) {
        this.collect(inner, parentType, into, pending);
      } else if (this.schema.isObjectType(parentType)) {
        // On an object type a fragment either always applies or never does.
        if (this.schema.satisfies(parentType, typeCondition)) this.collect(inner, parentType, into, pending);
      } else {
        let fragment = index.get(`t:${typeCondition}`) as NFragment | undefined;
        if (!fragment) {
          fragment = { kind: 'Fragment', typeCondition, selections: [] };
          into.push(fragment);
          index.set(`t:${typeCondition}`, fragment);
        }
        this.collect(inner, typeCondition, fragment.selections, pending);
      }
    }
  }

  private included(directives: SelectionSetNode['selections'][number]['directives']): boolean {
    for (const directive of directives ?? []) {
      const name = directive.name.value;
      if (name !== 'skip' && name !== 'include') continue;
      const value = conditionValue(directive.arguments?.find((a) => a.name.value === 'if')?.value, this.variables);
      if (name === 'skip' && value) return false;
      if (name === 'include' && !value) return false;
    }
    return true;
  }
}

function conditionValue(value: ValueNode | undefined, variables: Readonly<Record<string, unknown>>): boolean {
  if (!value) return true;
  if (value.kind === Kind.BOOLEAN) return value.value;
  if (value.kind === Kind.VARIABLE) return variables[value.name.value] === true;
  return true;
}
