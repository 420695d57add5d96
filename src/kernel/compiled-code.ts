/**
 * Plan-specific JavaScript: the kernel compiles an operation's response
 * shaper (merge/compiled-shape.ts) and each entity fetch's collector
 * (execute/compiled-collect.ts) once the operation has been seen twice.
 * Generated code handles the common case only and hands everything else
 * back to the general code, which stays the reference for every answer.
 * Where the process forbids code generation (code-generation.ts), nothing
 * is compiled and the general code answers every time.
 */
import { codeGenerationAllowed } from './code-generation.js';

/**
 * Compiled code by owner (a plan's selection set, a fetch node), living as
 * long as the owner. An owner is compiled on its second use: operations run
 * once are not worth it (checks, below, compile at once). `compile` answers
 * undefined for owners it does not handle; they are not tried again.
 */
export class CompiledCache<Owner extends object, Input, Code extends object> {
  private readonly states = new WeakMap<Owner, Code | 'seen' | 'unsupported'>();

  constructor(private readonly compile: (owner: Owner, input: Input) => Code | undefined) {}

  get(owner: Owner, input: Input): Code | undefined {
    if (!codeGenerationAllowed()) return undefined;
    const state = this.states.get(owner);
    if (typeof state === 'object' || typeof state === 'function') return state;
    if (state === 'unsupported') return undefined;
    if (state === undefined && !compiledChecks.enabled) {
      this.states.set(owner, 'seen');
      return undefined;
    }
    const code = this.compile(owner, input);
    this.states.set(owner, code ?? 'unsupported');
    return code;
  }
}

/**
 * Test support: with `enabled`, every operation is compiled on first use
 * and every compiled result is compared with the general code's, throwing
 * on a difference. The test suite turns it on (test/support/setup.ts), so
 * every in-process test also checks the compiled code.
 */
export const compiledChecks = { enabled: false };

/** Throws when a compiled result and the general one differ (checks only). */
export function assertSameResult(what: string, compiled: unknown, general: unknown): void {
  const a = JSON.stringify(compiled);
  const b = JSON.stringify(general);
  if (a !== b) throw new Error(`compiled ${what} differs from the general one:\ncompiled: ${a.slice(0, 2000)}\ngeneral:  ${b.slice(0, 2000)}`);
}
