/**
 * Removes from an operation the fields a caller may not see, before it is
 * planned: the subgraphs never receive them, and the plan of the filtered
 * text is cached like any other (one per distinct filtered operation, shared
 * by every caller whose grant filters the same way). What was removed is
 * recorded as a tree along response keys, for `applyRemovals` to put `null`
 * and an error at each removed field's path after the merge.
 */
import {
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  Kind,
  print,
  type DefinitionNode,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLOutputType,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import { refusal, type Grant, type GraphRules, type Refusal } from './graph-rules.js';

/** The response key of the `__typename` added where the runtime type decides, or where every field was removed; never in answers. */
export const TYPENAME_ALIAS = '__authz_typename';

/** One removed field, relative to the object that would have held it. */
export interface RemovedField {
  readonly key: string;
  /** Type conditions (fragments) that must hold for the object's runtime type; empty: always. */
  readonly conditions: readonly string[];
  readonly nonNull: boolean;
  /** `Type.field`, for the message. */
  readonly coordinate: string;
  readonly reason: Refusal;
}

/** A kept field whose selection lost something below it. */
export interface RemovalChild {
  readonly key: string;
  readonly conditions: readonly string[];
  readonly type: GraphQLOutputType;
  readonly node: RemovalNode;
}

/** Removals under one selection set. */
export interface RemovalNode {
  readonly removed: RemovedField[];
  readonly children: RemovalChild[];
  /** The selection set has the added `__typename` (to strip from answers). */
  typename: boolean;
}

/** What an operation touches that has access rules (per graph and operation, for the grant key). */
export interface OperationFacts {
  readonly restricted: boolean;
  /** Scopes its rules name, sorted. */
  readonly scopes: readonly string[];
  /** Policies its rules name, sorted. */
  readonly policies: readonly string[];
  /** Some rule asks for authentication (or scopes). */
  readonly authentication: boolean;
}

/** The operation filtered for one grant. */
export interface FilteredOperation {
  readonly document: DocumentNode;
  /** The operation's type: a subscription that loses its root field has no stream left to answer. */
  readonly operationType: OperationDefinitionNode['operation'];
  /** Plan cache key of the filtered operation. */
  readonly cacheKey: string;
  readonly removals: RemovalNode;
  /** `Type.field` of every removed field (for the 403 of reject mode). */
  readonly coordinates: readonly string[];
  /**
   * Estimated heap this result holds beyond the client's document: the nodes
   * it rewrote, the removal records and the key. Unchanged subtrees are the
   * client document's own (and through their locations hold all of it).
   */
  readonly ownBytes: number;
}

/** Estimated heap of one AST node, removal record or small array it makes (graphql-js nodes are some 100-200 bytes). */
const NODE_BYTES = 256;

/** Scopes and policies the rules of an operation's fields name. */
export function operationFacts(rules: GraphRules, document: DocumentNode, operationName: string | undefined): OperationFacts {
  const operation = selectOperation(document, operationName);
  const fragments = fragmentsOf(document);
  const scopes = new Set<string>();
  const policies = new Set<string>();
  let restricted = false;
  let authentication = false;
  const seen = new Set<string>();
  const walk = (set: SelectionSetNode, parent: GraphQLCompositeType): void => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const definition = fieldOf(parent, selection.name.value);
        if (!definition) continue;
        const requirement = rules.fieldRequirement(parent.name, selection.name.value);
        if (requirement) {
          restricted = true;
          if (requirement.authenticated || requirement.scopes.length > 0) authentication = true;
          for (const groups of requirement.scopes) for (const group of groups) for (const scope of group) scopes.add(scope);
          for (const groups of requirement.policies) for (const group of groups) for (const policy of group) policies.add(policy);
        }
        const named = getNamedType(definition.type);
        if (selection.selectionSet && isCompositeType(named)) walk(selection.selectionSet, named);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, conditionType(rules, selection.typeCondition?.name.value) ?? parent);
      } else {
        const fragment = fragments.get(selection.name.value);
        if (!fragment || seen.has(fragment.name.value)) continue;
        seen.add(fragment.name.value);
        const type = conditionType(rules, fragment.typeCondition.name.value);
        if (type) walk(fragment.selectionSet, type);
      }
    }
  };
  const root = operation && rootType(rules, operation);
  if (operation && root) walk(operation.selectionSet, root);
  return { restricted, scopes: [...scopes].sort(), policies: [...policies].sort(), authentication };
}

/**
 * The operation without the fields `grant` may not see; undefined when it
 * may see everything. `conditions` are the `@skip`/`@include` variable
 * values (a skipped field is left alone: it is never fetched nor answered).
 */
export function filterOperation(
  rules: GraphRules,
  document: DocumentNode,
  operationName: string | undefined,
  conditions: Readonly<Record<string, unknown>>,
  grant: Grant,
): FilteredOperation | undefined {
  const operation = selectOperation(document, operationName);
  const root = operation && rootType(rules, operation);
  if (!operation || !root) return undefined;
  const fragments = fragmentsOf(document);
  const coordinates: string[] = [];
  /** Estimated heap of what the rewrite makes (see `ownBytes`). */
  let made = 0;
  const rewrittenFragments = new Map<string, { set: SelectionSetNode | undefined; node: RemovalNode | undefined; changed: boolean }>();

  const skipped = (directives: readonly DirectiveNode[] | undefined): boolean => {
    for (const directive of directives ?? []) {
      const name = directive.name.value;
      if (name !== 'skip' && name !== 'include') continue;
      const argument = directive.arguments?.find((a) => a.name.value === 'if')?.value;
      let value: unknown;
      if (argument?.kind === Kind.BOOLEAN) value = argument.value;
      else if (argument?.kind === Kind.VARIABLE) value = conditions[argument.name.value];
      if (name === 'skip' && value === true) return true;
      if (name === 'include' && value !== true) return true;
    }
    return false;
  };

  /** Rewrites one selection set; `node` is undefined when nothing under it was removed. */
  const rewrite = (set: SelectionSetNode, parent: GraphQLCompositeType): { selections: SelectionNode[]; node: RemovalNode | undefined; changed: boolean } => {
    const selections: SelectionNode[] = [];
    let node: RemovalNode | undefined;
    let changed = false;
    const ensure = (): RemovalNode => (node ??= { removed: [], children: [], typename: false });
    for (const selection of set.selections) {
      if (skipped(selection.directives)) {
        selections.push(selection);
        continue;
      }
      if (selection.kind === Kind.FIELD) {
        const definition = fieldOf(parent, selection.name.value);
        if (!definition) {
          selections.push(selection);
          continue;
        }
        const requirement = rules.fieldRequirement(parent.name, selection.name.value);
        const reason = requirement && refusal(requirement, grant);
        const key = selection.alias?.value ?? selection.name.value;
        if (reason) {
          const coordinate = `${parent.name}.${selection.name.value}`;
          ensure().removed.push({ key, conditions: [], nonNull: isNonNullType(definition.type), coordinate, reason });
          made += NODE_BYTES;
          coordinates.push(coordinate);
          changed = true;
          continue;
        }
        const named = getNamedType(definition.type);
        if (!selection.selectionSet || !isCompositeType(named)) {
          selections.push(selection);
          continue;
        }
        const inner = rewrite(selection.selectionSet, named);
        if (!inner.changed) {
          selections.push(selection);
          continue;
        }
        changed = true;
        const child = inner.node ?? { removed: [], children: [], typename: false };
        const needsType = inner.selections.length === 0 || hasConditions(child);
        if (needsType) child.typename = true;
        made += (needsType ? 5 : 2) * NODE_BYTES + inner.selections.length * 8;
        const field: FieldNode = {
          ...selection,
          selectionSet: { kind: Kind.SELECTION_SET, selections: needsType ? [...inner.selections, typenameField()] : inner.selections },
        };
        selections.push(field);
        if (inner.node || needsType) {
          ensure().children.push({ key, conditions: [], type: definition.type, node: child });
          made += NODE_BYTES;
        }
      } else {
        const isInline = selection.kind === Kind.INLINE_FRAGMENT;
        const typeName = isInline ? selection.typeCondition?.name.value : fragments.get(selection.name.value)?.typeCondition.name.value;
        const type = typeName === undefined ? parent : conditionType(rules, typeName);
        if (!type) {
          selections.push(selection);
          continue;
        }
        let inner: { set: SelectionSetNode | undefined; node: RemovalNode | undefined; changed: boolean };
        if (isInline) {
          const result = rewrite(selection.selectionSet, type);
          made += 2 * NODE_BYTES + result.selections.length * 8;
          inner = { set: result.selections.length > 0 ? { kind: Kind.SELECTION_SET, selections: result.selections } : undefined, node: result.node, changed: result.changed };
        } else {
          const name = selection.name.value;
          let known = rewrittenFragments.get(name);
          if (!known) {
            // A placeholder first: a fragment spread inside itself is invalid and was refused by validation, but never loop.
            rewrittenFragments.set(name, { set: undefined, node: undefined, changed: false });
            const result = rewrite(fragments.get(name)!.selectionSet, type);
            made += NODE_BYTES + result.selections.length * 8;
            known = { set: result.selections.length > 0 ? { kind: Kind.SELECTION_SET, selections: result.selections } : undefined, node: result.node, changed: result.changed };
            rewrittenFragments.set(name, known);
          }
          inner = known;
        }
        if (inner.node) {
          const condition = type.name === parent.name ? [] : [type.name];
          const target = ensure();
          for (const removed of inner.node.removed) target.removed.push({ ...removed, conditions: [...condition, ...removed.conditions] });
          for (const child of inner.node.children) target.children.push({ ...child, conditions: [...condition, ...child.conditions] });
          made += (inner.node.removed.length + inner.node.children.length) * 2 * NODE_BYTES;
        }
        if (!inner.changed) {
          selections.push(selection);
          continue;
        }
        changed = true;
        if (!inner.set) continue; // everything in it was removed: the spread or fragment goes
        selections.push(isInline ? { ...selection, selectionSet: inner.set } : selection);
      }
    }
    return { selections, node, changed };
  };

  const result = rewrite(operation.selectionSet, root);
  if (!result.changed || coordinates.length === 0) return undefined;
  const removals = result.node ?? { removed: [], children: [], typename: false };
  const needsType = result.selections.length === 0 || hasConditions(removals);
  if (needsType) removals.typename = true;
  const definitions = document.definitions.flatMap((definition): DefinitionNode[] => {
    if (definition === operation) {
      const selections = needsType ? [...result.selections, typenameField()] : result.selections;
      return [{ ...operation, selectionSet: { kind: Kind.SELECTION_SET, selections } } as OperationDefinitionNode];
    }
    if (definition.kind === Kind.FRAGMENT_DEFINITION) {
      const rewritten = rewrittenFragments.get(definition.name.value);
      if (!rewritten?.changed) return [definition];
      if (!rewritten.set) return []; // no spread of it is left
      return [{ ...definition, selectionSet: rewritten.set } as FragmentDefinitionNode];
    }
    // Other operations of the document are not run; leave them out of the planned text.
    if (definition.kind === Kind.OPERATION_DEFINITION) return [];
    return [definition];
  });
  const filtered: DocumentNode = { kind: Kind.DOCUMENT, definitions };
  const key = `authorization\n${operationName ?? ''}\n${JSON.stringify(conditions)}\n${print(filtered)}`;
  made += (4 + definitions.length) * NODE_BYTES + result.selections.length * 8;
  const unique = [...new Set(coordinates)];
  const ownBytes = made + key.length * 2 + unique.reduce((sum, coordinate) => sum + 64 + coordinate.length * 2, 0);
  return { document: filtered, operationType: operation.operation, cacheKey: key, removals, coordinates: unique, ownBytes };
}

function hasConditions(node: RemovalNode): boolean {
  return node.removed.some((r) => r.conditions.length > 0) || node.children.some((c) => c.conditions.length > 0);
}

function typenameField(): FieldNode {
  return { kind: Kind.FIELD, alias: { kind: Kind.NAME, value: TYPENAME_ALIAS }, name: { kind: Kind.NAME, value: '__typename' } };
}

function selectOperation(document: DocumentNode, name: string | undefined): OperationDefinitionNode | undefined {
  let found: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
    if (name === undefined ? found === undefined : definition.name?.value === name) found = definition;
    else if (name === undefined) return undefined; // several operations and no name: the kernel refuses it
  }
  return found;
}

function fragmentsOf(document: DocumentNode): Map<string, FragmentDefinitionNode> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  return fragments;
}

function rootType(rules: GraphRules, operation: OperationDefinitionNode): GraphQLCompositeType | undefined {
  const schema = rules.apiSchema;
  return (operation.operation === 'query' ? schema.getQueryType() : operation.operation === 'mutation' ? schema.getMutationType() : schema.getSubscriptionType()) ?? undefined;
}

function conditionType(rules: GraphRules, name: string | undefined): GraphQLCompositeType | undefined {
  if (name === undefined) return undefined;
  const type = rules.apiSchema.getType(name);
  return type && isCompositeType(type) ? type : undefined;
}

function fieldOf(parent: GraphQLCompositeType, name: string) {
  if (name.startsWith('__')) return undefined; // __typename, and introspection's __schema/__type: never restricted
  return isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined;
}
