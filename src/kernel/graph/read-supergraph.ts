import { buildASTSchema, Kind, parse, type ConstDirectiveNode, type ConstValueNode, type DefinitionNode, type DocumentNode, type TypeNode } from 'graphql';
import { RouterError } from '../errors.js';
import { apiSchemaDocument } from './api-schema.js';
import { undoImportRenames } from './canonical-imports.js';
import { checkFieldSets } from './check-field-sets.js';
import { withIncrementalDirectives } from './incremental-directives.js';
import { parseFieldSet } from './field-set.js';
import { refuseUnsupportedJoinField, refuseUnsupportedLinkedFeatures } from './unsupported-features.js';
import type { FieldDef, FieldSource, KeyDef, SubgraphDef, Supergraph, TypeDef, TypeKind } from './supergraph-model.js';

/** Directive names of the specs the supergraph links, after `@link(as:)` renames. */
interface SpecNames {
  readonly join: string;
  readonly inaccessible: string;
}

/**
 * Reads a Federation v2 supergraph SDL (join spec v0.2+) into the planner's
 * model. `@link(import: [{ name, as }])` renames are undone first (see
 * canonical-imports.ts); `schema` and `apiSchema` use the spec names. A
 * supergraph linking a feature `for: EXECUTION` or `for: SECURITY` that
 * Switchyard does not implement is refused (unsupported-features.ts), and
 * the API schema drops what `@inaccessible` hides (api-schema.ts). Throws
 * `SUPERGRAPH_INVALID` with a message a user can act on.
 */
export function readSupergraph(sdl: string): Supergraph {
  let document: DocumentNode;
  try {
    document = parse(sdl, { noLocation: false });
  } catch (error) {
    throw invalid(`not valid GraphQL SDL: ${(error as Error).message}`);
  }
  // A feature for EXECUTION or SECURITY Switchyard lacks refuses the whole supergraph, before anything else is read.
  refuseUnsupportedLinkedFeatures(document);
  // First, so the public schema, the planner and the access rules (read from
  // `schema`) all see `@inaccessible`, `@requiresScopes`... under their own names.
  document = undoImportRenames(document);
  const names = specNames(document);
  const subgraphs = readSubgraphs(document, names);
  const byEnum = new Map(subgraphs.map((s) => [s.enumValue, s.name]));
  const types = new Map<string, TypeDef>();
  for (const definition of document.definitions) {
    const type = readType(definition, names, byEnum);
    if (type) types.set(type.name, type);
  }
  checkFieldSets({ types });
  let schema;
  let apiSchema;
  try {
    schema = buildASTSchema(document, { assumeValidSDL: true });
    apiSchema = withIncrementalDirectives(buildASTSchema(apiSchemaDocument(document, names.inaccessible)));
  } catch (error) {
    if (error instanceof RouterError) throw error;
    throw invalid(`the supergraph does not build a schema: ${(error as Error).message}`);
  }
  const rootTypes = {
    query: schema.getQueryType()?.name ?? 'Query',
    mutation: schema.getMutationType()?.name,
    subscription: schema.getSubscriptionType()?.name,
  };
  if (!types.has(rootTypes.query)) throw invalid(`the supergraph has no query type "${rootTypes.query}"`);
  return { sdl, subgraphs, types, rootTypes, apiSchema, schema };
}

function invalid(message: string): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', `invalid supergraph: ${message}`);
}

function specNames(document: DocumentNode): SpecNames {
  let join: string | undefined;
  let inaccessible = 'inaccessible';
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.SCHEMA_DEFINITION && definition.kind !== Kind.SCHEMA_EXTENSION) continue;
    for (const directive of definition.directives ?? []) {
      if (directive.name.value !== 'link' && directive.name.value !== 'core') continue;
      const url = stringArg(directive, 'url') ?? stringArg(directive, 'feature');
      if (!url) continue;
      const as = stringArg(directive, 'as');
      if (url.includes('specs.apollo.dev/join/')) join = as ?? 'join';
      if (url.includes('specs.apollo.dev/inaccessible/')) inaccessible = as ?? 'inaccessible';
    }
  }
  if (!join) {
    const hasJoinGraph = document.definitions.some((d) => d.kind === Kind.ENUM_TYPE_DEFINITION && d.name.value === 'join__Graph');
    if (!hasJoinGraph) throw invalid('it does not link the join spec (no @link to https://specs.apollo.dev/join and no join__Graph enum)');
    join = 'join';
  }
  return { join, inaccessible };
}

function readSubgraphs(document: DocumentNode, names: SpecNames): SubgraphDef[] {
  const graphEnum = document.definitions.find((d) => d.kind === Kind.ENUM_TYPE_DEFINITION && d.name.value === `${names.join}__Graph`);
  if (!graphEnum || graphEnum.kind !== Kind.ENUM_TYPE_DEFINITION) {
    throw invalid(`no enum ${names.join}__Graph naming the subgraphs`);
  }
  const subgraphs: SubgraphDef[] = [];
  for (const value of graphEnum.values ?? []) {
    const directive = value.directives?.find((d) => d.name.value === `${names.join}__graph`);
    const name = directive ? stringArg(directive, 'name') : undefined;
    const url = directive ? stringArg(directive, 'url') : undefined;
    if (!name || url === undefined) {
      throw invalid(`${names.join}__Graph.${value.name.value} has no @${names.join}__graph(name:, url:)`);
    }
    subgraphs.push({ name, enumValue: value.name.value, url });
  }
  return subgraphs;
}

const KIND_BY_DEFINITION: Partial<Record<Kind, TypeKind>> = {
  [Kind.OBJECT_TYPE_DEFINITION]: 'OBJECT',
  [Kind.INTERFACE_TYPE_DEFINITION]: 'INTERFACE',
  [Kind.UNION_TYPE_DEFINITION]: 'UNION',
  [Kind.ENUM_TYPE_DEFINITION]: 'ENUM',
  [Kind.INPUT_OBJECT_TYPE_DEFINITION]: 'INPUT_OBJECT',
  [Kind.SCALAR_TYPE_DEFINITION]: 'SCALAR',
};

function readType(definition: DefinitionNode, names: SpecNames, byEnum: ReadonlyMap<string, string>): TypeDef | undefined {
  const kind = KIND_BY_DEFINITION[definition.kind];
  if (!kind || !('name' in definition) || !definition.name) return undefined;
  const typeName = definition.name.value;
  if (typeName.startsWith(`${names.join}__`) || typeName.startsWith('link__')) return undefined;
  const directives: readonly ConstDirectiveNode[] = (definition as { directives?: readonly ConstDirectiveNode[] }).directives ?? [];
  const graphOf = (directive: ConstDirectiveNode, arg = 'graph'): string => {
    const value = enumArg(directive, arg);
    const graph = value ? byEnum.get(value) : undefined;
    if (!graph) throw invalid(`${typeName}: @${directive.name.value} names unknown subgraph "${value}"`);
    return graph;
  };

  const subgraphs = new Set<string>();
  const keys = new Map<string, KeyDef[]>();
  const interfaceObjectIn = new Set<string>();
  const implementsIn = new Map<string, Set<string>>();
  const unionMembersIn = new Map<string, Set<string>>();
  for (const directive of directives) {
    const name = directive.name.value;
    if (name === `${names.join}__type`) {
      const graph = graphOf(directive);
      subgraphs.add(graph);
      const keyText = stringArg(directive, 'key');
      if (keyText !== undefined) {
        const list = keys.get(graph) ?? [];
        list.push({ text: keyText, selectionSet: fieldSet(typeName, keyText), resolvable: booleanArg(directive, 'resolvable') ?? true });
        keys.set(graph, list);
      }
      if (booleanArg(directive, 'isInterfaceObject')) interfaceObjectIn.add(graph);
    } else if (name === `${names.join}__implements`) {
      addTo(implementsIn, stringArg(directive, 'interface') ?? '', graphOf(directive));
    } else if (name === `${names.join}__unionMember`) {
      addTo(unionMembersIn, stringArg(directive, 'member') ?? '', graphOf(directive));
    }
  }

  const fields = new Map<string, FieldDef>();
  const fieldNodes =
    definition.kind === Kind.OBJECT_TYPE_DEFINITION || definition.kind === Kind.INTERFACE_TYPE_DEFINITION || definition.kind === Kind.INPUT_OBJECT_TYPE_DEFINITION
      ? (definition.fields ?? [])
      : [];
  for (const field of fieldNodes) {
    const sources = new Map<string, FieldSource>();
    let interfaceObjectOnly = false;
    for (const directive of field.directives ?? []) {
      if (directive.name.value !== `${names.join}__field`) continue;
      if (!directive.arguments?.some((a) => a.name.value === 'graph')) {
        interfaceObjectOnly = true;
        continue;
      }
      const graph = graphOf(directive);
      refuseUnsupportedJoinField(`${typeName}.${field.name.value}`, directive);
      const requires = stringArg(directive, 'requires');
      const provides = stringArg(directive, 'provides');
      sources.set(graph, {
        subgraph: graph,
        external: booleanArg(directive, 'external') ?? false,
        requires: requires === undefined ? undefined : fieldSet(`${typeName}.${field.name.value}`, requires),
        provides: provides === undefined ? undefined : fieldSet(`${typeName}.${field.name.value}`, provides),
        type: stringArg(directive, 'type'),
        usedOverridden: booleanArg(directive, 'usedOverridden') ?? false,
        overrideFrom: stringArg(directive, 'override'),
        overrideLabel: stringArg(directive, 'overrideLabel'),
      });
    }
    fields.set(field.name.value, {
      name: field.name.value,
      parentType: typeName,
      namedType: namedTypeOf(field.type),
      sources,
      interfaceObjectOnly: interfaceObjectOnly && sources.size === 0,
      inaccessible: hasDirective(field.directives, names.inaccessible),
    });
  }

  const enumValuesIn = new Map<string, Set<string>>();
  if (definition.kind === Kind.ENUM_TYPE_DEFINITION) {
    for (const value of definition.values ?? []) {
      const graphs = new Set<string>();
      for (const directive of value.directives ?? []) {
        if (directive.name.value === `${names.join}__enumValue`) graphs.add(graphOf(directive));
      }
      enumValuesIn.set(value.name.value, graphs.size > 0 ? graphs : new Set(subgraphs));
    }
  }
  // Fields of interfaces/objects inherited through union/implements are resolved by the planner.
  return {
    name: typeName,
    kind,
    subgraphs,
    keys,
    interfaceObjectIn,
    implementsIn,
    unionMembersIn,
    enumValuesIn,
    fields,
    inaccessible: hasDirective(directives, names.inaccessible),
  };
}

function fieldSet(owner: string, text: string) {
  try {
    return parseFieldSet(text);
  } catch (error) {
    throw invalid(`${owner}: field set "${text}" does not parse: ${(error as Error).message}`);
  }
}

function addTo(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key) ?? new Set<string>();
  set.add(value);
  map.set(key, set);
}

function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}

function hasDirective(directives: readonly ConstDirectiveNode[] | undefined, name: string): boolean {
  return directives?.some((d) => d.name.value === name) ?? false;
}

function argValue(directive: ConstDirectiveNode, name: string): ConstValueNode | undefined {
  return directive.arguments?.find((a) => a.name.value === name)?.value;
}

function stringArg(directive: ConstDirectiveNode, name: string): string | undefined {
  const value = argValue(directive, name);
  return value?.kind === Kind.STRING ? value.value : undefined;
}

function enumArg(directive: ConstDirectiveNode, name: string): string | undefined {
  const value = argValue(directive, name);
  return value?.kind === Kind.ENUM ? value.value : undefined;
}

function booleanArg(directive: ConstDirectiveNode, name: string): boolean | undefined {
  const value = argValue(directive, name);
  return value?.kind === Kind.BOOLEAN ? value.value : undefined;
}
