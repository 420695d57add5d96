import type { Plugin as EnvelopPlugin } from '@envelop/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, definePlugin, StateKey, z, type SwitchyardPlugin } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
});
afterAll(async () => {
  await library?.close();
});

/** A plugin that records when each of its hooks and after-hooks ran. */
function recorder(name: string, log: string[], options: { dependsOn?: string[]; optionalDependsOn?: string[] } = {}): SwitchyardPlugin {
  const record = (stage: string) => () => {
    log.push(`${name}:before:${stage}`);
    return () => void log.push(`${name}:after:${stage}`);
  };
  return {
    name,
    dependsOn: options.dependsOn,
    optionalDependsOn: options.optionalDependsOn,
    setup: () => {
      log.push(`${name}:setup`);
      return {
        hooks: {
          onRequest: record('request'),
          onParse: record('parse'),
          onValidate: record('validate'),
          onPlan: record('plan'),
          onFetch: record('fetch'),
          onMerge: record('merge'),
          onRespond: record('respond'),
        },
        stop: () => void log.push(`${name}:stop`),
      };
    },
  };
}

describe('the plugin contract', () => {
  it('runs hooks stage by stage in registration order, after-hooks in the same order, and stops in reverse', async () => {
    const log: string[] = [];
    const router = await startTestRouter({ subgraphs: [library], plugins: [recorder('a', log), recorder('b', log)] });
    expect(log).toEqual(['a:setup', 'b:setup']);
    log.length = 0;
    await router.query('{ books { id } }');
    const stages = ['request', 'parse', 'validate', 'plan', 'fetch', 'merge', 'respond'];
    const expected: string[] = ['a:before:request', 'b:before:request'];
    for (const stage of stages.slice(1)) expected.push(`a:before:${stage}`, `b:before:${stage}`, `a:after:${stage}`, `b:after:${stage}`);
    expected.push('a:after:request', 'b:after:request');
    expect(log).toEqual(expected);
    log.length = 0;
    await router.close();
    expect(log).toEqual(['b:stop', 'a:stop']);
  });

  it('skips the stage and later before-hooks after respondWith, but runs the after-hooks that were registered', async () => {
    const log: string[] = [];
    let shortCircuitedBy: string | undefined;
    const observer: SwitchyardPlugin = {
      name: 'observer',
      setup: () => ({
        hooks: {
          onFetch: () => (after) => {
            shortCircuitedBy = after.shortCircuitedBy;
            log.push(`observer saw ${JSON.stringify(after.output.data)}`);
          },
        },
      }),
    };
    const answerer: SwitchyardPlugin = {
      name: 'answerer',
      setup: () => ({ hooks: { onFetch: (event) => event.respondWith({ data: { books: [{ id: 'from-plugin' }] } }) } }),
    };
    library.reset();
    const router = await startTestRouter({ subgraphs: [library], plugins: [observer, answerer, recorder('late', log)] });
    const response = await router.query('{ books { id } }');
    expect(response.body).toEqual({ data: { books: [{ id: 'from-plugin' }] } });
    expect(library.calls).toHaveLength(0);
    expect(shortCircuitedBy).toBe('answerer');
    expect(log).toContain('observer saw {"books":[{"id":"from-plugin"}]}');
    expect(log).not.toContain('late:before:fetch');
    await router.close();
  });

  it('lets hooks change a stage input and output, and share typed request state', async () => {
    const seen = new StateKey<string>('seen');
    const rewriter: SwitchyardPlugin = {
      name: 'rewriter',
      setup: () => ({
        hooks: {
          onRequest: (event) => {
            event.state.set(seen, event.input.headers['x-who'] ?? 'nobody');
            if (event.input.query === '{ greeting }') event.setInput({ ...event.input, query: '{ book(id: "b3") { title } }' });
          },
          onRespond: (event) => (after) => {
            after.setOutput({ ...after.output, body: { ...after.output.body, extensions: { who: event.state.get(seen) } } });
          },
        },
      }),
    };
    const router = await startTestRouter({ subgraphs: [library], plugins: [rewriter] });
    const response = await router.query({ query: '{ greeting }', headers: { 'x-who': 'tester' } });
    expect(response.body).toEqual({ data: { book: { title: 'Ubik' } }, extensions: { who: 'tester' } });
    await router.close();
  });

  it('turns a throwing hook into PLUGIN_ERROR for that request, names the plugin in the log, and keeps serving', async () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'error', destination: { write: (line: string) => void lines.push(line) } });
    let fail = true;
    const flaky: SwitchyardPlugin = {
      name: 'flaky',
      setup: () => ({
        hooks: {
          onPlan: () => {
            if (fail) throw new Error('boom');
          },
        },
      }),
    };
    const router = await startTestRouter({ subgraphs: [library], plugins: [flaky], logger });
    const response = await router.query('{ books { id } }');
    expect(response.status).toBe(500);
    expect(response.body.errors).toEqual([{ message: '[flaky] boom', extensions: { code: 'PLUGIN_ERROR' } }]);
    expect(lines.some((line) => JSON.parse(line).plugin === 'flaky')).toBe(true);
    fail = false;
    expect((await router.query('{ books { id } }')).status).toBe(200);
    await router.close();
  });

  it('gives partial data when a fetch hook throws, as for a failed subgraph call', async () => {
    const broken: SwitchyardPlugin = {
      name: 'broken-fetch',
      setup: () => ({ hooks: { onFetch: () => Promise.reject(new Error('cannot fetch')) } }),
    };
    const router = await startTestRouter({ subgraphs: [library], plugins: [broken] });
    const response = await router.query('{ failing: book(id: "b1") { title } }');
    expect(response.body.data).toEqual({ failing: null });
    expect(response.body.errors?.[0]?.extensions?.code).toBe('PLUGIN_ERROR');
    await router.close();
  });

  it('refuses two plugins with the same name', async () => {
    await expect(startTestRouter({ subgraphs: [library], plugins: [recorder('twin', []), recorder('twin', [])] })).rejects.toMatchObject({
      code: 'PLUGIN_DUPLICATE',
    });
  });

  it('refuses a plugin whose dependency is missing or registered after it', async () => {
    await expect(startTestRouter({ subgraphs: [library], plugins: [recorder('child', [], { dependsOn: ['parent'] })] })).rejects.toMatchObject({
      code: 'PLUGIN_DEPENDENCY_MISSING',
      message: 'plugin "child" depends on "parent", which is not registered',
    });
    await expect(startTestRouter({ subgraphs: [library], plugins: [recorder('child', [], { dependsOn: ['parent'] }), recorder('parent', [])] })).rejects.toMatchObject({
      message: 'plugin "child" depends on "parent", which must be registered before it',
    });
  });

  it('starts without an optional dependency, and with it in either order', async () => {
    for (const plugins of [
      [recorder('reader', [], { optionalDependsOn: ['identity'] })],
      [recorder('reader', [], { optionalDependsOn: ['identity'] }), recorder('identity', [])],
      [recorder('identity', []), recorder('reader', [], { optionalDependsOn: ['identity'] })],
    ]) {
      const router = await startTestRouter({ subgraphs: [library], plugins });
      expect((await router.query('{ books { id } }')).status).toBe(200);
      await router.close();
    }
  });

  it('stops the plugins already set up when a later setup fails', async () => {
    const log: string[] = [];
    const failing: SwitchyardPlugin = {
      name: 'failing',
      setup: () => {
        throw new Error('no database');
      },
    };
    await expect(startTestRouter({ subgraphs: [library], plugins: [recorder('first', log), failing] })).rejects.toMatchObject({
      code: 'PLUGIN_ERROR',
      message: '[failing] setup failed: no database',
    });
    expect(log).toEqual(['first:setup', 'first:stop']);
  });

  it('validates plugin options with the plugin schema and names the plugin and key', () => {
    const useLimit = definePlugin({
      name: 'limit',
      options: z.strictObject({ max: z.number().int().positive() }),
      setup: () => ({}),
    });
    expect(() => useLimit({ max: -1 })).toThrow(/\[limit\] max: /);
    expect(() => useLimit({ max: 1, extra: true } as never)).toThrow(/unknown key "extra"/);
    expect(useLimit({ max: 3 }).name).toBe('limit');
  });

  it('registers no hooks for a plugin that has none, so it costs nothing per request', async () => {
    const quiet: SwitchyardPlugin = { name: 'quiet', setup: () => ({}) };
    // Every built-in feature off (plans not shown, no document limit, no sharing, no retries): no stage has a hook at all.
    const config = { query_plans: { enabled: false }, limits: { max_fields: 0 }, engine: { enable_single_flight: false }, traffic_shaping: { all: { retry: { enabled: false } } } };
    const router = await startTestRouter({ subgraphs: [library], plugins: [quiet], config });
    const internal = router.router as unknown as { host: { stageHooks: Record<string, unknown[]> } };
    expect(Object.values(internal.host.stageHooks).every((hooks) => hooks.length === 0)).toBe(true);
    await router.close();
  });
});

describe('envelop plugins', () => {
  it('run their onParse, onValidate, onContextBuilding and onExecute hooks around the federated execution', async () => {
    const calls: string[] = [];
    const envelopPlugin = {
      onParse: () => void calls.push('onParse'),
      onValidate: () => void calls.push('onValidate'),
      onContextBuilding: () => void calls.push('onContextBuilding'),
      onExecute: () => {
        calls.push('onExecute');
        return { onExecuteDone: ({ result }: { result: unknown }) => void calls.push(`done:${JSON.stringify((result as { data: unknown }).data)}`) };
      },
    };
    const router = await startTestRouter({ subgraphs: [library], plugins: [{ name: 'with-envelop', setup: () => ({ envelop: [envelopPlugin] }) }] });
    const response = await router.query('{ book(id: "b1") { title } }');
    expect(response.body).toEqual({ data: { book: { title: 'Dune' } } });
    expect(calls).toEqual(['onParse', 'onValidate', 'onContextBuilding', 'onExecute', 'done:{"book":{"title":"Dune"}}']);
    await router.close();
  });

  it('may replace the result of the execution', async () => {
    const router = await startTestRouter({
      subgraphs: [library],
      plugins: [
        {
          name: 'masker',
          setup: () => ({
            envelop: [
              {
                onExecute: (): ReturnType<NonNullable<EnvelopPlugin['onExecute']>> => ({
                  onExecuteDone: ({ setResult }) => setResult({ data: { book: { title: 'hidden' } } }),
                }),
              },
            ],
          }),
        },
      ],
    });
    expect((await router.query('{ book(id: "b1") { title } }')).body).toEqual({ data: { book: { title: 'hidden' } } });
    await router.close();
  });
});
