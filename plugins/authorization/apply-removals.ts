/**
 * After the merge: `null` and an `UNAUTHORIZED_FIELD_OR_TYPE` error at the
 * path of every removed field, with GraphQL's null propagation (a removed
 * non-null field nulls its parent, up to the nearest nullable position), and
 * the added `__typename` taken out. Merged data may be shared between
 * requests, so changed objects are copied, never written to.
 */
import { isListType, isNonNullType, type GraphQLOutputType, type GraphQLSchema } from 'graphql';
import type { GraphQLErrorJSON } from '../../src/index.js';
import { TYPENAME_ALIAS, type RemovalNode } from './filter-operation.js';

/** Code of the error at a removed field's path. */
export const UNAUTHORIZED_CODE = 'UNAUTHORIZED_FIELD_OR_TYPE';

type Path = ReadonlyArray<string | number>;

export function applyRemovals(data: Record<string, unknown> | null, removals: RemovalNode, schema: GraphQLSchema, errors: GraphQLErrorJSON[]): Record<string, unknown> | null {
  if (data === null) return null;
  const holds = (condition: string, runtime: unknown): boolean => {
    if (typeof runtime !== 'string') return true; // unknown runtime type: the strictest reading
    if (condition === runtime) return true;
    const abstract = schema.getType(condition);
    const object = schema.getType(runtime);
    if (!abstract || !object) return false;
    try {
      return schema.isSubType(abstract as never, object as never);
    } catch {
      return false;
    }
  };

  const applyObject = (object: Record<string, unknown>, node: RemovalNode, path: Path): Record<string, unknown> | null => {
    const runtime = object[TYPENAME_ALIAS] ?? object.__typename;
    const applies = (conditions: readonly string[]): boolean => conditions.every((condition) => holds(condition, runtime));
    let copy: Record<string, unknown> | undefined;
    const write = (key: string, value: unknown): void => {
      copy ??= { ...object };
      copy[key] = value;
    };
    for (const removed of node.removed) {
      if (!applies(removed.conditions) || Object.hasOwn(object, removed.key)) continue;
      errors.push({
        message: `Unauthorized to access ${removed.coordinate}: ${removed.reason}.`,
        path: [...path, removed.key],
        extensions: { code: UNAUTHORIZED_CODE },
      });
      if (removed.nonNull) return null;
      write(removed.key, null);
    }
    for (const child of node.children) {
      if (!applies(child.conditions)) continue;
      const value = object[child.key];
      if (value === null || value === undefined) continue;
      const next = applyValue(value, child.type, child.node, [...path, child.key]);
      if (next === value) continue;
      if (next === null && isNonNullType(child.type)) return null;
      write(child.key, next);
    }
    if (node.typename && Object.hasOwn(object, TYPENAME_ALIAS)) {
      copy ??= { ...object };
      delete copy[TYPENAME_ALIAS];
    }
    return copy ?? object;
  };

  /** The value with removals applied; null when it must become null. */
  const applyValue = (value: unknown, type: GraphQLOutputType, node: RemovalNode, path: Path): unknown => {
    if (value === null || value === undefined) return value;
    const nullable = isNonNullType(type) ? type.ofType : type;
    if (isListType(nullable)) {
      if (!Array.isArray(value)) return value;
      const itemType = nullable.ofType as GraphQLOutputType;
      let items: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const item = value[i];
        const next = applyValue(item, itemType, node, [...path, i]);
        if (next === item) continue;
        if (next === null && isNonNullType(itemType)) return null;
        (items ??= [...value])[i] = next;
      }
      return items ?? value;
    }
    if (typeof value !== 'object' || Array.isArray(value)) return value;
    return applyObject(value as Record<string, unknown>, node, path);
  };

  return applyObject(data, removals, []);
}
