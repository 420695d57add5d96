import { Kind, type ArgumentNode, type FieldNode, type SelectionSetNode } from 'graphql';
import { RouterError } from '../errors.js';
import type { FederationIndex } from '../graph/federation-index.js';
import type { NSelection } from './normalize.js';
import type { RepresentationField } from './query-plan.js';

/** What the planner's own response keys and aliases hold (`__sy_weight`, `name__sy_0`), made unlike the client's keys at their position. */
export const INTERNAL_MARK = '__sy_';

/**
 * The client's response keys anywhere in the operation, each with whether
 * every field under it is the plain field of that name (no alias of another
 * field, no arguments). A field the planner adds for itself (a key, a
 * `@requires` field) shares the client's key only then: fields in sibling
 * fragments (and under parent fields written in several of them) answer
 * into the same objects, so a check of one position's selections alone
 * could let the planner's `upc` meet a client's `upc: name` at the subgraph.
 */
export class ClientKeys {
  private readonly keys = new Map<string, boolean>();

  constructor(selections: readonly NSelection[]) {
    const pending: Array<readonly NSelection[]> = [selections];
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      for (const selection of next) {
        if (selection.kind === 'Fragment') {
          pending.push(selection.selections);
          continue;
        }
        const plain = selection.responseKey === selection.name && selection.arguments.length === 0;
        this.keys.set(selection.responseKey, (this.keys.get(selection.responseKey) ?? true) && plain);
        if (selection.selections) pending.push(selection.selections);
      }
    }
  }

  /** Whether the client uses `key` anywhere. */
  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** Whether the planner's plain field `name` may share the client's key `name`. */
  sharable(name: string): boolean {
    return this.keys.get(name) !== false;
  }
}

/**
 * The response key for a field the planner adds: its own name unless the
 * client uses that key for something else anywhere, in which case an
 * internal alias no client key equals.
 */
export function internalKey(clientKeys: ClientKeys, name: string, args: readonly ArgumentNode[]): string {
  if (args.length === 0 && clientKeys.sharable(name)) return name;
  const argsText = args.map((a) => `${a.name.value}:${JSON.stringify(a.value)}`).join(',');
  let key = `${INTERNAL_MARK}${name}${args.length > 0 ? `_${hash(argsText)}` : ''}`;
  // A client may alias a field `__sy_weight` too: the planner's key must not take the client's value (or give it ours).
  while (clientKeys.has(key)) key += '_';
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
export function convertFieldSet(index: FederationIndex, set: SelectionSetNode, clientKeys: ClientKeys, parentType: string): ConvertedFieldSet {
  const selections: NSelection[] = [];
  const fields: RepresentationField[] = [];
  for (const selection of set.selections) {
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition?.name.value ?? parentType;
      const inner = convertFieldSet(index, selection.selectionSet, clientKeys, condition);
      selections.push({ kind: 'Fragment', typeCondition: condition, selections: inner.selections });
      fields.push(...inner.fields.map((field) => ({ ...field, typeCondition: field.typeCondition ?? condition })));
      continue;
    }
    if (selection.kind !== Kind.FIELD) continue;
    const name = selection.name.value;
    const args = selection.arguments ?? [];
    const responseKey = internalKey(clientKeys, name, args);
    let children: ConvertedFieldSet | undefined;
    if (selection.selectionSet) children = convertFieldSet(index, selection.selectionSet, clientKeys, index.fieldNamedType(parentType, name));
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
