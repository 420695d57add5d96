/**
 * Whether a document asks only for introspection (`__schema`, `__type`,
 * `__typename`): what `authentication.ignore_introspection` lets through
 * without a token.
 */
import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

const INTROSPECTION_FIELDS: ReadonlySet<string> = new Set(['__schema', '__type', '__typename']);

/**
 * True when the document has at least one operation and every operation is a
 * query whose root selections, fragments followed, are introspection fields.
 * Every operation, not only the one to run: the check runs before the
 * operation is chosen, and a document that also holds another operation is
 * not an introspection document.
 */
export function isIntrospectionOnly(document: DocumentNode): boolean {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
    // Two fragments of one name: validation refuses the document, and its messages must not reach a caller without a token.
    if (fragments.has(definition.name.value)) return false;
    fragments.set(definition.name.value, definition);
  }
  // A fragment already followed needs no second look (and a cycle ends; validation refuses it later).
  const followed = new Set<string>();
  const selectsOnlyIntrospection = (selectionSet: SelectionSetNode): boolean =>
    selectionSet.selections.every((selection) => {
      switch (selection.kind) {
        case Kind.FIELD:
          return INTROSPECTION_FIELDS.has(selection.name.value);
        case Kind.INLINE_FRAGMENT:
          return selectsOnlyIntrospection(selection.selectionSet);
        case Kind.FRAGMENT_SPREAD: {
          const name = selection.name.value;
          if (followed.has(name)) return true;
          followed.add(name);
          const fragment = fragments.get(name);
          return fragment !== undefined && selectsOnlyIntrospection(fragment.selectionSet);
        }
      }
    });
  let operations = 0;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) continue;
    if (definition.kind !== Kind.OPERATION_DEFINITION || definition.operation !== 'query') return false;
    if (!selectsOnlyIntrospection(definition.selectionSet)) return false;
    operations++;
  }
  return operations > 0;
}
