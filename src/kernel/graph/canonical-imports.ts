/**
 * Undoes `@link(import: [{ name: "@requiresScopes", as: "@scopes" }])`
 * renames in a supergraph, so every reader after it (public schema,
 * authorization rules, planner) sees the spec's own names. A rename missed
 * by one reader would silently drop a security rule (`@requiresScopes`,
 * `@inaccessible`), so this runs once, on the document, before any of them.
 *
 * Only `import:` renames are undone; the namespace form
 * `@link(url:, as: "x")` is left to the readers, which know their spec's
 * prefix.
 *
 * Before that, every `@link`'s `import:` list is checked as the link spec
 * and Apollo's composition check it (`extractCoreFeatureImports` and
 * `CoreFeatures.add` in @apollo/federation-internals): entries are strings or
 * `{ name, as }` objects of GraphQL names (`@`-prefixed for directives, on
 * both sides of a rename), and one element is never imported under two
 * names. The same import written twice identically (`["@key", "@key"]`) is
 * tolerated, as Apollo tolerates it.
 */
import { Kind, print, visit, type ASTNode, type ConstDirectiveNode, type ConstValueNode, type DocumentNode, type NameNode } from 'graphql';
import { RouterError } from '../errors.js';

/** Renames one `@link` import undoes: the name used in the document → the name the spec gives it. */
interface Renames {
  readonly directives: Map<string, string>;
  readonly types: Map<string, string>;
}

/**
 * The document with every import rename of a `specs.apollo.dev` `@link`
 * replaced by the imported name, and the renames dropped from the `@link`s.
 * Throws `SUPERGRAPH_INVALID` when an import entry is malformed, when one
 * element is imported under two names, or when a rename cannot be undone
 * (its target name is already taken).
 */
export function undoImportRenames(document: DocumentNode): DocumentNode {
  assertImportsWellFormed(document);
  const renames = collectRenames(document);
  if (renames.directives.size === 0 && renames.types.size === 0) return document;
  assertTargetsFree(document, renames);
  const directive = (name: NameNode): NameNode => renamed(name, renames.directives);
  const type = (name: NameNode): NameNode => renamed(name, renames.types);
  const typeName = { enter: (node: { readonly name: NameNode }) => ({ ...node, name: type(node.name) }) };
  return visit(document, {
    Directive: {
      enter: (node) => ({ ...node, name: directive(node.name), arguments: isLink(node) && isApolloSpec(node as ConstDirectiveNode) ? withoutRenames(node) : node.arguments }),
    },
    DirectiveDefinition: { enter: (node) => ({ ...node, name: directive(node.name) }) },
    NamedType: typeName,
    ScalarTypeDefinition: typeName,
    ObjectTypeDefinition: typeName,
    InterfaceTypeDefinition: typeName,
    UnionTypeDefinition: typeName,
    EnumTypeDefinition: typeName,
    InputObjectTypeDefinition: typeName,
    ScalarTypeExtension: typeName,
    ObjectTypeExtension: typeName,
    InterfaceTypeExtension: typeName,
    UnionTypeExtension: typeName,
    EnumTypeExtension: typeName,
    InputObjectTypeExtension: typeName,
  });
}

function renamed(name: NameNode, map: ReadonlyMap<string, string>): NameNode {
  const target = map.get(name.value);
  return target === undefined ? name : { ...name, value: target };
}

function invalid(message: string): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', `invalid supergraph: ${message}`);
}

/** `@link`s on the schema definition or its extensions. */
function schemaLinks(document: DocumentNode): ConstDirectiveNode[] {
  return document.definitions.flatMap((definition) =>
    definition.kind === Kind.SCHEMA_DEFINITION || definition.kind === Kind.SCHEMA_EXTENSION ? (definition.directives ?? []).filter(isLink) : [],
  );
}

function isLink(directive: { readonly name: NameNode; readonly arguments?: readonly { readonly name: NameNode }[] }): boolean {
  return directive.name.value === 'link' && (directive.arguments ?? []).some((a) => a.name.value === 'url');
}

/** Only the specs of specs.apollo.dev: a foreign `@link` is none of the router's business. */
function isApolloSpec(directive: ConstDirectiveNode): boolean {
  const url = directive.arguments?.find((a) => a.name.value === 'url')?.value;
  return url?.kind === Kind.STRING && /^https?:\/\/specs\.apollo\.dev\//.test(url.value);
}

interface LinkImport {
  /** The element's name in the spec: `@requiresScopes`, `Purpose`. */
  readonly name: string;
  /** The name it is imported under, when the entry gives one. */
  readonly as?: string;
}

/** A GraphQL name, with its leading `@` for a directive: the link spec's `Import` (Apollo's `importRegExp`). */
const IMPORT_NAME = /^@?[_A-Za-z][_0-9A-Za-z]*$/;

/**
 * The entries of a `@link`'s `import:` list. Refuses what Apollo's
 * composition refuses (`extractCoreFeatureImports`): an entry neither a
 * string nor an object, an object without a string `name`, a non-string
 * `as`, keys other than `name` and `as` (or one of them twice), names that
 * are not GraphQL names (`"@"`, `"@1x"`, `"@a b"`, `""`), and a rename
 * crossing between directive and type.
 */
function linkImports(link: ConstDirectiveNode): LinkImport[] {
  const url = stringArgument(link, 'url') ?? '';
  const refuse = (entry: ConstValueNode, reason: string): RouterError => invalid(`@link(url: "${url}") import ${print(entry)}: ${reason}`);
  const imports: LinkImport[] = [];
  for (const entry of importEntries(link)) {
    if (entry.kind === Kind.STRING) {
      if (!IMPORT_NAME.test(entry.value)) throw refuse(entry, notAName(entry.value));
      imports.push({ name: entry.value });
      continue;
    }
    if (entry.kind !== Kind.OBJECT) throw refuse(entry, 'an import is a string or an object { name: "...", as: "..." }');
    const seen = new Set<string>();
    for (const field of entry.fields) {
      const key = field.name.value;
      if (key !== 'name' && key !== 'as') throw refuse(entry, `unknown key "${key}" (an import has only name and as)`);
      if (seen.has(key)) throw refuse(entry, `"${key}" is given twice`);
      seen.add(key);
      if (field.value.kind !== Kind.STRING) throw refuse(entry, `"${key}" must be a string`);
      if (!IMPORT_NAME.test(field.value.value)) throw refuse(entry, notAName(field.value.value));
    }
    const name = stringField(entry, 'name');
    const as = stringField(entry, 'as');
    if (name === undefined) throw refuse(entry, as === undefined ? 'it names nothing to import' : `it renames to "${as}" but names nothing to import`);
    if (as !== undefined && name.startsWith('@') !== as.startsWith('@')) {
      throw refuse(entry, 'a directive must be renamed to a directive (with @) and a type to a type (without @)');
    }
    imports.push(as === undefined ? { name } : { name, as });
  }
  return imports;
}

function notAName(name: string): string {
  return `${JSON.stringify(name)} is not a GraphQL name (a directive's with its leading @)`;
}

/**
 * Every `@link`'s imports are well formed, and no element of a spec is
 * imported under two names, by one `@link` or by two linking the same spec
 * (`["@inaccessible", { name: "@inaccessible", as: "@hidden" }]`): which name
 * is the spec's would be ambiguous, and a field marked with the other one
 * could be missed by a reader. A link brings in the directive named after
 * its spec (as `@<as:>` or `@<spec>`) unless its `import:` list names it.
 */
function assertImportsWellFormed(document: DocumentNode): void {
  const imported = new Map<string, { readonly as: string; readonly url: string; readonly link: ConstDirectiveNode }>();
  for (const link of schemaLinks(document)) {
    const url = stringArgument(link, 'url') ?? '';
    const imports = linkImports(link);
    const version = /\/v\d+\.\d+\/?$/.exec(url);
    const identity = version ? url.slice(0, version.index) : url;
    const spec = /\/([A-Za-z_][\w-]*)\/v\d+\.\d+\/?$/.exec(url)?.[1];
    const entries = [...imports];
    if (spec !== undefined && !imports.some((i) => i.name === `@${spec}`)) entries.push({ name: `@${spec}`, as: `@${stringArgument(link, 'as') ?? spec}` });
    for (const { name, as = name } of entries) {
      const key = `${identity}\n${name}`;
      const earlier = imported.get(key);
      if (earlier === undefined) imported.set(key, { as, url, link });
      else if (earlier.as !== as) {
        const where = earlier.link === link ? 'it' : `@link(url: "${earlier.url}")`;
        throw invalid(
          `@link(url: "${url}") imports ${name} as ${as}, but ${where} also imports ${name} as ${earlier.as}: one ${name.startsWith('@') ? 'directive' : 'type'} under two names`,
        );
      }
    }
  }
}

interface ImportRename {
  readonly name: string;
  readonly as: string;
}

/** `{ name: "...", as: "..." }` entries of a `@link`'s `import:` list (plain strings rename nothing). */
function importRenames(link: ConstDirectiveNode): ImportRename[] {
  return linkImports(link).flatMap(({ name, as }) => (as === undefined ? [] : [{ name, as }]));
}

function stringField(value: ConstValueNode & { kind: Kind.OBJECT }, field: string): string | undefined {
  const found = value.fields.find((f) => f.name.value === field)?.value;
  return found?.kind === Kind.STRING ? found.value : undefined;
}

function collectRenames(document: DocumentNode): Renames {
  const renames: Renames = { directives: new Map(), types: new Map() };
  for (const link of schemaLinks(document)) {
    if (!isApolloSpec(link)) continue;
    for (const { name, as } of importRenames(link)) {
      const isDirective = name.startsWith('@');
      const map = isDirective ? renames.directives : renames.types;
      const from = isDirective ? as.slice(1) : as;
      const to = isDirective ? name.slice(1) : name;
      if (from === to) continue;
      const earlier = map.get(from);
      if (earlier !== undefined && earlier !== to) throw invalid(`@link imports both ${display(earlier, isDirective)} and ${display(to, isDirective)} as "${as}"`);
      map.set(from, to);
    }
  }
  return renames;
}

function display(name: string, isDirective: boolean): string {
  return isDirective ? `@${name}` : `"${name}"`;
}

/**
 * A rename can be undone only when the spec's own name is not already used
 * for something else: `@requiresScopes` defined or applied next to an import
 * renaming it to `@scopes` would merge two directives into one.
 */
function assertTargetsFree(document: DocumentNode, renames: Renames): void {
  const usedDirectives = new Set<string>();
  const usedTypes = new Set<string>();
  visit(document, {
    enter: (node: ASTNode) => {
      if (node.kind === Kind.DIRECTIVE || node.kind === Kind.DIRECTIVE_DEFINITION) usedDirectives.add(node.name.value);
      else if (node.kind === Kind.NAMED_TYPE || node.kind.endsWith('TypeDefinition') || node.kind.endsWith('TypeExtension')) {
        if ('name' in node && node.name) usedTypes.add(node.name.value);
      }
    },
  });
  const check = (map: ReadonlyMap<string, string>, used: ReadonlySet<string>, isDirective: boolean): void => {
    for (const [from, to] of map) {
      // Taken, unless the name in use is itself renamed away (two imports swapping names).
      if (used.has(to) && !map.has(to)) {
        throw invalid(
          `@link imports ${display(to, isDirective)} as ${display(from, isDirective)}, but ${display(to, isDirective)} is also used as a different ${isDirective ? 'directive' : 'type'}`,
        );
      }
    }
  };
  check(renames.directives, usedDirectives, true);
  check(renames.types, usedTypes, false);
  // A name another `@link` brings in as it is: `{ name: "@tag", as: "@requiresScopes" }` next to
  // a plain `@requiresScopes` import would turn every `@requiresScopes` into `@tag`.
  const plain = plainImports(document);
  for (const [map, isDirective] of [
    [renames.directives, true],
    [renames.types, false],
  ] as const) {
    for (const [from, to] of map) {
      const url = plain.get(isDirective ? `@${from}` : from);
      if (url !== undefined) {
        throw invalid(`@link imports ${display(to, isDirective)} as ${display(from, isDirective)}, but @link(url: "${url}") also imports ${display(from, isDirective)}`);
      }
    }
  }
}

/**
 * Names the specs' `@link`s bring in unrenamed (`@tag`, `Purpose`) → the
 * link's url: plain `import:` entries, and the directive named after the
 * spec (`@tag` of `.../tag/v0.3`, or of the link's `as:`), which a link
 * brings in unless its `import:` list names it.
 */
function plainImports(document: DocumentNode): Map<string, string> {
  const names = new Map<string, string>();
  for (const link of schemaLinks(document)) {
    if (!isApolloSpec(link)) continue;
    const url = stringArgument(link, 'url') ?? '';
    const entries = importEntries(link);
    const imported = new Set<string>();
    for (const entry of entries) {
      const name = entry.kind === Kind.STRING ? entry.value : entry.kind === Kind.OBJECT ? stringField(entry, 'name') : undefined;
      if (name === undefined) continue;
      imported.add(name);
      const as = entry.kind === Kind.OBJECT ? stringField(entry, 'as') : undefined;
      if (as === undefined || as === name) names.set(name, url);
    }
    const spec = /\/([A-Za-z_][\w-]*)\/v\d+\.\d+\/?$/.exec(url)?.[1];
    if (spec !== undefined && !imported.has(`@${spec}`)) names.set(`@${stringArgument(link, 'as') ?? spec}`, url);
  }
  return names;
}

/**
 * The entries of a `@link`'s `import:` argument. A single entry written
 * without brackets stands for a list of one, as GraphQL's input coercion
 * reads a list argument.
 */
function importEntries(link: ConstDirectiveNode): readonly ConstValueNode[] {
  const value = link.arguments?.find((a) => a.name.value === 'import')?.value;
  if (value === undefined || value.kind === Kind.NULL) return [];
  return value.kind === Kind.LIST ? value.values : [value];
}

function stringArgument(directive: ConstDirectiveNode, name: string): string | undefined {
  const value = directive.arguments?.find((a) => a.name.value === name)?.value;
  return value?.kind === Kind.STRING ? value.value : undefined;
}

/** The `@link`'s arguments with `{ name, as }` import entries replaced by the plain name. */
function withoutRenames(link: { readonly arguments?: readonly { readonly name: NameNode; readonly value: unknown }[] }) {
  return link.arguments?.map((argument) => {
    const value = argument.value as ConstValueNode;
    if (argument.name.value !== 'import') return argument;
    const plain = (entry: ConstValueNode): ConstValueNode => {
      if (entry.kind !== Kind.OBJECT) return entry;
      const name = stringField(entry, 'name');
      return name === undefined ? entry : { kind: Kind.STRING, value: name };
    };
    // A single entry without brackets is a list of one (see importEntries), and is written as one.
    return { ...argument, value: value.kind === Kind.LIST ? { ...value, values: value.values.map(plain) } : { kind: Kind.LIST, values: [plain(value)] } };
  }) as ConstDirectiveNode['arguments'];
}
