/**
 * The stage runner's cost for hooks that answer synchronously (an internal
 * plugin whose feature is idle for this request): no microtask turn beyond
 * the stage's own, while asynchronous hooks are still awaited in order.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/index.js';
import type { StageHook } from '../../../src/kernel/pipeline/hooks.js';
import { runStage, type RegisteredHook } from '../../../src/kernel/pipeline/stage-runner.js';
import { RequestState } from '../../../src/kernel/pipeline/state.js';
import type { OperationResponse } from '../../../src/kernel/pipeline/stages.js';

const log = createLogger({ level: 'silent' });
const scope = () => ({ state: new RequestState(), signal: new AbortController().signal });
const registered = (plugin: string, hook: StageHook<'respond'>): RegisteredHook<'respond'> => ({ plugin, hook, log });
const answer = (status: number): OperationResponse => ({ body: { data: {} }, status, headers: {} });

describe('runStage', () => {
  it('settles a stage whose hooks and stage answer synchronously before a microtask queued alongside it', async () => {
    const order: string[] = [];
    const hooks = [registered('idle', () => undefined), registered('observer', () => () => undefined)];
    const done = runStage('respond', hooks, answer(200), scope(), (input) => input).then((output) => void order.push(`stage:${output.status}`));
    queueMicrotask(() => void order.push('microtask'));
    await done;
    expect(order).toEqual(['stage:200', 'microtask']);
  });

  it('awaits asynchronous hooks, after-hooks and stages in order, with what each left for the next', async () => {
    const order: string[] = [];
    const hooks = [
      registered('slow', async (event) => {
        await new Promise((resolve) => setImmediate(resolve));
        order.push('slow:before');
        event.setInput(answer(201));
        return async (after) => {
          await new Promise((resolve) => setImmediate(resolve));
          order.push(`slow:after:${after.output.status}`);
          after.setOutput(answer(after.output.status + 1));
        };
      }),
      registered('quick', (event) => {
        order.push(`quick:before:${event.input.status}`);
        return (after) => void order.push(`quick:after:${after.output.status}`);
      }),
    ];
    const output = await runStage('respond', hooks, answer(200), scope(), async (input) => {
      await new Promise((resolve) => setImmediate(resolve));
      order.push(`stage:${input.status}`);
      return input;
    });
    expect(order).toEqual(['slow:before', 'quick:before:201', 'stage:201', 'slow:after:201', 'quick:after:202']);
    expect(output.status).toBe(202);
  });
});

describe('aroundStage', () => {
  it('runs the stage through the wrappers, first registered outermost, after every before-hook, with the input they left', async () => {
    const order: string[] = [];
    const hooks = [
      registered('outer', (event) => {
        event.aroundStage(async (input, perform) => {
          order.push(`outer:in:${input.status}`);
          const output = await perform(input);
          order.push(`outer:out:${output.status}`);
          return output;
        });
      }),
      registered('inner', (event) => {
        event.aroundStage(async (input, perform) => {
          order.push('inner:in');
          // Called twice, as a retry does: each call runs the stage.
          await perform(input);
          return perform(answer(input.status + 1));
        });
      }),
      registered('last', (event) => {
        order.push('last:before');
        event.setInput(answer(300));
        return () => void order.push('last:after');
      }),
    ];
    const output = await runStage('respond', hooks, answer(200), scope(), (input) => {
      order.push(`stage:${input.status}`);
      return input;
    });
    expect(output.status).toBe(301);
    expect(order).toEqual(['last:before', 'outer:in:300', 'inner:in', 'stage:300', 'stage:301', 'outer:out:301', 'last:after']);
  });

  it('skips the wrappers when a hook answers, and passes a wrapper failure on as the stage failure (not a PLUGIN_ERROR)', async () => {
    let wrapped = 0;
    const wrap = registered('wrap', (event) => {
      event.aroundStage(async (input, perform) => {
        wrapped++;
        return perform(input);
      });
    });
    const answered = await runStage('respond', [wrap, registered('cache', (event) => event.respondWith(answer(203)))], answer(200), scope(), () => {
      throw new Error('the stage must not run');
    });
    expect(answered.status).toBe(203);
    expect(wrapped).toBe(0);

    const failure = new Error('fail fast');
    const failing = registered('breaker', (event) =>
      event.aroundStage(async () => {
        throw failure;
      }),
    );
    await expect(runStage('respond', [failing], answer(200), scope(), (input) => input)).rejects.toBe(failure);
  });

  it('gives the stage the request signal, or the one a wrapper passes (a call shared beyond one request)', async () => {
    const own = scope();
    const shared = new AbortController().signal;
    const seen: AbortSignal[] = [];
    const stage = (input: OperationResponse, signal: AbortSignal) => {
      seen.push(signal);
      return input;
    };
    await runStage('respond', [registered('plain', (event) => event.aroundStage((input, perform) => perform(input)))], answer(200), own, stage);
    await runStage('respond', [registered('sharing', (event) => event.aroundStage((input, perform) => perform(input, shared)))], answer(200), own, stage);
    await runStage('respond', [], answer(200), own, stage);
    // A wrapper inside the one that gave another signal passes that one on (a retry inside a shared call).
    const sharing = registered('sharing', (event) => event.aroundStage((input, perform) => perform(input, shared)));
    const retrying = registered('retrying', (event) => event.aroundStage((input, perform) => perform(input)));
    await runStage('respond', [sharing, retrying], answer(200), own, stage);
    expect(seen).toEqual([own.signal, shared, own.signal, shared]);
  });
});
