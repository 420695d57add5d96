/**
 * Walking config schemas (zod 4's definitions) for what they accept: the
 * environment mapping, the Cosmo config migration and the docs check all
 * look through the same wrappers to the schema of the value.
 */
import type { z } from 'zod';

/** Wrappers that change whether a value must be given, not its shape. */
const WRAPPERS: ReadonlySet<string> = new Set(['optional', 'nonoptional', 'default', 'prefault', 'nullable', 'readonly', 'catch']);

/** A schema's definition, typed by its `type`. */
export function schemaDef(schema: z.core.$ZodType): z.core.$ZodTypes['_zod']['def'] {
  return (schema as z.core.$ZodTypes)._zod.def;
}

/** The schema inside optionals, defaults, nullables and the like; pipes and unions are left to the caller. */
export function unwrapSchema(schema: z.core.$ZodType): z.core.$ZodType {
  let current = schema;
  for (let def = schemaDef(current); WRAPPERS.has(def.type); def = schemaDef(current)) {
    current = (def as z.core.$ZodOptionalDef).innerType;
  }
  return current;
}
