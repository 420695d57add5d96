/**
 * Object plans compiled to JavaScript. The general reader (from-proto.ts)
 * stores every value as `object[step.key]`: under load, with the router's
 * many other object shapes about, those keyed stores and loads miss V8's
 * caches and cost more than reading the bytes. A compiled reader builds the
 * object as one literal with every key and writes each field by its name,
 * one `case` per field number, so each store has a cache of its own.
 *
 * Strings, bools, int32, int64, floats, doubles, enums and repeated strings
 * are read inline; every other field (nested messages, wrappers, lists,
 * oneofs, other numbers, packed runs) goes back to the general reader for
 * that field, with the object's response path, which field resolvers below
 * it need. A plan is compiled when a second fetch uses it (the items of one
 * list share a plan, and an operation run once is not worth compiling), and
 * only plans kept across fetches (no variables in their selection) with no
 * field resolver of their own. The general reader stays the reference: with
 * `decoderChecks.enabled` (the test suite) every plan compiles at once and
 * each object is read both ways and compared. Where the process forbids
 * code generation (the SDK's `compileGenerated`), the general reader reads
 * every object.
 */
import { codeGenerationAllowed, compileGenerated } from '../../src/index.js';
import type { ObjectPlan, ValueStep } from './object-plans.js';
import { absentValue, enumValue } from './value-codecs.js';
import { LENGTH_DELIMITED, VARINT, WireFormatError, expectWireType, type WireReader } from './wire-reader.js';

/** What compiled code calls back for fields it does not read inline. */
export interface GeneralReader<Path> {
  /** Reads one occurrence of `step`'s field into `object[step.key]`; `path` is the object's. */
  fillStep(reader: WireReader, wireType: number, step: ValueStep, object: Record<string, unknown>, path: Path): void;
}

/** Reads the message from the reader's position to `end` into a new object at `path`. */
export type CompiledObject = <Path>(reader: WireReader, end: number, general: GeneralReader<Path>, path: Path) => Record<string, unknown>;

/** Test support: compile every plan on first use and check each compiled read against the general one. */
export const decoderChecks = { enabled: false };

/** Plans with more steps than this are read by the general code (and bound what an operation makes us generate). */
const MAX_STEPS = 500;

/** Per plan: its compiled reader, `'unsupported'`, or the number of the first fetch that used it. */
const states = new WeakMap<ObjectPlan, CompiledObject | 'unsupported' | number>();

/**
 * The compiled reader of `plan` for a read in fetch number `fetch` (any
 * number that tells one fetch from another); undefined until a second
 * fetch uses the plan, and for plans it does not cover.
 */
export function compiledObject(plan: ObjectPlan, fetch: number): CompiledObject | undefined {
  const state = states.get(plan);
  if (typeof state === 'function') return state;
  if (state === 'unsupported' || !plan.shared || !codeGenerationAllowed()) return undefined;
  if (!decoderChecks.enabled && (state === undefined || state === fetch)) {
    if (state === undefined) states.set(plan, fetch);
    return undefined;
  }
  const compiled = compile(plan);
  states.set(plan, compiled ?? 'unsupported');
  return compiled;
}

/** Helpers the generated code receives as `H`. */
interface Helpers {
  /** The value steps the code reads, in the order it refers to them (`S[i]`). */
  readonly steps: readonly ValueStep[];
  readonly expectWireType: typeof expectWireType;
  readonly enumValue: typeof enumValue;
  readonly WireFormatError: typeof WireFormatError;
}

function compile(plan: ObjectPlan): CompiledObject | undefined {
  if (plan.hasResolvers || plan.steps.length > MAX_STEPS) return undefined;
  const helpers: Helpers = { steps: [], expectWireType, enumValue, WireFormatError };
  const steps = helpers.steps as ValueStep[];
  const initial: string[] = [];
  /** The value steps by field number, in selection order (several when a field is selected under several keys). */
  const byNumber = new Map<number, ValueStep[]>();
  for (const step of plan.steps) {
    // `{"__proto__": v}` would set the prototype; a computed key defines an own property, as JSON.parse does.
    const key = step.key === '__proto__' ? '["__proto__"]' : JSON.stringify(step.key);
    if (step.kind === 'typename') initial.push(`${key}: ${JSON.stringify(step.typeName)}`);
    else if (step.kind !== 'value') initial.push(`${key}: null`);
    else if (step.codec.kind === 'invalid' && !step.codec.absentIsNull) return undefined;
    else {
      initial.push(`${key}: ${step.codec.kind === 'repeated' ? '[]' : JSON.stringify(absentValue(step.codec))}`);
      const same = byNumber.get(step.number);
      if (same) same.push(step);
      else byNumber.set(step.number, [step]);
    }
  }
  const cases: string[] = [];
  for (const [number, numbered] of byNumber) {
    const reads = numbered.map((step) => {
      steps.push(step);
      return readStep(step, steps.length - 1);
    });
    // A field selected under several keys is read once for each, from the same bytes.
    const body = reads.length === 1 ? reads[0]! : `const at = r.pos; ${reads.join(' r.pos = at; ')}`;
    cases.push(`case ${number}: { ${body} break; }`);
  }
  const source = `"use strict";
const { steps: S, expectWireType, enumValue, WireFormatError } = H;
return function readObject(r, end, G, path) {
  const o = { ${initial.join(', ')} };
  while (r.pos < end) {
    const tag = r.uint32();
    switch (tag >>> 3) {
      ${cases.join('\n      ')}
      default: r.skip(tag & 7);
    }
  }
  if (r.pos !== end) throw new WireFormatError('a field runs past the end of its message');
  return o;
};`;
  // The source is this module's own text: keys and names enter it only as JSON string literals.
  return compileGenerated<Helpers, CompiledObject>(source, helpers);
}

/** The statements reading one occurrence of `step`'s field into `o`; the code finds the step itself as `S[index]`. */
function readStep(step: ValueStep, index: number): string {
  const key = JSON.stringify(step.key);
  const codec = step.codec;
  const expect = (wireType: number) => `expectWireType(tag & 7, ${wireType});`;
  if (codec.kind === 'scalar') {
    const read = inlineScalar(codec.type);
    if (read) return `${expect(codec.wireType)} o[${key}] = ${read};`;
  } else if (codec.kind === 'enum') {
    return `${expect(VARINT)} o[${key}] = enumValue(S[${index}].codec, r.int32());`;
  } else if (codec.kind === 'repeated' && codec.item.kind === 'scalar' && codec.item.type === 'string') {
    return `${expect(LENGTH_DELIMITED)} o[${key}].push(r.string());`;
  }
  return `G.fillStep(r, tag & 7, S[${index}], o, path);`;
}

/** How the generated code reads the common scalars; others go through the general reader. */
function inlineScalar(type: string): string | undefined {
  switch (type) {
    case 'string':
      return 'r.string()';
    case 'bool':
      return 'r.bool()';
    case 'int32':
      return 'r.int32()';
    case 'int64':
      return 'r.varint64(true)';
    case 'double':
      return 'r.double()';
    case 'float':
      return 'r.float()';
    default:
      return undefined;
  }
}
