import { Kind, type SelectionSetNode } from 'graphql';
import { RouterError } from '../errors.js';
import type { Supergraph, TypeDef } from './supergraph-model.js';

/**
 * Every `@key`, `@requires` and `@provides` field set must name fields that
 * exist: a supergraph that breaks this would fail each query touching the
 * type, so it is refused when loaded instead.
 */
export function checkFieldSets(supergraph: Pick<Supergraph, 'types'>): void {
  for (const type of supergraph.types.values()) {
    for (const [subgraph, keys] of type.keys) {
      for (const key of keys) check(supergraph, type.name, key.selectionSet, () => `${type.name} @key(fields: "${key.text}") in subgraph "${subgraph}"`);
    }
    for (const field of type.fields.values()) {
      for (const source of field.sources.values()) {
        const where = (directive: string) => () => `${type.name}.${field.name} @${directive} in subgraph "${source.subgraph}"`;
        if (source.requires) check(supergraph, type.name, source.requires, where('requires'));
        if (source.provides) check(supergraph, field.namedType, source.provides, where('provides'));
      }
    }
  }
}

function check(supergraph: Pick<Supergraph, 'types'>, typeName: string, set: SelectionSetNode, where: () => string): void {
  const type: TypeDef | undefined = supergraph.types.get(typeName);
  if (!type) throw invalid(where(), `type ${typeName} does not exist`);
  for (const selection of set.selections) {
    if (selection.kind === Kind.INLINE_FRAGMENT) {
      const condition = selection.typeCondition?.name.value ?? typeName;
      if (!supergraph.types.has(condition)) throw invalid(where(), `type ${condition} does not exist`);
      check(supergraph, condition, selection.selectionSet, where);
      continue;
    }
    if (selection.kind !== Kind.FIELD || selection.name.value === '__typename') continue;
    const field = type.fields.get(selection.name.value);
    if (!field) throw invalid(where(), `${typeName} has no field "${selection.name.value}"`);
    if (selection.selectionSet) check(supergraph, field.namedType, selection.selectionSet, where);
  }
}

function invalid(where: string, reason: string): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', `invalid supergraph: ${where}: ${reason}`);
}
