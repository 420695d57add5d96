/**
 * What the hand-written floors (floor.ts, floor-two-roots.ts) share: the
 * command line, one keep-alive undici pool per subgraph (with `--sharing`,
 * identical in-flight subgraph fetches, same subgraph and same body, are
 * shared between client requests), and the node:http server that runs the
 * floor's one operation and answers anything else (the harness's readiness
 * probe `{ __typename }`) with `{"data":{"__typename":"Query"}}`.
 *
 * Usage of a floor: node <floor>.js --port <n> --accounts <url>
 *   --products <url> --inventory <url> --reviews <url> [--sharing]
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { readBody } from './read-body.js';

/** The head of every `_entities` operation the floors send. */
export const ENTITIES = 'query($representations:[_Any!]!){_entities(representations:$representations)';

/** One subgraph over a keep-alive pool. */
export class SubgraphClient {
  private readonly pool: Pool;
  private readonly path: string;
  private readonly inflight = new Map<string, Promise<unknown>>();

  constructor(
    url: string | undefined,
    private readonly name: string,
    private readonly sharing: boolean,
  ) {
    if (!url) throw new Error(`--${name} <url> is required`);
    const parsed = new URL(url);
    this.pool = new Pool(parsed.origin, { pipelining: 1 });
    this.path = parsed.pathname;
  }

  /** `data` of the subgraph's answer to `query` with `variables`. */
  fetch(query: string, variables: Record<string, unknown>): Promise<unknown> {
    const body = JSON.stringify({ query, variables });
    if (!this.sharing) return this.send(body);
    let pending = this.inflight.get(body);
    if (!pending) {
      pending = this.send(body).finally(() => this.inflight.delete(body));
      this.inflight.set(body, pending);
    }
    return pending;
  }

  /** `_entities` of the subgraph for `representations`, in their order. */
  async entities<T>(query: string, representations: readonly unknown[]): Promise<T[]> {
    return ((await this.fetch(query, { representations })) as { _entities: T[] })._entities;
  }

  private async send(body: string): Promise<unknown> {
    const response = await this.pool.request({ path: this.path, method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const json = (await response.body.json()) as { data?: unknown; errors?: Array<{ message: string }> };
    if (response.statusCode !== 200 || json.errors || !json.data) {
      throw new Error(`${this.name}: ${response.statusCode} ${json.errors?.map((e) => e.message).join('; ') ?? 'no data'}`);
    }
    return json.data;
  }
}

/** The bench graph's four subgraphs, from the command line. */
export interface FloorSubgraphs {
  readonly accounts: SubgraphClient;
  readonly products: SubgraphClient;
  readonly inventory: SubgraphClient;
  readonly reviews: SubgraphClient;
}

/**
 * Starts a floor: reads the command line, connects to the subgraphs and
 * serves `operationName` with `run(subgraphs, variables)` (its `data`).
 */
export function startFloor(operationName: string, run: (subgraphs: FloorSubgraphs, variables: Record<string, unknown>) => Promise<unknown>): void {
  const { values: args } = parseArgs({
    options: {
      port: { type: 'string' },
      accounts: { type: 'string' },
      products: { type: 'string' },
      inventory: { type: 'string' },
      reviews: { type: 'string' },
      sharing: { type: 'boolean', default: false },
    },
  });
  const sharing = args.sharing ?? false;
  const subgraphs: FloorSubgraphs = {
    accounts: new SubgraphClient(args.accounts, 'accounts', sharing),
    products: new SubgraphClient(args.products, 'products', sharing),
    inventory: new SubgraphClient(args.inventory, 'inventory', sharing),
    reviews: new SubgraphClient(args.reviews, 'reviews', sharing),
  };
  const other = { __typename: 'Query' };
  async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const body = JSON.parse(await readBody(request)) as { operationName?: unknown; variables?: Record<string, unknown> };
    const data = body.operationName === operationName ? await run(subgraphs, body.variables ?? {}) : other;
    const bytes = Buffer.from(JSON.stringify({ data }));
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    response.end(bytes);
  }
  const server = createServer((request, response) => {
    serve(request, response).catch((error: unknown) => {
      const bytes = Buffer.from(JSON.stringify({ errors: [{ message: error instanceof Error ? error.message : String(error) }] }));
      response.writeHead(500, { 'content-type': 'application/json', 'content-length': bytes.length });
      response.end(bytes);
    });
  });
  server.keepAliveTimeout = 120_000;
  server.listen(Number(args.port), '127.0.0.1');
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
}

/** Rows of an `_entities` answer by the keys they were asked for (same order). */
export function byKey<R>(rows: readonly R[], keys: readonly string[]): Map<string, R> {
  return new Map(keys.map((key, i) => [key, rows[i]!]));
}
