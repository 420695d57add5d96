/**
 * The key paths a config section's schema accepts, written as the docs
 * write them: `jwt.header_name`, lists of mappings with `[]`
 * (`jwt.jwks[].url`). A key whose value is a mapping lists its own path and
 * its children's; maps (`tags`) and lists of scalars (`algorithms`) are one
 * key each.
 */
import type { z } from 'zod';
import { schemaDef, unwrapSchema } from '../../../src/kernel/config/schema-walk.js';

/** Every key path of the schema, parents before their children. */
export function sectionKeyPaths(schema: z.core.$ZodType): string[] {
  const paths: string[] = [];
  const visit = (fields: ReadonlyMap<string, z.core.$ZodType[]>, prefix: string): void => {
    for (const [key, alternatives] of fields) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const inner = alternatives.map(unwrap);
      const elements = inner.flatMap((node) => (schemaDef(node).type === 'array' ? [unwrap(elementOf(node))] : []));
      const listed = objectFields(elements);
      const objects = listed.size > 0 ? listed : objectFields(inner);
      const written = listed.size > 0 ? `${path}[]` : path;
      paths.push(written);
      if (objects.size > 0) visit(objects, written);
    }
  };
  visit(objectFields([unwrap(schema)]), '');
  return paths;
}

function elementOf(schema: z.core.$ZodType): z.core.$ZodType {
  return (schema as z.core.$ZodArray)._zod.def.element;
}

/** The schema inside defaults, optionals and pipes (the input side). */
function unwrap(schema: z.core.$ZodType): z.core.$ZodType {
  const inner = unwrapSchema(schema);
  const def = schemaDef(inner);
  return def.type === 'pipe' ? unwrap(def.in) : inner;
}

/** The fields of the objects among the schemas (union members merged); empty when none is an object. */
function objectFields(schemas: readonly z.core.$ZodType[]): Map<string, z.core.$ZodType[]> {
  const fields = new Map<string, z.core.$ZodType[]>();
  for (const schema of schemas) {
    const def = schemaDef(schema);
    if (def.type === 'union') {
      for (const [key, members] of objectFields(def.options.map(unwrap))) fields.set(key, [...(fields.get(key) ?? []), ...members]);
    } else if (def.type === 'object') {
      for (const [key, member] of Object.entries(def.shape)) fields.set(key, [...(fields.get(key) ?? []), member]);
    }
  }
  return fields;
}
