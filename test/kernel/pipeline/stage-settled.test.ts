/** `StageEvent.whenSettled`: observers learn how each stage run ended, after every after-hook, also when it failed. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouterError, toErrorResponse, type StageOutcome, type SwitchyardPlugin } from '../../../src/index.js';
import { runStage } from '../../../src/kernel/pipeline/stage-runner.js';
import { RequestState } from '../../../src/kernel/pipeline/state.js';
import { createLogger } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
});
afterAll(async () => {
  await library?.close();
});

const log = createLogger({ level: 'silent' });
const scope = () => ({ state: new RequestState(), signal: new AbortController().signal });

describe('whenSettled', () => {
  it('runs after every after-hook with the final output, and with the error when the stage throws', async () => {
    const events: string[] = [];
    const outcomes: Array<StageOutcome<'parse'>> = [];
    const hooks = [
      {
        plugin: 'observer',
        log,
        hook: (event: { whenSettled(listener: (outcome: StageOutcome<'parse'>) => void): void }) => {
          event.whenSettled((outcome) => {
            events.push('observer:settled');
            outcomes.push(outcome);
          });
          return () => void events.push('observer:after');
        },
      },
      { plugin: 'other', log, hook: () => () => void events.push('other:after') },
    ];
    const document = { kind: 'Document', definitions: [] } as never;
    await runStage('parse', hooks as never, { query: '{ a }' }, scope(), () => document);
    expect(events).toEqual(['observer:after', 'other:after', 'observer:settled']);
    expect(outcomes[0]).toEqual({ ok: true, output: document, shortCircuitedBy: undefined });

    events.length = 0;
    const failure = new Error('stage failed');
    await expect(
      runStage('parse', hooks as never, { query: '{ a }' }, scope(), () => {
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(events).toEqual(['observer:settled']);
    expect(outcomes[1]).toEqual({ ok: false, error: failure });
  });

  it('reports a later hook that throws as a PLUGIN_ERROR naming it, and a listener that throws changes nothing', async () => {
    const outcomes: Array<StageOutcome<'parse'>> = [];
    const lines: string[] = [];
    const capture = createLogger({ level: 'error', destination: { write: (line: string) => void lines.push(line) } });
    const hooks = [
      {
        plugin: 'observer',
        log: capture,
        hook: (event: { whenSettled(listener: (outcome: StageOutcome<'parse'>) => void): void }) => {
          event.whenSettled((outcome) => void outcomes.push(outcome));
          event.whenSettled(() => {
            throw new Error('listener bug');
          });
        },
      },
      {
        plugin: 'breaking',
        log,
        hook: () => {
          throw new Error('hook bug');
        },
      },
    ];
    await expect(runStage('parse', hooks as never, { query: '{ a }' }, scope(), () => ({}) as never)).rejects.toMatchObject({ code: 'PLUGIN_ERROR', plugin: 'breaking' });
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]).toMatchObject({ ok: false, error: { code: 'PLUGIN_ERROR', plugin: 'breaking' } });
    expect(lines.join('')).toMatch(/whenSettled listener failed/);
  });

  it('gives the request stage the response after every plugin had its say, and the fetch stage its failures', async () => {
    const statuses: number[] = [];
    const fetchOutcomes: Array<{ ok: boolean; by?: string }> = [];
    const observer: SwitchyardPlugin = {
      name: 'observer',
      setup: () => ({
        hooks: {
          onRequest(event) {
            event.whenSettled((outcome) => void statuses.push(outcome.ok ? outcome.output.status : -1));
          },
          onFetch(event) {
            event.whenSettled((outcome) => void fetchOutcomes.push(outcome.ok ? { ok: true, by: outcome.shortCircuitedBy } : { ok: false }));
          },
        },
      }),
    };
    // Registered after the observer: its after-hook replaces the answer.
    const teapot: SwitchyardPlugin = {
      name: 'teapot',
      setup: () => ({
        hooks: {
          onRequest: () => (after) => after.setOutput(toErrorResponse(new RouterError('BAD_REQUEST', 'short and stout', { status: 418 }))),
        },
      }),
    };
    const down = await startSubgraph(librarySubgraph({ reply: () => ({ status: 503, body: 'down' }) }));
    const router = await startTestRouter({ subgraphs: [down], plugins: [observer, teapot] });
    try {
      const response = await router.query('{ books { id } }');
      expect(response.status).toBe(418);
      expect(statuses).toEqual([418]);
      expect(fetchOutcomes).toEqual([{ ok: false }]);
    } finally {
      await router.close();
      await down.close();
    }
  });
});
