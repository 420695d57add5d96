import { GraphQLBoolean, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLString, isObjectType, type GraphQLAbstractType, type GraphQLLeafType, type GraphQLSchema } from 'graphql';
import type { NSelection } from '../plan/normalize.js';
import { firstFromSource, INHERITED_KEYS, oneOfSource } from '../execute/object-parts.js';
import type { ShapeField } from './shape-fields.js';

/** What the generated code needs from the general shaper. */
export interface ShapeFacts {
  readonly schema: GraphQLSchema;
  /** The fields to write for a selection set at a runtime type, in response order (memoized by the caller). */
  fields(selections: readonly NSelection[], runtimeType: string): readonly ShapeField[];
}

/** The generated source and the values its `H` parameter must carry. */
export interface ShapeSource {
  readonly body: string;
  /** Leaf serializers the code calls as `L[i](value)`, each returning BAIL when the value is not valid. */
  readonly leafTypes: readonly GraphQLLeafType[];
}

/** Functions above this count are not worth compiling (and bound what a hostile operation can make us generate). */
const MAX_FUNCTIONS = 2000;

/**
 * Writes the JavaScript of a compiled shaper: one function per selection
 * set and runtime type, `f<n>(o, x, X)`, shaping the object `o` whose other
 * fetched parts are `x` (undefined when one fetch gave it all); `X` maps an
 * object to its other parts. Every path the general shaper would report as
 * an error, or shape from several fetches' values, returns `BAIL` instead.
 * Names and keys enter the code only as JSON string literals.
 * Undefined when the operation has something this code does not handle.
 */
export function generateShapeSource(facts: ShapeFacts, rootType: string, selections: readonly NSelection[]): ShapeSource | undefined {
  const writer = new ShapeWriter(facts);
  const root = writer.objectFunction(selections, rootType);
  if (root === undefined) return undefined;
  const body = `"use strict";
const { BAIL, MULTI, runtimeTypeOf, L } = H;
${writer.functions.join('\n')}
return f${root};`;
  return { body, leafTypes: writer.leafTypes };
}

class ShapeWriter {
  readonly functions: string[] = [];
  readonly leafTypes: GraphQLLeafType[] = [];
  private readonly ids = new Map<readonly NSelection[], Map<string, number>>();
  private unsupported = false;
  private next = 0;

  constructor(private readonly facts: ShapeFacts) {}

  /** The id of the function for this selection set and type, written on first request. */
  objectFunction(selections: readonly NSelection[], typeName: string): number | undefined {
    let byType = this.ids.get(selections);
    if (!byType) {
      byType = new Map();
      this.ids.set(selections, byType);
    }
    const known = byType.get(typeName);
    if (known !== undefined) return known;
    if (this.unsupported || this.ids.size > MAX_FUNCTIONS) return undefined;
    const id = this.next++;
    byType.set(typeName, id);
    const code = this.objectCode(id, selections, typeName);
    if (code === undefined) {
      this.unsupported = true;
      return undefined;
    }
    this.functions.push(code);
    return id;
  }

  private objectCode(id: number, selections: readonly NSelection[], typeName: string): string | undefined {
    const lines: string[] = [];
    const entries: string[] = [];
    const fields = this.facts.fields(selections, typeName);
    for (let i = 0; i < fields.length; i++) {
      const field = fields[i]!;
      const key = JSON.stringify(field.responseKey);
      // `{"__proto__": v}` would set the prototype; a computed key defines an own property.
      entries.push(field.responseKey === '__proto__' ? `[${key}]: r${i}` : `${key}: r${i}`);
      if (field.name === '__typename') {
        lines.push(`const r${i} = ${JSON.stringify(typeName)};`);
        continue;
      }
      if (field.verbatim || INHERITED_KEYS.has(field.responseKey)) return undefined;
      // Reads over the object's parts, written inline for this key (see object-parts.ts).
      const read = field.leafType
        ? `v = o[${key}]; if ((v === undefined || v === null) && x !== undefined) ${firstFromSource('v', 'x', key)}`
        : `if (x === undefined) v = o[${key}]; else ${oneOfSource('v', 'o', 'x', key)} if (v === MULTI) return BAIL;`;
      const shaped = this.valueCode('v', field, 0, `r${i}`);
      if (shaped === undefined) return undefined;
      lines.push(`let r${i}; ${read}`, shaped);
    }
    return `function f${id}(o, x, X) {
  let v;
  ${lines.join('\n  ')}
  return { ${entries.join(', ')} };
}`;
  }

  /** Code that shapes the value in `source` at wrapper `depth` of the field's type into `out`, or returns BAIL. */
  private valueCode(source: string, field: ShapeField, depth: number, out: string): string | undefined {
    const nonNull = field.wrappers[depth] === 'N';
    const at = nonNull ? depth + 1 : depth;
    const onNull = nonNull ? 'return BAIL;' : `${out} = null;`;
    let inner: string | undefined;
    if (field.wrappers[at] === 'L') {
      const n = this.next++;
      const item = this.valueCode(`e${n}`, field, at + 1, `a${n}[i${n}]`);
      if (item === undefined) return undefined;
      inner = `if (!Array.isArray(${source})) return BAIL;
    const a${n} = [];
    for (let i${n} = 0; i${n} < ${source}.length; i${n}++) { const e${n} = ${source}[i${n}]; ${item} }
    ${out} = a${n};`;
    } else if (field.leafType) {
      inner = this.leafCode(source, field.leafType, out);
    } else {
      inner = this.compositeCode(source, field, out);
    }
    if (inner === undefined) return undefined;
    return `if (${source} === undefined || ${source} === null) { ${onNull} } else { ${inner} }`;
  }

  private leafCode(source: string, type: GraphQLLeafType, out: string): string {
    let index = this.leafTypes.indexOf(type);
    if (index < 0) index = this.leafTypes.push(type) - 1;
    const general = `{ ${out} = L[${index}](${source}); if (${out} === BAIL) return BAIL; }`;
    // The checks the general shaper's fast path makes; anything else goes through `serialize`, as there.
    const fast =
      type === GraphQLString || type === GraphQLID
        ? `typeof ${source} === 'string'`
        : type === GraphQLBoolean
          ? `typeof ${source} === 'boolean'`
          : type === GraphQLInt
            ? `typeof ${source} === 'number' && (${source} | 0) === ${source}`
            : type === GraphQLFloat
              ? `typeof ${source} === 'number' && Number.isFinite(${source})`
              : undefined;
    return fast ? `if (${fast}) ${out} = ${source}; else ${general}` : general;
  }

  private compositeCode(source: string, field: ShapeField, out: string): string | undefined {
    if (!field.selections || !field.namedType) return undefined;
    const objectCheck = `if (typeof ${source} !== 'object' || Array.isArray(${source})) return BAIL;`;
    if (!field.abstract) {
      const id = this.objectFunction(field.selections, field.namedType.name);
      if (id === undefined) return undefined;
      return `${objectCheck} ${out} = f${id}(${source}, X.get(${source}), X); if (${out} === BAIL) return BAIL;`;
    }
    const cases: string[] = [];
    for (const type of this.facts.schema.getPossibleTypes(field.namedType as GraphQLAbstractType)) {
      if (!isObjectType(type)) continue;
      const id = this.objectFunction(field.selections, type.name);
      if (id === undefined) return undefined;
      cases.push(`case ${JSON.stringify(type.name)}: ${out} = f${id}(${source}, p, X); break;`);
    }
    return `${objectCheck} { const p = X.get(${source}); switch (runtimeTypeOf(${source}, p)) { ${cases.join(' ')} default: return BAIL; } if (${out} === BAIL) return BAIL; }`;
  }
}
