/**
 * Work derived only from subgraph answers, reused between requests that got
 * the very same answer objects. With in-flight sharing (single flight), many
 * concurrent requests for one operation receive identical answers: their
 * entity representations, and their shaped data, are then identical too, so
 * the first request's work serves the others.
 *
 * Entries hang off the last answer of their trace, under a symbol key: they
 * live exactly as long as someone still holds that answer, so nothing
 * outlives the requests that share it. (A WeakMap keyed by answer would do
 * the same, but every request adds entries, and weak tables cost the
 * garbage collector far more than a plain property on an object that dies
 * young anyway.)
 */
import type { SubgraphResponse } from '../fetch/subgraph-types.js';

/**
 * The answers a request received, in the order they arrived. `undefined`
 * when its work cannot be reused: a fetch failed, answers were rewritten
 * (aliases restored, fetches merged), or the operation is a mutation.
 */
export type AnswerTrace = readonly SubgraphResponse[];

interface Entry {
  /** The plan or fetch node the value was computed for. */
  readonly owner: object;
  readonly trace: AnswerTrace;
  readonly value: unknown;
}

/** Where an answer keeps the work derived from it (symbol keys are invisible to JSON and to plugins' own keys). */
const DERIVED = Symbol('switchyard.derivedWork');

type Carrier = SubgraphResponse & { [DERIVED]?: Entry[] };

function sameTrace(a: AnswerTrace, b: AnswerTrace): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Values per (owner, trace): owner is the plan or the fetch node the value was computed for. */
export class SharedAnswers<Owner extends object, T> {
  get(owner: Owner, trace: AnswerTrace): T | undefined {
    const last = trace[trace.length - 1] as Carrier | undefined;
    const entries = last?.[DERIVED];
    if (!entries) return undefined;
    for (const entry of entries) if (entry.owner === owner && sameTrace(entry.trace, trace)) return entry.value as T;
    return undefined;
  }

  set(owner: Owner, trace: AnswerTrace, value: T): void {
    const last = trace[trace.length - 1] as Carrier | undefined;
    // A plugin may hand out frozen answers: their work is simply not shared.
    if (!last || !Object.isExtensible(last)) return;
    const entry: Entry = { owner, trace: trace.slice(), value };
    const entries = last[DERIVED];
    if (entries) {
      // One entry per owner, the latest: a long-lived answer (a cache hit) must not collect one per request.
      const index = entries.findIndex((known) => known.owner === owner);
      if (index >= 0) entries[index] = entry;
      else entries.push(entry);
    } else Object.defineProperty(last, DERIVED, { value: [entry], writable: true, enumerable: false, configurable: true });
  }
}
