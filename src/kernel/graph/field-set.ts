import { Kind, parse, type FieldNode, type SelectionSetNode } from 'graphql';

/**
 * Parses a federation field set (`"id organization { id }"`, the argument of
 * `@key`, `@requires`, `@provides`) into a selection set.
 */
export function parseFieldSet(text: string): SelectionSetNode {
  const document = parse(`{${text}}`, { noLocation: true });
  const definition = document.definitions[0];
  if (!definition || definition.kind !== Kind.OPERATION_DEFINITION) {
    throw new Error(`invalid field set "${text}"`);
  }
  return definition.selectionSet;
}

/** The top-level field names a field set selects (fragments flattened). */
export function fieldSetFieldNames(selectionSet: SelectionSetNode): string[] {
  const names: string[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) names.push(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) names.push(...fieldSetFieldNames(selection.selectionSet));
  }
  return names;
}

/** Finds the sub-selection for `fieldName` inside a field set, if any. */
export function subFieldSet(selectionSet: SelectionSetNode | undefined, fieldName: string): FieldNode | undefined {
  if (!selectionSet) return undefined;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD && selection.name.value === fieldName) return selection;
  }
  return undefined;
}
