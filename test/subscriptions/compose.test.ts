/** `router.compose.yaml`'s `subscription` section reaches the execution config and is read back. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { composeGraph } from '../../src/compose/compose.js';
import { renderOutput } from '../../src/compose/write-output.js';
import { parseGraphSource } from '../../src/kernel/graph/execution-config.js';

const REVIEWS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { reviewCount: Int }
  type Subscription { reviewAdded: Review! }
  type Review { id: ID! product: Product! }
  type Product @key(fields: "upc") { upc: ID! }
`;
const PRODUCTS = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])
  type Query { product(upc: ID!): Product }
  type Product @key(fields: "upc") { upc: ID! name: String }
`;

let folder: string | undefined;
afterEach(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
  folder = undefined;
});

describe('compose with subscription settings', () => {
  it('carries each subgraph’s subscription section into the execution config', async () => {
    folder = await mkdtemp(join(tmpdir(), 'switchyard-subscriptions-'));
    await writeFile(join(folder, 'reviews.graphql'), REVIEWS);
    await writeFile(join(folder, 'products.graphql'), PRODUCTS);
    await writeFile(
      join(folder, 'router.compose.yaml'),
      [
        'version: 1',
        'subgraphs:',
        '  - name: reviews',
        '    routing_url: http://127.0.0.1:4002/graphql',
        '    schema: {file: reviews.graphql}',
        '    subscription: {url: ws://127.0.0.1:4002/ws, protocol: ws, websocket_subprotocol: graphql-transport-ws}',
        '  - name: products',
        '    routing_url: http://127.0.0.1:4003/graphql',
        '    schema: {file: products.graphql}',
        '',
      ].join('\n'),
    );
    const composed = await composeGraph(join(folder, 'router.compose.yaml'));
    expect(composed.subgraphs).toEqual([
      {
        kind: 'graphql',
        name: 'reviews',
        url: 'http://127.0.0.1:4002/graphql',
        subscription: { url: 'ws://127.0.0.1:4002/ws', protocol: 'ws', websocketSubprotocol: 'graphql-transport-ws' },
      },
      { kind: 'graphql', name: 'products', url: 'http://127.0.0.1:4003/graphql' },
    ]);
    const source = parseGraphSource(renderOutput(composed, 'execution-config'), 'graph.json');
    expect(source.subgraphs).toEqual(composed.subgraphs);
  });
});
