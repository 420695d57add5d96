/**
 * Two Federation features the planner does not implement in full: progressive
 * `@override(label:)` is honoured for the labels that are always on or always
 * off, and `@context`/`@fromContext` is refused at load (serving it would call
 * the subgraph without the contextual argument and answer from null).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { createLogger, createRouter, RouterError } from '../../src/index.js';
import { parseGraphSource } from '../../src/kernel/graph/execution-config.js';
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

  it('a progressive override between 0 and 100 percent, naming the field and the label', async () => {
    const subgraphs = await start(overrideGraph({ full: 'percent(50)', none: 'percent(0)', custom: 'beta' }));
    expect(await refusal(startTestRouter({ subgraphs }))).toMatch(
      /Item\.full: progressive @override label "percent\(50\)" is not supported; only percent\(0\), percent\(100\) and custom labels/,
    );
  });

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
