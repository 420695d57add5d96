/**
 * Progressive `@override(label:)`: `percent(100)` always on, `percent(0)` and
 * custom labels always off, `percent(x)` between drawn for each operation
 * (the plan made and cached per draw). `@context`/`@fromContext`, which the
 * planner does not implement, is refused at load (serving it would call the
 * subgraph without the contextual argument and answer from null).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createLogger, createRouter, RouterError, StateKey, type SwitchyardPlugin } from '../../src/index.js';
import { parseGraphSource } from '../../src/kernel/graph/execution-config.js';
import type { LoadedGraph } from '../../src/kernel/graph/loaded-graph.js';
import { OverrideLabels } from '../../src/kernel/graph/override-label.js';
import { startSubgraph, startTestRouter, type SubgraphOptions, type TestSubgraph } from '../../src/testing/index.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const LINK = (version: string, ...directives: string[]) =>
  `extend schema @link(url: "https://specs.apollo.dev/federation/${version}", import: [${directives.map((d) => `"@${d}"`).join(', ')}])`;

/** `legacy` owns `Item`; `next` takes over `full` with percent(100), `none` with percent(0) and `custom` with a custom label. */
function overrideGraph(labels: { full: string; none: string; custom: string }): SubgraphOptions[] {
  const item = { __resolveReference: (ref: { id: string }) => ref };
  const answers = (name: string) => ({ full: () => name, none: () => name, custom: () => name });
  return [
    {
      name: 'legacy',
      typeDefs: `${LINK('v2.7', 'key')} type Query { items: [Item!]! } type Item @key(fields: "id") { id: ID! full: String none: String custom: String }`,
      resolvers: { Query: { items: () => [{ id: 'i1' }] }, Item: { ...item, ...answers('legacy') } },
    },
    {
      name: 'next',
      typeDefs: `${LINK('v2.7', 'key', 'override')} type Item @key(fields: "id") { id: ID!
        full: String @override(from: "legacy", label: "${labels.full}")
        none: String @override(from: "legacy", label: "${labels.none}")
        custom: String @override(from: "legacy", label: "${labels.custom}") }`,
      resolvers: { Item: { ...item, ...answers('next') } },
    },
  ];
}

const graph = useFederatedGraph(() => overrideGraph({ full: 'percent(100)', none: 'percent(0)', custom: 'beta-pricing' }));

describe('progressive @override(label:)', () => {
  it('serves a percent(100) field from the overriding subgraph only, and percent(0) and custom-label fields from the original', async () => {
    expect(await graph().query('{ items { id full none custom } }')).toEqual({ data: { items: [{ id: 'i1', full: 'next', none: 'legacy', custom: 'legacy' }] } });
    const [legacyCall] = graph().calls('legacy');
    expect(legacyCall?.query).not.toContain('full');
    const nextCalls = graph().calls('next');
    expect(nextCalls).toHaveLength(1);
    expect(nextCalls[0]?.query).toContain('full');
    expect(nextCalls[0]?.query).not.toMatch(/\bnone\b|\bcustom\b/);
  });

  it('does not call the overriding subgraph for fields whose label is off', async () => {
    expect(await graph().query('{ items { none custom } }')).toEqual({ data: { items: [{ none: 'legacy', custom: 'legacy' }] } });
    expect(graph().calls('next')).toEqual([]);
  });
});

/** Which subgraph answered each of `runs` operations, and what each subgraph was asked. */
async function tally(graph: () => ReturnType<ReturnType<typeof useFederatedGraph>>, query: string, runs: number) {
  const answers = new Map<string, number>();
  for (let run = 0; run < runs; run++) {
    const body = await graph().query(query);
    const item = (body.data as { items: Array<Record<string, string>> }).items[0]!;
    const key = Object.values(item).join(',');
    answers.set(key, (answers.get(key) ?? 0) + 1);
  }
  return answers;
}

describe('progressive @override(label: "percent(x)") between 0 and 100', () => {
  const split = useFederatedGraph(() => overrideGraph({ full: 'percent(50)', none: 'percent(0)', custom: 'beta' }));

  it('serves the field from the overriding subgraph for about x% of operations, and asks only the subgraph that answers', async () => {
    const runs = 200;
    const answers = await tally(split, '{ items { full } }', runs);
    // Binomial(200, 0.5): outside 60-140 about once in 10^8 runs.
    expect([...answers.keys()].sort()).toEqual(['legacy', 'next']);
    expect(answers.get('next')).toBeGreaterThan(60);
    expect(answers.get('legacy')).toBeGreaterThan(60);
    // Each operation was planned for its draw: `next` was called exactly for the answers it gave, `legacy` fetched `full` for the rest.
    expect(split().calls('next')).toHaveLength(answers.get('next')!);
    expect(
      split()
        .calls('legacy')
        .filter((call) => call.query.includes('full')),
    ).toHaveLength(answers.get('legacy')!);
    // One plan per draw, both cached (the key carries the labels drawn).
    const plans = [...(split().router.graph as LoadedGraph).plans.keys()].filter((key) => key.endsWith('{ items { full } }'));
    expect(plans).toHaveLength(2);
  });

  it('keeps percent(0) and custom-label fields on the original subgraph whatever the draw', async () => {
    const answers = await tally(split, '{ items { none custom } }', 40);
    expect([...answers.keys()]).toEqual(['legacy,legacy']);
    expect(split().calls('next')).toEqual([]);
  });
});

describe('two percent labels in a supergraph Apollo composition wrote', () => {
  const apollo = useFederatedGraph(() => overrideGraph({ full: 'percent(25)', none: 'percent(75)', custom: 'beta' }), { composition: 'apollo' });

  it('draws each label on its own: every combination comes up, custom labels stay off', async () => {
    const answers = await tally(apollo, '{ items { full none custom } }', 400);
    // The rarest combination (full on, none off) has probability 1/16: missing from 400 draws about once in 10^11.
    expect([...answers.keys()].sort()).toEqual(['legacy,legacy,legacy', 'legacy,next,legacy', 'next,legacy,legacy', 'next,next,legacy']);
    expect(answers.get('legacy,next,legacy')!).toBeGreaterThan(answers.get('next,legacy,legacy')!);
  });
});

describe('override labels a plan hook turns on', () => {
  const started: TestSubgraph[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
  });

  /** Turns the custom label `beta` on for requests with `x-beta: 1`, replacing the cache key as authorization's filtering does. */
  const beta: SwitchyardPlugin = {
    name: 'beta-labels',
    setup: () => {
      const wantsBeta = new StateKey<boolean>('wants-beta');
      return {
        hooks: {
          onRequest(event) {
            event.state.set(wantsBeta, event.input.headers['x-beta'] === '1');
          },
          onPlan(event) {
            if (!event.state.get(wantsBeta)) return;
            event.setInput({ ...event.input, cacheKey: `beta-form\n${event.input.cacheKey}`, overrideLabels: [...event.input.overrideLabels, 'beta', 'not-in-the-graph'] });
          },
        },
      };
    },
  };

  it('serves a custom-label field from the overriding subgraph when a plan hook turns the label on, still drawing percent labels', async () => {
    for (const definition of overrideGraph({ full: 'percent(50)', none: 'percent(0)', custom: 'beta' })) started.push(await startSubgraph(definition));
    const router = await startTestRouter({ subgraphs: started, plugins: [beta] });
    try {
      const seen = { beta: new Set<string>(), plain: new Set<string>() };
      for (let run = 0; run < 60; run++) {
        for (const kind of ['beta', 'plain'] as const) {
          const response = await router.query({ query: '{ items { full none custom } }', headers: kind === 'beta' ? { 'x-beta': '1' } : {} });
          seen[kind].add(Object.values((response.body.data as { items: Array<Record<string, string>> }).items[0]!).join(','));
        }
      }
      // Percent labels are drawn whatever the hook wrote as the key: both answers for `full` in each group (each missing once in 10^18).
      expect([...seen.beta].sort()).toEqual(['legacy,legacy,next', 'next,legacy,next']);
      expect([...seen.plain].sort()).toEqual(['legacy,legacy,legacy', 'next,legacy,legacy']);
      // A plan per set of labels on; the label the graph lacks makes no plan of its own.
      const keys = [...(router.router.graph as LoadedGraph).plans.keys()];
      expect(keys).toHaveLength(4);
      expect(keys.filter((key) => key.includes('not-in-the-graph'))).toEqual([]);
    } finally {
      await router.close();
    }
  });
});

describe('OverrideLabels', () => {
  it('draws only the labels between 0 and 100 percent, each with its probability, sorted', () => {
    const labels = new OverrideLabels(['percent(100)', 'percent(0)', 'beta', 'percent(30)', 'percent(2.5)', 'percent(30)']);
    expect(labels.draw(() => 0)).toEqual(['percent(2.5)', 'percent(30)']);
    expect(labels.draw(() => 0.99)).toEqual([]);
    // 0.2 * 100 = 20: under 30, not under 2.5.
    expect(labels.draw(() => 0.2)).toEqual(['percent(30)']);
    expect(new OverrideLabels(['percent(100)', 'percent(0)', 'beta']).draw(() => 0)).toEqual([]);
  });

  it('keeps of the labels on only those of the graph that can be switched, once each, sorted', () => {
    const labels = new OverrideLabels(['percent(100)', 'percent(0)', 'beta', 'percent(30)']);
    expect(labels.labelsOn(['percent(30)', 'beta', 'percent(100)', 'percent(0)', 'gamma', 'beta'])).toMatchObject({ key: 'beta\npercent(30)' });
    expect(labels.labelsOn(['gamma']).key).toBe('');
  });
});

/** `legacy` owns `Part` under four keys; `next` takes over three key fields, each under a different label. */
function keyFieldOverrideGraph(): SubgraphOptions[] {
  const part = { id: 'p1', sku: 'legacy-sku', code: 'legacy-code', serial: 'legacy-serial' };
  return [
    {
      name: 'legacy',
      typeDefs: `${LINK('v2.7', 'key')} type Query { parts: [Part!]! }
        type Part @key(fields: "id") @key(fields: "sku") @key(fields: "code") @key(fields: "serial") { id: ID! sku: String! code: String! serial: String! }`,
      resolvers: { Query: { parts: () => [part] }, Part: { __resolveReference: () => part } },
    },
    {
      name: 'next',
      typeDefs: `${LINK('v2.7', 'key', 'override')} type Part @key(fields: "id") { id: ID!
        sku: String! @override(from: "legacy", label: "percent(0)")
        code: String! @override(from: "legacy", label: "beta-codes")
        serial: String! @override(from: "legacy", label: "percent(100)") }`,
      resolvers: { Part: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, sku: 'next-sku', code: 'next-code', serial: 'next-serial' }) } },
    },
  ];
}

describe('progressive @override(label:) of a field the original subgraph uses in a @key', () => {
  // Composition marks the original's field `usedOverridden` (kept for its key);
  // while the label is off the original must still answer for it.
  const keyGraph = useFederatedGraph(keyFieldOverrideGraph);

  it('serves percent(0) and custom-label key fields from the original, percent(100) from the overriding subgraph', async () => {
    expect(await keyGraph().query('{ parts { id sku code serial } }')).toEqual({
      data: { parts: [{ id: 'p1', sku: 'legacy-sku', code: 'legacy-code', serial: 'next-serial' }] },
    });
  });

  it('does not call the overriding subgraph when only label-off key fields are asked for', async () => {
    expect(await keyGraph().query('{ parts { sku code } }')).toEqual({ data: { parts: [{ sku: 'legacy-sku', code: 'legacy-code' }] } });
    expect(keyGraph().calls('next')).toEqual([]);
  });
});

describe('refused at load with SUPERGRAPH_INVALID', () => {
  const started: TestSubgraph[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((s) => s.close()));
  });
  const start = async (definitions: SubgraphOptions[]) => {
    for (const definition of definitions) started.push(await startSubgraph(definition));
    return [...started];
  };
  const refusal = async (load: Promise<unknown>): Promise<string> => {
    const error = await load.then(
      async (router) => {
        await (router as { close(): Promise<void> }).close?.();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).code).toBe('SUPERGRAPH_INVALID');
    return (error as RouterError).message;
  };

  const contextGraph = (): SubgraphOptions[] => [
    {
      name: 'accounts',
      typeDefs: `${LINK('v2.8', 'key')} type Query { user: User } type User @key(fields: "id") { id: ID! name: String! }`,
      resolvers: { Query: { user: () => ({ id: 'u1', name: 'Ann' }) } },
    },
    {
      name: 'greetings',
      typeDefs: `${LINK('v2.8', 'key', 'context', 'fromContext', 'external')}
        type Query { unused: Int }
        type User @key(fields: "id") @context(name: "userContext") { id: ID! name: String! @external profile: Profile! }
        type Profile @key(fields: "id") { id: ID! greeting(name: String @fromContext(field: "$userContext { name }")): String }`,
      resolvers: {
        User: { __resolveReference: (ref: { id: string }) => ref, profile: () => ({ id: 'p1' }) },
        Profile: { greeting: (_: unknown, args: { name?: string | null }) => `hello ${args.name}` },
      },
    },
  ];
  const contextMessage = /@fromContext\/@context \(contextArguments on Profile\.greeting\) is not supported/;

  it('@context/@fromContext in a supergraph', async () => {
    const subgraphs = await start(contextGraph());
    expect(await refusal(startTestRouter({ subgraphs }))).toMatch(contextMessage);
  });

  it('@context/@fromContext in a Cosmo execution config', async () => {
    const subgraphs = await start(contextGraph());
    const json = {
      engineConfig: {
        datasourceConfigurations: subgraphs.map((s, index) => ({
          id: String(index),
          kind: 'GRAPHQL',
          customGraphql: { federation: { serviceSdl: s.typeDefs }, fetch: { url: { staticVariableContent: s.url } } },
        })),
      },
      subgraphs: subgraphs.map((s, index) => ({ id: String(index), name: s.name, routingUrl: s.url })),
      version: '00000000-0000-0000-0000-000000000000',
    };
    const graph = parseGraphSource(JSON.stringify(json), 'config.json');
    const load = createRouter({ config: { execution_config: { file: { watch: false } } }, graph, logger: createLogger({ level: 'silent' }) });
    expect(await refusal(load)).toMatch(contextMessage);
  });

  it('a malformed percent label in a hand-edited supergraph', async () => {
    const composed = composeSubgraphs(
      overrideGraph({ full: 'percent(100)', none: 'percent(0)', custom: 'beta' }).map((s) => ({ name: s.name, url: 'http://127.0.0.1:1/graphql', sdl: s.typeDefs })),
    );
    const supergraphSdl = composed.supergraphSdl.replaceAll('percent(100)', 'percent(150)');
    const graph = { supergraphSdl, subgraphs: composed.subgraphs, origin: 'test' };
    const load = createRouter({ config: { execution_config: { file: { watch: false } } }, graph, logger: createLogger({ level: 'silent' }) });
    expect(await refusal(load)).toMatch(/Item\.full: @override label "percent\(150\)" is not a valid percent/);
  });
});
