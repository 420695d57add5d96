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
