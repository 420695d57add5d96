import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSubgraphs } from '../../examples/demo/subgraphs.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';

let subgraphs: TestSubgraph[];
let router: TestRouter;

beforeAll(async () => {
  subgraphs = await Promise.all(demoSubgraphs.map((s) => startSubgraph(s)));
  router = await startTestRouter({ subgraphs });
});

afterAll(async () => {
  await router?.close();
  await Promise.all(subgraphs.map((s) => s.close()));
});

describe('the demo graph', () => {
  it('answers a query that jumps across all four subgraphs', async () => {
    const response = await router.query(`{ topProducts(first: 2) { name shippingEstimate inStock reviews { body author { username name } } } }`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: {
        topProducts: [
          {
            name: 'Table',
            shippingEstimate: 50,
            inStock: true,
            reviews: [
              { body: 'Love it!', author: { username: '@ada', name: 'Ada Lovelace' } },
              { body: 'Prefer something else.', author: { username: '@grace', name: 'Grace Hopper' } },
            ],
          },
          { name: 'Couch', shippingEstimate: 0, inStock: false, reviews: [{ body: 'Too expensive.', author: { username: '@ada', name: 'Ada Lovelace' } }] },
        ],
      },
    });
  });
});
