import { describe, expect, it } from 'vitest';
import type { SubgraphRequest } from '../../../src/index.js';
import { FetchEpochs } from '../../../plugins/response-cache/fetch-epochs.js';

const request = (upc: string): SubgraphRequest => ({
  subgraph: 'products',
  kind: 'root',
  operationType: 'query',
  query: 'query($upc: ID!) { product(upc: $upc) { name } }',
  operationName: undefined,
  variables: { upc },
  representations: undefined,
  selectionSet: '{ product(upc: $upc) { name } }',
  headers: {},
  fetchId: 0,
});

describe('the epoch a fetch checks its writes against', () => {
  it('is shared by identical fetches in flight: a request joining a fetch started before an invalidation gets the older epoch', async () => {
    let epoch = 1;
    const epochs = new FetchEpochs(async () => epoch, 60_000);
    const first = await epochs.begin(request('p1'));
    epoch = 2;
    const joiner = await epochs.begin(request('p1'));
    const other = await epochs.begin(request('p2'));
    expect([first.epoch, joiner.epoch, other.epoch]).toEqual([1, 1, 2]);
    first.end();
    joiner.end();
    other.end();
    expect((await epochs.begin(request('p1'))).epoch).toBe(2);
  });

  it('is read anew once the shared one is older than the longest fetch (a fetch that failed never ended)', async () => {
    let epoch = 1;
    const epochs = new FetchEpochs(async () => epoch, 20);
    await epochs.begin(request('p1'));
    epoch = 5;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect((await epochs.begin(request('p1'))).epoch).toBe(5);
  });

  it('fails when the store cannot be read, and does not keep the failure for the next fetch', async () => {
    let fail = true;
    const epochs = new FetchEpochs(async () => {
      if (fail) throw new Error('store down');
      return 7;
    }, 60_000);
    await expect(epochs.begin(request('p1'))).rejects.toThrow('store down');
    fail = false;
    expect((await epochs.begin(request('p1'))).epoch).toBe(7);
  });
});
