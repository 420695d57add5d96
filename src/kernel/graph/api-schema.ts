/**
 * The API schema's document: the supergraph without its federation machinery
 * and without what `@inaccessible` hides. The removal itself is
 * `transformSupergraphToPublicSchema` of @theguild/federation-composition;
 * it deletes a hidden type's definition but not every reference to it: a
 * union keeps `B` in `union U = A | B` (and the schema then fails to build
 * with `Unknown type "B"`). Here those references go too, as Apollo's API
 * schema has them gone (`U`'s possibleTypes are `[A]`): hidden members leave
 * unions, hidden interfaces leave `implements` lists. An object of a hidden
 * type a subgraph still answers is then a runtime type outside the API
 * schema, which the response shaper nulls (shape-response.ts).
 *
 * What cannot be mended is refused in the words of Apollo's API schema
 * check (the composer `@apollo/composition` refuses the same): a union all
 * of whose members are hidden, and a field, argument or input field still
 * in the API schema whose type is hidden.
 */
import { Kind, type DefinitionNode, type DocumentNode, type NamedTypeNode, type TypeNode } from 'graphql';
import { transformSupergraphToPublicSchema } from '@theguild/federation-composition';
import { RouterError } from '../errors.js';

/**
 * The API schema's document for a supergraph document (import renames
 * already undone); `inaccessible` is the name of its `@inaccessible`.
 */
export function apiSchemaDocument(supergraph: DocumentNode, inaccessible = 'inaccessible'): DocumentNode {
  const transformed = transformSupergraphToPublicSchema(supergraph);
  const kept = new Set(transformed.definitions.flatMap(typeNameOf));
  // The hidden types the transform removed (it also removes the specs' own: join__Graph, link__Import...).
  const hidden = new Set(
    supergraph.definitions.filter((definition) => isHidden(definition, inaccessible)).flatMap((definition) => typeNameOf(definition).filter((name) => !kept.has(name))),
  );
  if (hidden.size === 0) return transformed;
  const definitions = transformed.definitions.map((definition) => withoutRemovedMembers(definition, hidden));
  for (const definition of definitions) refuseReferences(definition, hidden);
  return { ...transformed, definitions };
}

function isHidden(definition: DefinitionNode, inaccessible: string): boolean {
  return 'directives' in definition && (definition.directives ?? []).some((directive) => directive.name.value === inaccessible);
}

function typeNameOf(definition: DefinitionNode): string[] {
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.UNION_TYPE_DEFINITION:
    case Kind.ENUM_TYPE_DEFINITION:
    case Kind.INPUT_OBJECT_TYPE_DEFINITION:
    case Kind.SCALAR_TYPE_DEFINITION:
      return [definition.name.value];
    default:
      return [];
  }
}

/** The definition without hidden union members and hidden implemented interfaces. */
function withoutRemovedMembers(definition: DefinitionNode, removed: ReadonlySet<string>): DefinitionNode {
  const present = (node: NamedTypeNode) => !removed.has(node.name.value);
  switch (definition.kind) {
    case Kind.UNION_TYPE_DEFINITION:
    case Kind.UNION_TYPE_EXTENSION: {
      const members = definition.types ?? [];
      const types = members.filter(present);
      if (types.length === members.length) return definition;
      if (types.length === 0) throw invalid(`Type "${definition.name.value}" is in the API schema but all of its members are @inaccessible.`);
      return { ...definition, types };
    }
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION:
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION: {
      const implemented = definition.interfaces ?? [];
      const interfaces = implemented.filter(present);
      return interfaces.length === implemented.length ? definition : { ...definition, interfaces };
    }
    default:
      return definition;
  }
}

/** Throws for a field, argument or input field of the API schema whose type is hidden. */
function refuseReferences(definition: DefinitionNode, removed: ReadonlySet<string>): void {
  const check = (type: TypeNode, coordinate: string) => {
    const name = namedTypeOf(type);
    if (removed.has(name)) throw invalid(`Type "${name}" is @inaccessible but is referenced by "${coordinate}", which is in the API schema.`);
  };
  switch (definition.kind) {
    case Kind.OBJECT_TYPE_DEFINITION:
    case Kind.OBJECT_TYPE_EXTENSION:
    case Kind.INTERFACE_TYPE_DEFINITION:
    case Kind.INTERFACE_TYPE_EXTENSION:
      for (const field of definition.fields ?? []) {
        const coordinate = `${definition.name.value}.${field.name.value}`;
        check(field.type, coordinate);
        for (const argument of field.arguments ?? []) check(argument.type, `${coordinate}(${argument.name.value}:)`);
      }
      return;
    case Kind.INPUT_OBJECT_TYPE_DEFINITION:
    case Kind.INPUT_OBJECT_TYPE_EXTENSION:
      for (const field of definition.fields ?? []) check(field.type, `${definition.name.value}.${field.name.value}`);
      return;
    case Kind.DIRECTIVE_DEFINITION:
      for (const argument of definition.arguments ?? []) check(argument.type, `@${definition.name.value}(${argument.name.value}:)`);
      return;
    default:
  }
}

function namedTypeOf(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeOf(type.type);
}

function invalid(message: string): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', `invalid supergraph: ${message}`);
}
