/**
 * Work derived only from subgraph answers, reused between requests that got
 * the very same answer objects. With in-flight sharing (single flight), many
 * concurrent requests for one operation receive identical answers: their
 * entity representations, and their shaped data, are then identical too, so
 * the first request's work serves the others.
 *
 * Entries hang off the last answer of their trace in a WeakMap: they live
 * exactly as long as someone still holds that answer, so nothing outlives
 * the requests that share it.
 */
import type { SubgraphResponse } from '../fetch/subgraph-types.js';

/**
 * The answers a request received, in the order they arrived. `undefined`
 * when its work cannot be reused: a fetch failed, answers were rewritten
 * (aliases restored, fetches merged), or the operation is a mutation.
 */
export type AnswerTrace = readonly SubgraphResponse[];

interface Entry<T> {
  readonly trace: AnswerTrace;
  readonly value: T;
}

function sameTrace(a: AnswerTrace, b: AnswerTrace): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Values per (owner, trace): owner is the plan or the fetch node the value was computed for. */
export class SharedAnswers<Owner extends object, T> {
  private readonly byLastAnswer = new WeakMap<SubgraphResponse, WeakMap<Owner, Entry<T>>>();

  get(owner: Owner, trace: AnswerTrace): T | undefined {
    const last = trace[trace.length - 1];
    if (!last) return undefined;
    const entry = this.byLastAnswer.get(last)?.get(owner);
    return entry && sameTrace(entry.trace, trace) ? entry.value : undefined;
  }

  set(owner: Owner, trace: AnswerTrace, value: T): void {
    const last = trace[trace.length - 1];
    if (!last) return;
    let owners = this.byLastAnswer.get(last);
    if (!owners) {
      owners = new WeakMap();
      this.byLastAnswer.set(last, owners);
    }
    owners.set(owner, { trace: trace.slice(), value });
  }
}
