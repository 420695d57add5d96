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
