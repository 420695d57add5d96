/**
 * A subscription's top level field may not depend on `@skip` or `@include`
 * (GraphQL spec, "Single Root Field": which field the subscription opens
 * must be known before any variable is). graphql-js 16 checks the single
 * root field with no variable values, so a condition reading a variable
 * throws "was not provided a runtime value" out of validation, and a literal
 * condition is accepted; graphql-js 17 refuses both with this message.
 */
import { GraphQLError, Kind, type ASTNode, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

/** The validation error for the document's first subscription with a conditional top level selection, if any. */
export function subscriptionRootConditionError(document: DocumentNode): GraphQLError | undefined {
  let fragments: Map<string, FragmentDefinitionNode> | undefined;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION || definition.operation !== 'subscription') continue;
    fragments ??= new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
    const found: ASTNode[] = [];
    conditionsAtTopLevel(definition.selectionSet, fragments, found);
    if (found.length === 0) continue;
    const name = definition.name?.value;
    const subject = name === undefined ? 'Anonymous Subscription' : `Subscription "${name}"`;
    return new GraphQLError(`${subject} must not use \`@skip\` or \`@include\` directives in the top level selection.`, { nodes: found });
  }
  return undefined;
}

/**
 * Collects the `@skip`/`@include` directives of a top level selection set,
 * through its fragments (each once), with an explicit stack: a chain of
 * fragments is as long as the body allows.
 */
function conditionsAtTopLevel(root: SelectionSetNode, fragments: ReadonlyMap<string, FragmentDefinitionNode>, found: ASTNode[]): void {
  const reached = new Set<string>();
  const sets: SelectionSetNode[] = [root];
  for (let set = sets.pop(); set !== undefined; set = sets.pop()) {
    for (const selection of set.selections) {
      for (const directive of selection.directives ?? []) {
        if (directive.name.value === 'skip' || directive.name.value === 'include') found.push(directive);
      }
      if (selection.kind === Kind.INLINE_FRAGMENT) sets.push(selection.selectionSet);
      else if (selection.kind === Kind.FRAGMENT_SPREAD && !reached.has(selection.name.value)) {
        reached.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) sets.push(fragment.selectionSet);
      }
    }
  }
}
