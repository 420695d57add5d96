import { pluginError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AfterStageEvent, AfterStageHook, StageEvent, StageHook } from './hooks.js';
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
 */
export async function runStage<S extends StageName>(
  stage: S,
  hooks: readonly RegisteredHook<S>[],
  input: StageInput<S>,
  scope: StageScope,
  perform: (input: StageInput<S>) => StageOutput<S> | Promise<StageOutput<S>>,
): Promise<StageOutput<S>> {
  if (hooks.length === 0) return perform(input);
  let current = input;
  let answer: { output: StageOutput<S>; by: string } | undefined;
  let afterHooks: Array<{ registered: RegisteredHook<S>; after: AfterStageHook<S> }> | undefined;
  for (const registered of hooks) {
    const event: StageEvent<S> = {
      stage,
      get input() {
        return current;
      },
      setInput(next) {
        current = next;
      },
      respondWith(output) {
        answer = { output, by: registered.plugin };
      },
      state: scope.state,
      signal: scope.signal,
      log: registered.log,
    };
    let after: void | AfterStageHook<S>;
    try {
      after = await registered.hook(event);
    } catch (error) {
      throw pluginError(registered.plugin, error);
    }
    if (typeof after === 'function') (afterHooks ??= []).push({ registered, after });
    if (answer) break;
  }
  let output = answer ? answer.output : await perform(current);
  if (!afterHooks) return output;
  const shortCircuitedBy = answer?.by;
  const ranWith = current;
  for (const { registered, after } of afterHooks) {
    const event: AfterStageEvent<S> = {
      stage,
      input: ranWith,
      get output() {
        return output;
      },
      setOutput(next) {
        output = next;
      },
      shortCircuitedBy,
      state: scope.state,
      signal: scope.signal,
      log: registered.log,
    };
    try {
      await after(event);
    } catch (error) {
      throw pluginError(registered.plugin, error);
    }
  }
  return output;
}
