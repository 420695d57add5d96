import type { Logger } from '../logger.js';
import type { RequestState } from './state.js';
import type { StageInput, StageName, StageOutput } from './stages.js';

export type MaybePromise<T> = T | Promise<T>;

/** What a before-hook sees. */
export interface StageEvent<S extends StageName> {
  readonly stage: S;
  /** The stage's input as it stands (earlier hooks may have changed it). */
  readonly input: StageInput<S>;
  /** Changes what later hooks and the stage itself see. */
  setInput(next: StageInput<S>): void;
  /** Answers for the stage: later before-hooks and the stage are skipped; after-hooks still run. */
  respondWith(output: StageOutput<S>): void;
  /**
   * Calls `listener` once this stage run is over, after every after-hook:
   * with the final output, or with the error the stage, a hook or an
   * after-hook failed with (the error still propagates). For observers
   * (tracing, access logs) that must see failures and the last word; the
   * listener runs synchronously, changes nothing, and a throw in it is logged
   * and ignored.
   */
  whenSettled(listener: (outcome: StageOutcome<S>) => void): void;
  /**
   * Runs the stage itself through `wrapper`, which calls `perform` once
   * (timing it), more than once (retries), or not at all (failing fast). Only
   * when the stage runs: a hook that answers with `respondWith` skips the
   * wrappers too. Wrappers nest in registration order (the first plugin's is
   * outermost) and run after every before-hook; a wrapper's throw is the
   * stage's failure (not a `PLUGIN_ERROR`). Default: none.
   */
  aroundStage(wrapper: StageWrapper<S>): void;
  /** Per-request slots shared between plugins. */
  readonly state: RequestState;
  /** Aborted when the client goes away or the router stops. */
  readonly signal: AbortSignal;
  /** Logger carrying the plugin's name. */
  readonly log: Logger;
}

/** What an after-hook sees. */
export interface AfterStageEvent<S extends StageName> {
  readonly stage: S;
  /** The input the stage ran with. */
  readonly input: StageInput<S>;
  /** The stage's output as it stands (earlier after-hooks may have changed it). */
  readonly output: StageOutput<S>;
  setOutput(next: StageOutput<S>): void;
  /** Name of the plugin that answered with `respondWith`, if one did. */
  readonly shortCircuitedBy: string | undefined;
  readonly state: RequestState;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** How a stage run ended, as `StageEvent.whenSettled` listeners see it. */
export type StageOutcome<S extends StageName> =
  | {
      readonly ok: true;
      /** The output after every after-hook. */
      readonly output: StageOutput<S>;
      /** Name of the plugin that answered with `respondWith`, if one did. */
      readonly shortCircuitedBy: string | undefined;
    }
  | {
      readonly ok: false;
      /** What the stage or a hook threw (a hook's throw is already a `PLUGIN_ERROR` naming it). */
      readonly error: unknown;
    };

/**
 * Runs the stage for `aroundStage`: calls `perform` (the next wrapper, the
 * innermost the stage itself) and returns its output, or throws its failure.
 * `signal` is the request's; `perform` may be given another (a call several
 * requests share follows the router's, not one client's).
 */
export type StageWrapper<S extends StageName> = (input: StageInput<S>, perform: StagePerform<S>, signal: AbortSignal) => Promise<StageOutput<S>>;

/** The stage as a wrapper calls it; without `signal`, the signal the wrapper was given. */
export type StagePerform<S extends StageName> = (input: StageInput<S>, signal?: AbortSignal) => Promise<StageOutput<S>>;

export type AfterStageHook<S extends StageName> = (event: AfterStageEvent<S>) => MaybePromise<void>;

/** A before-hook; it may return its after-hook. */
export type StageHook<S extends StageName> = (event: StageEvent<S>) => MaybePromise<void | AfterStageHook<S>>;

/** The hooks a plugin may register, one per stage (`on<Stage>`). */
export interface Hooks {
  /** The whole operation, once per request (HTTP or `router.execute`). */
  onRequest?: StageHook<'request'>;
  onParse?: StageHook<'parse'>;
  onValidate?: StageHook<'validate'>;
  onPlan?: StageHook<'plan'>;
  /** Once per subgraph call. */
  onFetch?: StageHook<'fetch'>;
  onMerge?: StageHook<'merge'>;
  onRespond?: StageHook<'respond'>;
}

/** Hook property name for each stage. */
export const HOOK_NAMES = {
  request: 'onRequest',
  parse: 'onParse',
  validate: 'onValidate',
  plan: 'onPlan',
  fetch: 'onFetch',
  merge: 'onMerge',
  respond: 'onRespond',
} as const satisfies { [S in StageName]: keyof Hooks };
