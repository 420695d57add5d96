/**
 * Field collection over the selection sets of a subgraph fetch, as GraphQL
 * execution does it: fragments whose type condition applies to the runtime
 * type, `@skip` / `@include` with the request's variables, fields grouped by
 * response key.
 */
import {
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  Kind,
  getDirectiveValues,
  isAbstractType,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';

/** What field collection needs besides the selections. */
export interface CollectContext {
  readonly schema: GraphQLSchema;
  readonly fragments: Readonly<Record<string, FragmentDefinitionNode>>;
  readonly variables: Readonly<Record<string, unknown>>;
}

/** Set by `collectFields` when `@skip` / `@include` took part, so the result holds for these variables only. */
export interface VariableUse {
  variables: boolean;
}

/**
 * Fields selected on an object of `type`, by response key (several nodes when
 * a key is selected twice). `use.variables` becomes true when a directive was
 * read, i.e. the result depends on the request's variables.
 */
export function collectFields(
  context: CollectContext,
  type: GraphQLObjectType,
  selectionSets: readonly SelectionSetNode[],
  use: VariableUse = { variables: false },
): Map<string, FieldNode[]> {
  const fields = new Map<string, FieldNode[]>();
  const visited = new Set<string>();
  for (const selectionSet of selectionSets) collectInto(context, type, selectionSet, fields, visited, use);
  return fields;
}

/** The selection sets under a field's nodes, merged for collection. */
export function subSelections(nodes: readonly FieldNode[]): SelectionSetNode[] {
  return nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
}

function collectInto(
  context: CollectContext,
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  fields: Map<string, FieldNode[]>,
  visited: Set<string>,
  use: VariableUse,
): void {
  for (const selection of selectionSet.selections) {
    if (selection.directives !== undefined && selection.directives.length > 0) {
      use.variables = true;
      if (!included(context, selection)) continue;
    }
    switch (selection.kind) {
      case Kind.FIELD: {
        const key = selection.alias?.value ?? selection.name.value;
        const list = fields.get(key);
        if (list) list.push(selection);
        else fields.set(key, [selection]);
        break;
      }
      case Kind.INLINE_FRAGMENT:
        if (!selection.typeCondition || applies(context, selection.typeCondition.name.value, type)) {
          collectInto(context, type, selection.selectionSet, fields, visited, use);
        }
        break;
      case Kind.FRAGMENT_SPREAD: {
        const name = selection.name.value;
        const fragment = context.fragments[name];
        if (visited.has(name) || !fragment) continue;
        visited.add(name);
        if (applies(context, fragment.typeCondition.name.value, type)) collectInto(context, type, fragment.selectionSet, fields, visited, use);
        break;
      }
    }
  }
}

function included(context: CollectContext, node: Parameters<typeof getDirectiveValues>[1]): boolean {
  if (getDirectiveValues(GraphQLSkipDirective, node, context.variables)?.if === true) return false;
  return getDirectiveValues(GraphQLIncludeDirective, node, context.variables)?.if !== false;
}

function applies(context: CollectContext, condition: string, type: GraphQLObjectType): boolean {
  if (condition === type.name) return true;
  const conditionType = context.schema.getType(condition);
  return conditionType !== undefined && isAbstractType(conditionType) && context.schema.isSubType(conditionType, type);
}
