/**
 * Random operations over any graph's API schema, for the plan-quality
 * corpus: random fields at each level, aliases, inline fragments with type
 * conditions on abstract types, named fragments, and `@skip`/`@include`
 * (with variables and with literal true/false) on fields, inline fragments
 * and fragment spreads. Seeded: the same operations on every run.
 */
import {
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInterfaceType,
  isNonNullType,
  isObjectType,
  isScalarType,
} from 'graphql';

/** A generated operation and the values of its `@skip`/`@include` variables. */
export interface GeneratedOperation {
  readonly query: string;
  readonly variables: Record<string, boolean>;
}

const MAX_DEPTH = 4;

/** A literal for a required scalar or enum argument; undefined when none can be made (input objects). */
function literalFor(field: GraphQLField<unknown, unknown>['args'][number]['type']): string | undefined {
  const type = getNamedType(field);
  if (isEnumType(type)) return type.getValues()[0]?.name;
  if (!isScalarType(type)) return undefined;
  if (type.name === 'Int') return '1';
  if (type.name === 'Float') return '1.5';
  if (type.name === 'Boolean') return 'true';
  return '"1"';
}

/** `name(args)` with every required argument given, or undefined when one cannot be. */
function fieldCall(field: GraphQLField<unknown, unknown>): string | undefined {
  const args: string[] = [];
  for (const arg of field.args) {
    if (!isNonNullType(arg.type) || arg.defaultValue !== undefined) continue;
    const value = literalFor(arg.type);
    if (value === undefined) return undefined;
    args.push(`${arg.name}: ${value}`);
  }
  return args.length ? `${field.name}(${args.join(', ')})` : field.name;
}

export function generateSchemaOperation(schema: GraphQLSchema, random: () => number): GeneratedOperation {
  const variables: Record<string, boolean> = {};
  const fragments: string[] = [];
  let aliases = 0;

  /** Sometimes a `@skip`/`@include` on a field, fragment or spread: a fresh variable or a literal. */
  const condition = (): string => {
    const roll = random();
    if (roll > 0.2) return '';
    const directive = random() < 0.5 ? 'include' : 'skip';
    if (roll < 0.05) return ` @${directive}(if: ${random() < 0.5})`;
    const name = `v${Object.keys(variables).length}`;
    variables[name] = random() < 0.6;
    return ` @${directive}(if: $${name})`;
  };

  const selection = (type: GraphQLNamedType, depth: number): string => {
    const parts: string[] = [];
    if (isAbstractType(type)) {
      if (random() < 0.5) parts.push('__typename');
      if (isInterfaceType(type)) parts.push(...fieldsOf(type, depth));
      // Type conditions on some possible types.
      for (const member of schema.getPossibleTypes(type)) {
        if (random() < 0.5) parts.push(`... on ${member.name}${condition()} ${selection(member, depth)}`);
      }
      if (parts.length === 0) parts.push('__typename');
    } else {
      parts.push(...fieldsOf(type, depth));
      if (parts.length === 0) {
        const leaf = isObjectType(type) ? Object.values(type.getFields()).find((f) => !isCompositeType(getNamedType(f.type)) && fieldCall(f)) : undefined;
        parts.push(leaf ? fieldCall(leaf)! : '__typename');
      }
    }
    const roll = random();
    if (depth > 0 && roll < 0.12) return `{ ... on ${type.name}${condition()} { ${parts.join(' ')} } }`;
    if (depth > 0 && roll < 0.24) {
      const name = `F${fragments.length}`;
      fragments.push(`fragment ${name} on ${type.name} { ${parts.join(' ')} }`);
      return `{ ...${name}${condition()} }`;
    }
    return `{ ${parts.join(' ')} }`;
  };

  const fieldsOf = (type: GraphQLNamedType, depth: number): string[] => {
    if (!isObjectType(type) && !isInterfaceType(type)) return [];
    const parts: string[] = [];
    const isRoot = depth === 0;
    for (const field of Object.values(type.getFields())) {
      if (field.name.startsWith('_')) continue;
      const call = fieldCall(field);
      if (!call) continue;
      const child = getNamedType(field.type);
      const composite = isCompositeType(child);
      if (composite && depth >= MAX_DEPTH) continue;
      if (random() > (isRoot ? 0.5 : composite ? 0.45 : 0.4)) continue;
      const alias = isRoot || random() < 0.2 ? `a${aliases++}: ` : '';
      parts.push(`${alias}${call}${condition()}${composite ? ` ${selection(child, depth + 1)}` : ''}`);
    }
    return parts;
  };

  const queryType = schema.getQueryType()!;
  let root = fieldsOf(queryType, 0);
  if (root.length === 0) root = ['__typename'];
  const names = Object.keys(variables);
  const header = names.length ? `query Generated(${names.map((n) => `$${n}: Boolean!`).join(', ')})` : 'query Generated';
  return { query: [`${header} { ${root.join(' ')} }`, ...fragments].join('\n'), variables };
}
