import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestSubgraph } from 'switchyard/testing';
import { __FACTORY_NAME__ } from '../src/index.js';

// A real GraphQL subgraph on 127.0.0.1; the test router composes a supergraph from it.
let greetings: TestSubgraph;

beforeAll(async () => {
  greetings = await startSubgraph({
    name: 'greetings',
    typeDefs: /* GraphQL */ `
      extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
      type Query {
        hello(name: String!): String!
      }
    `,
    resolvers: { Query: { hello: (_: unknown, { name }: { name: string }) => `Hello, ${name}!` } },
  });
});

afterAll(async () => {
  await greetings?.close();
});

describe('__PLUGIN_NAME__', () => {
  it('adds the response time header and leaves the answer as it was', async () => {
    const router = await startTestRouter({ subgraphs: [greetings], plugins: [__FACTORY_NAME__()] });
    try {
      const response = await router.query({ query: 'query ($name: String!) { hello(name: $name) }', variables: { name: 'Ada' } });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ data: { hello: 'Hello, Ada!' } });
      expect(response.headers.get('x-response-time')).toMatch(/^\d+\.\d$/);
    } finally {
      await router.close();
    }
  });

  it('uses the header named in its options', async () => {
    const router = await startTestRouter({ subgraphs: [greetings], plugins: [__FACTORY_NAME__({ header: 'x-took-ms' })] });
    try {
      const response = await router.query('{ hello(name: "Alan") }');
      expect(response.headers.get('x-took-ms')).toMatch(/^\d+\.\d$/);
      expect(response.headers.get('x-response-time')).toBeNull();
    } finally {
      await router.close();
    }
  });

  it('refuses bad options with the plugin and key named', () => {
    expect(() => __FACTORY_NAME__({ header: 'Not A Header' })).toThrow(/\[__PLUGIN_NAME__\] header: must be a lower-case header name/);
    expect(() => __FACTORY_NAME__({ colour: 'red' } as never)).toThrow(/\[__PLUGIN_NAME__\] unknown key "colour"/);
  });
});
