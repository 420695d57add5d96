/**
 * A client's variables keep their values in batched entity calls, whatever
 * they are named: the variables the router adds for each part's
 * representations (`$r0`, `$r1`, ...) step aside for the client's own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { gatewaysBenchGraph } from '../../federation/graphs/gateways-bench.js';

/** Users' products select `title(lang:)` with the client's variable, top products' `price`: two parts of one products call. */
const operation = (name: string) => `query Titles($${name}: String) {
  users { id reviews { product { upc title(lang: $${name}) } } }
  topProducts { upc reviews { author { id reviews { product { upc price } } } } }
}`;

let subgraphs: TestSubgraph[] = [];
let router: TestRouter;
const productCalls: string[] = [];

beforeAll(async () => {
  subgraphs = await Promise.all(
    gatewaysBenchGraph().map((definition) =>
      startSubgraph(
        definition.name !== 'products'
          ? definition
          : {
              ...definition,
              reply: (call: { query: string }) => {
                productCalls.push(call.query);
                return undefined;
              },
            },
      ),
    ),
  );
  router = await startTestRouter({ subgraphs });
});

afterAll(async () => {
  await router?.close();
  await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
});

describe('client variables in batched entity calls', () => {
  it.each(['r0', 'r1', 'r0_'])('a variable named $%s reaches the subgraph with its value', async (name) => {
    const expected = await router.query({ query: operation('lang'), variables: { lang: 'fr' } });
    productCalls.length = 0;
    const answer = await router.query({ query: operation(name), variables: { [name]: 'fr' } });
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body).toEqual(expected.body);
    expect(JSON.stringify(answer.body.data)).toContain('(fr)');
    // It was one batched call, so the names really met.
    expect(productCalls.filter((query) => query.includes('_1: _entities('))).toHaveLength(1);
  });
});
