import { Kind, type ArgumentNode, type FieldNode, type SelectionSetNode } from 'graphql';
import { RouterError } from '../errors.js';
import type { FederationIndex } from '../graph/federation-index.js';
import type { NField, NSelection } from './normalize.js';
import type { RepresentationField } from './query-plan.js';

/** Finds the client's field for a response key at one position (fragments included). */
export function findClientField(selections: readonly NSelection[] | undefined, responseKey: string): NField | undefined {
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

/** Whether a client field under `responseKey` at one position (fragments included) carries directives for the subgraph. */
function directedAt(selections: readonly NSelection[] | undefined, responseKey: string): boolean {
  for (const selection of selections ?? []) {
    if (selection.kind === 'Field') {
      if (selection.responseKey === responseKey && selection.directives) return true;
    } else if (directedAt(selection.selections, responseKey)) return true;
  }
  return false;
}

/** What the planner's own response keys and aliases hold (`__sy_weight`, `name__sy_0`), made unlike the client's keys at their position. */
export const INTERNAL_MARK = '__sy_';

/**
 * The response key for a field the planner adds: its own name unless the
 * client uses that key for something else, in which case an internal alias.
 */
export function internalKey(clientSelections: readonly NSelection[] | undefined, name: string, args: readonly ArgumentNode[]): string {
  const argsText = args.map((a) => `${a.name.value}:${JSON.stringify(a.value)}`).join(',');
  const natural = findClientField(clientSelections, name);
  // The client's own field under the name serves when it asks the same thing; not when any of its
  // occurrences at this level (in any fragment) has a directive such as `@upper`, which may change the value.
  if (args.length === 0 && (!natural || (natural.name === name && natural.arguments.length === 0 && !directedAt(clientSelections, name)))) return name;
  let key = `${INTERNAL_MARK}${name}${args.length > 0 ? `_${hash(argsText)}` : ''}`;
  // A client may alias a field `__sy_weight` too: the planner's key must not take the client's value (or give it ours).
  while (findClientField(clientSelections, key)) key += '_';
  return key;
}

function hash(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = ((h << 5) + h + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(36);
}

/** A field set (key or `@requires`) turned into selections to plan, and how to read it back. */
export interface ConvertedFieldSet {
  readonly selections: NSelection[];
  readonly fields: RepresentationField[];
}

/** Converts a field set into plannable selections with internal keys that avoid the client's. */
export function convertFieldSet(index: FederationIndex, set: SelectionSetNode, clientSelections: readonly NSelection[] | undefined, parentType: string): ConvertedFieldSet {
  const selections: NSelection[] = [];
  const fields: RepresentationField[] = [];
  for (const selection of set.selections) {
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition?.name.value ?? parentType;
      const inner = convertFieldSet(index, selection.selectionSet, clientSelections, condition);
      selections.push({ kind: 'Fragment', typeCondition: condition, selections: inner.selections });
      fields.push(...inner.fields.map((field) => ({ ...field, typeCondition: field.typeCondition ?? condition })));
      continue;
    }
    if (selection.kind !== Kind.FIELD) continue;
    const name = selection.name.value;
    const args = selection.arguments ?? [];
    const responseKey = internalKey(clientSelections, name, args);
    let children: ConvertedFieldSet | undefined;
    if (selection.selectionSet) {
      const clientChild = findClientField(clientSelections, responseKey)?.selections;
      children = convertFieldSet(index, selection.selectionSet, clientChild, index.fieldNamedType(parentType, name));
    }
    selections.push({ kind: 'Field', responseKey, name, arguments: args, selections: children?.selections });
    fields.push({ name, responseKey, children: children?.fields });
  }
  return { selections, fields };
}

/**
 * What `@provides` makes resolvable for objects of `typeName`: the provided
 * fields themselves plus those under `... on <type>` fragments that apply.
 */
export function providedFor(index: FederationIndex, provided: SelectionSetNode | undefined, typeName: string): SelectionSetNode | undefined {
  if (!provided) return undefined;
  const fields: FieldNode[] = [];
  const visit = (set: SelectionSetNode): void => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) fields.push(selection);
      else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition?.name.value;
        if (!condition || condition === typeName || index.satisfies(typeName, condition)) visit(selection.selectionSet);
      }
    }
  };
  visit(provided);
  return fields.length > 0 ? { kind: Kind.SELECTION_SET, selections: fields } : undefined;
}

export function planningError(message: string): RouterError {
  return new RouterError('QUERY_PLANNING_FAILED', `Query planning failed: ${message}`, { status: 500 });
}
