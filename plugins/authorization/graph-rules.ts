/**
 * The access rules of a supergraph: `@authenticated`, `@requiresScopes` and
 * `@policy` on fields, objects, interfaces, scalars and enums, as
 * composition (Federation v2.5+/v2.6) writes them into the supergraph, under
 * the names its `@link`s give them. Read once per graph.
 */
import { getNamedType, isInterfaceType, isObjectType, Kind, valueFromASTUntyped, type ConstDirectiveNode, type GraphQLNamedType, type GraphQLSchema } from 'graphql';
import type { GraphInfo } from '../../src/index.js';

/** OR of ANDs: `[["a", "b"], ["c"]]` holds for (a and b) or c. */
export type AnyOfAll = readonly (readonly string[])[];

/** What selecting a field asks of the caller; every part must hold. */
export interface Requirement {
  readonly authenticated: boolean;
  /** Each entry must hold (one entry per directive that applies). */
  readonly scopes: readonly AnyOfAll[];
  readonly policies: readonly AnyOfAll[];
}

/** What the caller has. */
export interface Grant {
  readonly authenticated: boolean;
  readonly scopes: ReadonlySet<string>;
  /** Policies the policy hook granted (only those the operation uses are asked). */
  readonly policies: ReadonlySet<string>;
}

/** Why a field is refused: the first part of its requirement that fails. */
export type Refusal = 'not authenticated' | 'missing scopes' | 'denied by policy';

interface DirectiveNames {
  readonly authenticated: string;
  readonly requiresScopes: string;
  readonly policy: string;
}

const SPECS: ReadonlyArray<[keyof DirectiveNames, string]> = [
  ['authenticated', 'specs.apollo.dev/authenticated/'],
  ['requiresScopes', 'specs.apollo.dev/requiresScopes/'],
  ['policy', 'specs.apollo.dev/policy/'],
];

export class GraphRules {
  /** False when the graph has no access directive at all (the plugin then does nothing per request). */
  readonly any: boolean;
  readonly apiSchema: GraphQLSchema;
  private readonly ownTypes = new Map<string, Requirement>();
  private readonly ownFields = new Map<string, Requirement>();
  private readonly effective = new Map<string, Requirement | null>();

  constructor(graph: GraphInfo) {
    this.apiSchema = graph.apiSchema;
    const schema = graph.supergraph.schema;
    const names = directiveNames(schema);
    for (const type of Object.values(schema.getTypeMap())) {
      if (type.name.startsWith('__')) continue;
      const typeRequirement = readRequirement(directivesOf(type), names);
      if (typeRequirement) this.ownTypes.set(type.name, typeRequirement);
      if (isObjectType(type) || isInterfaceType(type)) {
        for (const field of Object.values(type.getFields())) {
          const fieldRequirement = readRequirement(field.astNode?.directives ?? [], names);
          if (fieldRequirement) this.ownFields.set(`${type.name}.${field.name}`, fieldRequirement);
        }
      }
    }
    this.any = this.ownTypes.size > 0 || this.ownFields.size > 0;
  }

  /**
   * What selecting `field` on `parentType` asks: the field's own directives,
   * its parent type's and its return type's; on an interface, also those of
   * the field and types of every implementation (the strictest, since the
   * runtime type is not known before fetching). Undefined: nothing.
   */
  fieldRequirement(parentType: string, field: string): Requirement | undefined {
    const key = `${parentType}.${field}`;
    let known = this.effective.get(key);
    if (known === undefined) {
      const parts: Requirement[] = [];
      const add = (type: string, name: string): void => {
        const own = this.ownTypes.get(type);
        if (own) parts.push(own);
        const ownField = this.ownFields.get(`${type}.${name}`);
        if (ownField) parts.push(ownField);
        const definition = this.apiSchema.getType(type);
        const returned = definition && (isObjectType(definition) || isInterfaceType(definition)) ? definition.getFields()[name] : undefined;
        const returnedRequirement = returned ? this.ownTypes.get(getNamedType(returned.type).name) : undefined;
        if (returnedRequirement) parts.push(returnedRequirement);
      };
      add(parentType, field);
      const parent = this.apiSchema.getType(parentType);
      if (parent && isInterfaceType(parent)) for (const implementation of this.apiSchema.getPossibleTypes(parent)) add(implementation.name, field);
      known = parts.length === 0 ? null : combine(parts);
      this.effective.set(key, known);
    }
    return known ?? undefined;
  }
}

/** The first failing part of a requirement; undefined when the grant satisfies it. */
export function refusal(requirement: Requirement, grant: Grant): Refusal | undefined {
  if ((requirement.authenticated || requirement.scopes.length > 0) && !grant.authenticated) return 'not authenticated';
  for (const scopes of requirement.scopes) if (!anyOfAll(scopes, grant.scopes)) return 'missing scopes';
  for (const policies of requirement.policies) if (!anyOfAll(policies, grant.policies)) return 'denied by policy';
  return undefined;
}

function anyOfAll(groups: AnyOfAll, held: ReadonlySet<string>): boolean {
  return groups.some((group) => group.every((item) => held.has(item)));
}

function combine(parts: readonly Requirement[]): Requirement {
  return {
    authenticated: parts.some((part) => part.authenticated),
    scopes: parts.flatMap((part) => part.scopes),
    policies: parts.flatMap((part) => part.policies),
  };
}

function directivesOf(type: GraphQLNamedType): readonly ConstDirectiveNode[] {
  const nodes = [type.astNode, ...(type.extensionASTNodes ?? [])];
  return nodes.flatMap((node) => (node && 'directives' in node ? (node.directives ?? []) : []));
}

function readRequirement(directives: readonly ConstDirectiveNode[], names: DirectiveNames): Requirement | undefined {
  let authenticated = false;
  const scopes: AnyOfAll[] = [];
  const policies: AnyOfAll[] = [];
  for (const directive of directives) {
    const name = directive.name.value;
    if (name === names.authenticated) authenticated = true;
    else if (name === names.requiresScopes) scopes.push(anyOfAllArg(directive, 'scopes'));
    else if (name === names.policy) policies.push(anyOfAllArg(directive, 'policies'));
  }
  return authenticated || scopes.length > 0 || policies.length > 0 ? { authenticated, scopes, policies } : undefined;
}

/** `[[String!]!]!` as written; a malformed value grants nothing (an empty OR). */
function anyOfAllArg(directive: ConstDirectiveNode, argument: string): AnyOfAll {
  const node = directive.arguments?.find((a) => a.name.value === argument)?.value;
  const value: unknown = node ? valueFromASTUntyped(node) : undefined;
  if (!Array.isArray(value)) return [];
  return value.map((group: unknown) => (Array.isArray(group) ? group.filter((item): item is string => typeof item === 'string') : [String(group)]));
}

/**
 * The directive names the supergraph uses: from its `@link(url:, as:)`s, else
 * the spec names. `@link(import: [{ name, as }])` renames need no handling
 * here: readSupergraph undoes them before building `supergraph.schema`. A
 * name another spec's `@link` imports (a directive of a team's own,
 * composed in with `@composeDirective`, that happens to be called
 * `@authenticated`) is that spec's, not Apollo's: it is not enforced.
 */
function directiveNames(schema: GraphQLSchema): DirectiveNames {
  const names: { -readonly [K in keyof DirectiveNames]: string } = { authenticated: 'authenticated', requiresScopes: 'requiresScopes', policy: 'policy' };
  const links = [schema.astNode, ...schema.extensionASTNodes].flatMap((definition) => (definition?.directives ?? []).filter((directive) => directive.name.value === 'link'));
  for (const directive of links) {
    const url = stringArg(directive, 'url');
    const as = stringArg(directive, 'as');
    if (!url || !as) continue;
    for (const [key, spec] of SPECS) if (url.includes(spec)) names[key] = as;
  }
  for (const directive of links) {
    const url = stringArg(directive, 'url');
    if (!url || SPECS.some(([, spec]) => url.includes(spec))) continue;
    for (const imported of importedNames(directive)) {
      for (const key of Object.keys(names) as Array<keyof DirectiveNames>) if (names[key] === imported) names[key] = '';
    }
  }
  return names;
}

/** The directive names a `@link(import:)` brings in, as the schema spells them (`"@x"`, or `{ name: "@x", as: "@y" }`). */
function importedNames(link: ConstDirectiveNode): string[] {
  const list = link.arguments?.find((a) => a.name.value === 'import')?.value;
  if (list?.kind !== Kind.LIST) return [];
  return list.values.flatMap((item) => {
    const value: unknown = valueFromASTUntyped(item);
    const name =
      typeof value === 'string'
        ? value
        : typeof value === 'object' && value !== null
          ? ((value as { as?: unknown; name?: unknown }).as ?? (value as { name?: unknown }).name)
          : undefined;
    return typeof name === 'string' && name.startsWith('@') ? [name.slice(1)] : [];
  });
}

function stringArg(directive: ConstDirectiveNode, name: string): string | undefined {
  const value = directive.arguments?.find((a) => a.name.value === name)?.value;
  return value?.kind === Kind.STRING ? value.value : undefined;
}
