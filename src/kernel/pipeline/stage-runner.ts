import { pluginError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AfterStageEvent, AfterStageHook, StageEvent, StageHook, StageOutcome, StagePerform, StageWrapper } from './hooks.js';
import type { RequestState } from './state.js';
import type { StageInput, StageName, StageOutput } from './stages.js';

/** A hook with the plugin that registered it. */
export interface RegisteredHook<S extends StageName> {
  readonly plugin: string;
  readonly hook: StageHook<S>;
  /** The plugin's logger. */
  readonly log: Logger;
}

/** What every stage run shares with its hooks. */
export interface StageScope {
  readonly state: RequestState;
  readonly signal: AbortSignal;
}

/**
 * The one stage runner: before-hooks in registration order (each may change
 * the input or answer with `respondWith`), then the stage unless a hook
 * answered, then the after-hooks in registration order. With no hooks the
 * stage is called directly. A throwing hook becomes a `PLUGIN_ERROR` naming it.
 * Wrappers registered with `aroundStage` run the stage in its place, the
 * first registered outermost. Last, the `whenSettled` listeners hooks
 * registered learn the final output, or the error the stage (or a hook)
 * failed with. A hook, after-hook or stage that returns synchronously is
 * not awaited: idle hooks cost no microtask turn.
 */
export async function runStage<S extends StageName>(
  stage: S,
  hooks: readonly RegisteredHook<S>[],
  input: StageInput<S>,
  scope: StageScope,
  /** The stage itself; `signal` is the scope's unless a wrapper passed another. */
  perform: (input: StageInput<S>, signal: AbortSignal) => StageOutput<S> | Promise<StageOutput<S>>,
): Promise<StageOutput<S>> {
  if (hooks.length === 0) return perform(input, scope.signal);
  const run: StageRun<S> = { current: input, answer: undefined, output: undefined, settled: undefined, wrappers: undefined };
  try {
    let afterHooks: Array<{ registered: RegisteredHook<S>; after: AfterStageHook<S> }> | undefined;
    for (const registered of hooks) {
      let after: void | AfterStageHook<S>;
      try {
        const returned = registered.hook(new BeforeEvent(stage, run, registered, scope));
        // A hook that answers synchronously (most do when their feature is idle) costs no microtask turn.
        after = isPromise(returned) ? await returned : returned;
      } catch (error) {
        throw pluginError(registered.plugin, error);
      }
      if (typeof after === 'function') (afterHooks ??= []).push({ registered, after });
      if (run.answer) break;
    }
    const answer = run.answer;
    if (answer) {
      run.output = answer.output;
    } else if (run.wrappers) {
      run.output = await wrapped(run.wrappers, 0, perform, scope.signal)(run.current);
    } else {
      const performed = perform(run.current, scope.signal);
      run.output = isPromise(performed) ? await performed : performed;
    }
    if (afterHooks) {
      const ranWith = run.current;
      for (const { registered, after } of afterHooks) {
        try {
          const returned = after(new AfterEvent(stage, ranWith, run, answer?.by, registered, scope));
          if (isPromise(returned)) await returned;
        } catch (error) {
          throw pluginError(registered.plugin, error);
        }
      }
    }
    if (run.settled) settle(run.settled, { ok: true, output: run.output, shortCircuitedBy: answer?.by });
    return run.output;
  } catch (error) {
    if (run.settled) settle(run.settled, { ok: false, error });
    throw error;
  }
}

/**
 * The stage seen through `wrappers[from..]`: the outermost calls the next, the
 * innermost the stage. Each level passes on the signal it was given unless
 * its wrapper gives another (a shared call's wrappers and stage follow it).
 */
function wrapped<S extends StageName>(
  wrappers: readonly StageWrapper<S>[],
  from: number,
  perform: (input: StageInput<S>, signal: AbortSignal) => StageOutput<S> | Promise<StageOutput<S>>,
  signal: AbortSignal,
): StagePerform<S> {
  return (input, given = signal) => {
    if (from === wrappers.length) {
      const performed = perform(input, given);
      // The stage's own promise, not a new one: requests sharing a call get the very same answer.
      return isPromise(performed) ? performed : Promise.resolve(performed);
    }
    return wrappers[from]!(input, wrapped(wrappers, from + 1, perform, given), given);
  };
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

/** A `whenSettled` listener with the plugin that registered it. */
interface SettledListener<S extends StageName> {
  readonly listener: (outcome: StageOutcome<S>) => void;
  readonly registered: RegisteredHook<S>;
}

/** Tells each listener how the stage ended; a listener's throw is logged and goes no further. */
function settle<S extends StageName>(listeners: readonly SettledListener<S>[], outcome: StageOutcome<S>): void {
  for (const { listener, registered } of listeners) {
    try {
      listener(outcome);
    } catch (error) {
      registered.log.error({ err: error, plugin: registered.plugin }, `[${registered.plugin}] whenSettled listener failed`);
    }
  }
}

/** What one stage run's events read and change. */
interface StageRun<S extends StageName> {
  current: StageInput<S>;
  answer: { output: StageOutput<S>; by: string } | undefined;
  output: StageOutput<S> | undefined;
  /** `whenSettled` listeners, in the order they were registered; none on most runs. */
  settled: SettledListener<S>[] | undefined;
  /** `aroundStage` wrappers, in the order they were registered; none on most runs. */
  wrappers: StageWrapper<S>[] | undefined;
}

/*
 * Events are small classes rather than object literals with closures: a
 * stage with hooks runs for every subgraph call, and a literal's getter and
 * methods were fresh closures each time. Their methods are meant to be
 * called on the event (`event.respondWith(...)`), as the docs show.
 */

class BeforeEvent<S extends StageName> implements StageEvent<S> {
  readonly state: RequestState;
  readonly signal: AbortSignal;
  readonly log: Logger;

  constructor(
    readonly stage: S,
    private readonly run: StageRun<S>,
    private readonly registered: RegisteredHook<S>,
    scope: StageScope,
  ) {
    this.state = scope.state;
    this.signal = scope.signal;
    this.log = registered.log;
  }

  get input(): StageInput<S> {
    return this.run.current;
  }

  setInput(next: StageInput<S>): void {
    this.run.current = next;
  }

  respondWith(output: StageOutput<S>): void {
    this.run.answer = { output, by: this.registered.plugin };
  }

  whenSettled(listener: (outcome: StageOutcome<S>) => void): void {
    (this.run.settled ??= []).push({ listener, registered: this.registered });
  }

  aroundStage(wrapper: StageWrapper<S>): void {
    (this.run.wrappers ??= []).push(wrapper);
  }
}

class AfterEvent<S extends StageName> implements AfterStageEvent<S> {
  readonly state: RequestState;
  readonly signal: AbortSignal;
  readonly log: Logger;

  constructor(
    readonly stage: S,
    readonly input: StageInput<S>,
    private readonly run: StageRun<S>,
    readonly shortCircuitedBy: string | undefined,
    registered: RegisteredHook<S>,
    scope: StageScope,
  ) {
    this.state = scope.state;
    this.signal = scope.signal;
    this.log = registered.log;
  }

  get output(): StageOutput<S> {
    return this.run.output as StageOutput<S>;
  }

  setOutput(next: StageOutput<S>): void {
    this.run.output = next;
  }
}
