/**
 * Names the generator cannot number. @wundergraph/protographic keeps field
 * and enum numbers in plain objects keyed by GraphQL name (its proto lock),
 * so a name that is also a property of every JavaScript object
 * (`constructor`, `toString`, ...) finds a function there instead of a
 * number, and the generated proto says `constructor = function Object() {...}`
 * (and `NaN` for the fields beside it), which no proto parser loads. wgc
 * writes the same file; here such a schema is refused, naming the field.
 */
import { Kind, parse, type DefinitionNode } from 'graphql';

const OBJECT_PROPERTIES = new Set(Object.getOwnPropertyNames(Object.prototype));

/** `field Item.constructor` (or a type, argument or enum value) whose name the generator cannot number, or `undefined`. */
export function unnumberableName(sdl: string): string | undefined {
  for (const definition of parse(sdl, { noLocation: true }).definitions) {
    const found = inDefinition(definition);
    if (found) return found;
  }
  return undefined;
}

function inDefinition(definition: DefinitionNode): string | undefined {
  if (!('name' in definition) || !definition.name) return undefined;
  const typeName = definition.name.value;
  if (definition.kind !== Kind.DIRECTIVE_DEFINITION && OBJECT_PROPERTIES.has(typeName)) return `type ${typeName}`;
  if ('fields' in definition) {
    for (const field of definition.fields ?? []) {
      if (OBJECT_PROPERTIES.has(field.name.value)) return `field ${typeName}.${field.name.value}`;
      for (const argument of ('arguments' in field ? field.arguments : undefined) ?? []) {
        if (OBJECT_PROPERTIES.has(argument.name.value)) return `argument ${typeName}.${field.name.value}(${argument.name.value})`;
      }
    }
  }
  if ('values' in definition) {
    for (const value of definition.values ?? []) {
      if (OBJECT_PROPERTIES.has(value.name.value)) return `enum value ${typeName}.${value.name.value}`;
    }
  }
  return undefined;
}
