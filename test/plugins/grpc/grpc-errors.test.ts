import { afterEach, describe, expect, it } from 'vitest';
import { startBareService, until } from './bare-service.js';
import { catalogService, inventorySubgraph } from './catalog-fixture.js';
import { startGraph, type TestGraph } from './grpc-graph.js';
import { createLogger } from '../../../src/index.js';

let graph: TestGraph | undefined;

/** A gRPC service that never answers; records each call and whether the client reset it. */
async function startHangingService(): Promise<{ target: string; calls: Array<{ path: string; reset: boolean }>; close(): Promise<void> }> {
  const calls: Array<{ path: string; reset: boolean }> = [];
  const service = await startBareService((stream, headers) => {
    const call = { path: String(headers[':path']), reset: false };
    calls.push(call);
    stream.on('aborted', () => (call.reset = true));
    stream.resume();
  });
  return { ...service, calls };
}

afterEach(async () => {
  await graph?.close();
  graph = undefined;
});

describe('gRPC failures as GraphQL errors', () => {
  it('turns a gRPC status into an error with its status name as code and the gRPC code beside it', async () => {
    graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph] });
    const response = await graph.query(`mutation { setPrice(id: "p9", price: 1) { price } }`);
    expect(response.body).toEqual({
      data: null,
      errors: [
        {
          message: 'product p9 not found',
          path: ['setPrice'],
          // The service's own error: subgraph_error_propagation's defaults forward extensions.code only (test/hostile/subgraph-errors.test.ts allows the rest).
          extensions: { code: 'NOT_FOUND' },
        },
      ],
    });
  });

  it.each([
    ['ResolveProductReviews', '{ products { id reviews(limit: 1) { body } } }', (i: number) => ['products', i, 'reviews']],
    ['RequireProductShippingEstimateById', '{ warehouse { id shippingEstimate } }', (i: number) => ['warehouse', i, 'shippingEstimate']],
    ['LookupProductById', '{ warehouse { id name } }', (i: number) => ['warehouse', i]],
  ] as const)('reports a failed %s at every position it was to fill, not the first alone', async (method, query, pathAt) => {
    const service = catalogService();
    graph = await startGraph({ grpc: [{ ...service, handlers: { ...service.handlers, [method]: () => ({ status: 14, details: 'store offline' }) } }], http: [inventorySubgraph] });
    const response = await graph.query(query);
    const errors = (response.body.errors ?? []) as Array<{ message: string; path?: unknown; extensions?: { code?: unknown } }>;
    // Three products, each one's field failed with the RPC: three errors, each at its own position, each with the status.
    expect(errors.map((error) => error.path)).toEqual([0, 1, 2].map((i) => pathAt(i)));
    for (const error of errors) expect(error).toMatchObject({ message: 'store offline', extensions: { code: 'UNAVAILABLE' } });
  });

  it.each([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])('answers a double of %s, which GraphQL Float cannot hold, with a field error', async (price) => {
    const service = catalogService();
    const handlers = { ...service.handlers, QueryProduct: () => ({ product: { id: 'p1', name: 'Lamp', price } }) };
    graph = await startGraph({ grpc: [{ ...service, handlers }], http: [inventorySubgraph] });
    // Twice: the second run takes the compiled paths (decoder and shaper).
    for (let run = 0; run < 2; run++) {
      const response = await graph.query(`{ product(id: "p1") { name price } }`);
      expect(response.body).toEqual({
        data: { product: null },
        errors: [{ message: `Float cannot represent non numeric value: ${price}`, path: ['product', 'price'] }],
      });
    }
  });

  it('reports an RPC the service does not implement as UNIMPLEMENTED, keeping the other root fields', async () => {
    const service = catalogService();
    const { QueryServerTime: _unimplemented, ...handlers } = service.handlers;
    graph = await startGraph({ grpc: [{ ...service, handlers }], http: [inventorySubgraph] });
    const response = await graph.query(`{ product(id: "p3") { name } serverTime }`);
    expect(response.body).toEqual({
      data: null,
      errors: [
        {
          message: 'QueryServerTime is not implemented',
          path: ['serverTime'],
          extensions: { code: 'UNIMPLEMENTED' },
        },
      ],
    });
  });

  it('gives up at the traffic_shaping deadline with SUBGRAPH_TIMEOUT, while other subgraphs still answer', async () => {
    graph = await startGraph({
      grpc: [{ ...catalogService(), delayMs: 1_000 }],
      http: [inventorySubgraph],
      config: { traffic_shaping: { subgraphs: { catalog: { request_timeout: '150ms' } } } },
    });
    const started = Date.now();
    const response = await graph.query(`{ product(id: "p1") { name } warehouse { id inStock } }`);
    expect(Date.now() - started).toBeLessThan(900);
    expect(response.body).toEqual({
      data: {
        product: null,
        warehouse: [
          { id: 'p1', inStock: true },
          { id: 'p2', inStock: true },
          { id: 'p3', inStock: false },
        ],
      },
      errors: [
        {
          message: 'Subgraph "catalog" did not answer within 150ms (gRPC QueryProduct).',
          path: ['product'],
          extensions: { code: 'SUBGRAPH_TIMEOUT', grpc: { code: 4, status: 'DEADLINE_EXCEEDED', method: 'QueryProduct' }, serviceName: 'catalog' },
        },
      ],
    });
  });

  it('cancels the RPC when the client gives up on its request (a fetch not shared with other requests)', async () => {
    // @grpc/grpc-js's server does not tell a unary handler about cancellation; a bare HTTP/2 service sees the reset.
    const hanging = await startHangingService();
    try {
      graph = await startGraph({
        grpc: [catalogService()],
        http: [inventorySubgraph],
        // With in-flight sharing a query's fetch serves every request asking the same, so one client leaving does not end it.
        config: { engine: { enable_single_flight: false } },
        mapRecords: (records) => records.map((record) => (record.name === 'catalog' ? { ...record, url: hanging.target } : record)),
      });
      const { url } = await graph.router.listen('127.0.0.1:0');
      const client = new AbortController();
      const answer = fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ product(id: "p1") { name } }' }),
        signal: client.signal,
      });
      await until(() => hanging.calls.length === 1);
      expect(hanging.calls).toEqual([{ path: '/service.v1.ServiceService/QueryProduct', reset: false }]);
      client.abort();
      await answer.catch(() => undefined);
      await until(() => hanging.calls[0]!.reset);
      expect(hanging.calls).toEqual([{ path: '/service.v1.ServiceService/QueryProduct', reset: true }]);
    } finally {
      await hanging.close();
    }
  });

  it('reports an answer of 100,000 nested unknown groups as an invalid response, and keeps serving', async () => {
    // Field 15 as START_GROUP (tag 0x7b) over and over: skipping it must not recurse once per level.
    const hostile = Buffer.alloc(100_000, 0x7b);
    const frame = Buffer.alloc(5);
    frame.writeUInt32BE(hostile.length, 1);
    const service = await startBareService((stream) => {
      stream.resume();
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(Buffer.concat([frame, hostile]));
    });
    try {
      graph = await startGraph({
        grpc: [catalogService()],
        http: [inventorySubgraph],
        mapRecords: (records) => records.map((record) => (record.name === 'catalog' ? { ...record, url: service.target } : record)),
      });
      for (let i = 0; i < 2; i++) {
        const response = await graph.query(`{ product(id: "p1") { name } }`);
        expect(response.status).toBe(200);
        expect(response.body).toEqual({
          data: { product: null },
          errors: [
            {
              message: expect.stringMatching(
                /^Subgraph "catalog" sent a response that does not fit its schema: cannot decode QueryProductResponse: groups nested more than 100 levels deep/,
              ),
              path: ['product'],
              extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'catalog' },
            },
          ],
        });
      }
    } finally {
      await service.close();
    }
  });

  it('keeps serving the other subgraphs when the gRPC service is down, with the error at the fields it would fill', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'warn',
      destination: {
        write: (text: string) =>
          void lines.push(
            ...text
              .trim()
              .split('\n')
              .map((line) => JSON.parse(line) as Record<string, unknown>),
          ),
      },
    });
    graph = await startGraph({ grpc: [catalogService()], http: [inventorySubgraph], logger });
    await graph.grpc.catalog!.close();
    const response = await graph.query(`{ warehouse { id inStock } product(id: "p1") { name } }`);
    expect(response.body.data).toEqual({
      warehouse: [
        { id: 'p1', inStock: true },
        { id: 'p2', inStock: true },
        { id: 'p3', inStock: false },
      ],
      product: null,
    });
    expect(response.body.errors).toEqual([
      {
        message: 'Request to subgraph "catalog" failed: gRPC QueryProduct: UNAVAILABLE.',
        path: ['product'],
        extensions: { code: 'SUBGRAPH_REQUEST_FAILED', grpc: { code: 14, status: 'UNAVAILABLE', method: 'QueryProduct' }, serviceName: 'catalog' },
      },
    ]);
    // The address and cause the client does not see are in the router's log, once for a burst of failures.
    await graph.query('{ product(id: "p2") { name } }');
    const unreachable = lines.filter((line) => line.msg === 'gRPC subgraph unreachable');
    expect(unreachable).toEqual([expect.objectContaining({ level: 'warn', subgraph: 'catalog', reason: expect.stringMatching(/ECONNREFUSED 127\.0\.0\.1:\d+/) })]);
  });

  it('reports an entity lookup that returns too few results as an invalid response at each entity', async () => {
    const service = catalogService();
    graph = await startGraph({
      grpc: [{ ...service, handlers: { ...service.handlers, LookupProductById: () => ({ result: [] }) } }],
      http: [inventorySubgraph],
    });
    const response = await graph.query(`{ warehouse { id name } }`);
    expect(response.body).toEqual({
      data: null,
      errors: [0, 1, 2].map((i) => ({
        message:
          'Subgraph "catalog" sent a response that does not fit its schema: LookupProductById returned 0 results for 3 requested; it must return one per key, in order (regenerate the service and recompose).',
        path: ['warehouse', i],
        extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: 'catalog' },
      })),
    });
  });

  it('keeps the entities of other paths when one lookup batch fails for a key of one path', async () => {
    const service = catalogService();
    const lookup = service.handlers.LookupProductById!;
    // NOT_FOUND for any batch holding p2: one bad key fails its whole lookup RPC.
    const handlers = {
      ...service.handlers,
      LookupProductById: (request: Record<string, unknown>, metadata: Parameters<typeof lookup>[1]) =>
        (request.keys as Array<{ id: string }>).some((key) => key.id === 'p2') ? { status: 5, details: 'no product p2' } : lookup(request, metadata),
    };
    const inventory = {
      ...inventorySubgraph,
      typeDefs: inventorySubgraph.typeDefs.replace('featured: [Product!]!', 'featured: [Product!]!\n    few: [Product]!\n    one: Product'),
      resolvers: {
        ...(inventorySubgraph.resolvers as Record<string, unknown>),
        Query: {
          ...(inventorySubgraph.resolvers as { Query: Record<string, unknown> }).Query,
          few: () => ['p1', 'p3'].map((id) => ({ id, inStock: true, weight: 1 })),
          one: () => ({ id: 'p2', inStock: true, weight: 1 }),
        },
      },
    };
    graph = await startGraph({ grpc: [{ ...service, handlers }], http: [inventory] });
    // Both paths' Products go out as one merged lookup; when it fails, each path is asked again alone.
    const response = await graph.query('{ few { id name } one { id name } }');
    expect(response.body.data).toEqual({
      few: [
        { id: 'p1', name: expect.any(String) },
        { id: 'p3', name: expect.any(String) },
      ],
      one: null,
    });
    expect(response.body.errors).toEqual([expect.objectContaining({ message: 'no product p2', path: ['one'], extensions: expect.objectContaining({ code: 'NOT_FOUND' }) })]);
  });

  it('refuses fetches to a subgraph whose proto cannot be read, naming the subgraph', async () => {
    graph = await startGraph({
      grpc: [catalogService()],
      http: [inventorySubgraph],
      mapRecords: (records) => records.map((record) => (record.kind === 'grpc' ? { ...record, proto: 'syntax = "proto3"; message {' } : record)),
    });
    const response = await graph.query(`{ product(id: "p1") { name } }`);
    expect(response.body.data).toEqual({ product: null });
    expect(response.body.errors).toEqual([
      {
        message: expect.stringMatching(/^Subgraph "catalog" cannot be served over gRPC: subgraph "catalog" proto: /),
        path: ['product'],
        extensions: { code: 'SUBGRAPH_REQUEST_FAILED', serviceName: 'catalog' },
      },
    ]);
  });
});
