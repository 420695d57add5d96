/**
 * The floor: a bare node:http "router" that knows only the benchmark
 * operation and sends exactly its minimal plan's 6 fetches with undici
 * (keep-alive pools), then writes the response. No parsing, validation or
 * planning: what is left is the cost any router must pay. Operations other
 * than `TopProducts` get `{"data":{"__typename":"Query"}}`.
 *
 * Usage: node floor.js --port <n> --accounts <url> --products <url>
 *        --inventory <url> --reviews <url> [--sharing]
 * `--sharing` shares identical in-flight subgraph fetches (same subgraph,
 * same body) between client requests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { readBody } from './read-body.js';

const ENTITIES = 'query($representations:[_Any!]!){_entities(representations:$representations)';
const TOP_PRODUCTS = 'query($first:Int!){topProducts(first:$first){upc name price weight}}';
const INVENTORY = `${ENTITIES}{...on Product{inStock shippingEstimate}}}`;
const REVIEWS = `${ENTITIES}{...on Product{reviews{id body author{id reviews{id body product{upc}}}}}}}`;
const ACCOUNTS = `${ENTITIES}{...on User{name username}}}`;
const PRODUCTS = `${ENTITIES}{...on Product{name price weight}}}`;

interface ProductRow {
  upc: string;
  name: string;
  price: number;
  weight: number;
}
interface StockRow {
  inStock: boolean;
  shippingEstimate: number;
}
interface NestedReviewRow {
  id: string;
  body: string;
  product: { upc: string };
}
interface ReviewRow {
  id: string;
  body: string;
  author: { id: string; reviews: NestedReviewRow[] };
}
interface UserRow {
  name: string;
  username: string;
}

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

class SubgraphClient {
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
    const data = (await this.fetch(query, { representations })) as { _entities: T[] };
    return data._entities;
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

const sharing = args.sharing ?? false;
const accounts = new SubgraphClient(args.accounts, 'accounts', sharing);
const products = new SubgraphClient(args.products, 'products', sharing);
const inventory = new SubgraphClient(args.inventory, 'inventory', sharing);
const reviews = new SubgraphClient(args.reviews, 'reviews', sharing);

function byKey<R>(rows: readonly R[], keys: readonly string[]): Map<string, R> {
  return new Map(keys.map((key, i) => [key, rows[i]!]));
}

function stockRepresentations(rows: Iterable<ProductRow>) {
  return [...rows].map((p) => ({ __typename: 'Product', upc: p.upc, price: p.price, weight: p.weight }));
}

async function runPlan(first: unknown): Promise<unknown> {
  const top = ((await products.fetch(TOP_PRODUCTS, { first })) as { topProducts: ProductRow[] }).topProducts;
  const topUpcs = [...new Set(top.map((p) => p.upc))];
  const [topStock, topReviews] = await Promise.all([
    inventory.entities<StockRow>(INVENTORY, stockRepresentations(new Map(top.map((p) => [p.upc, p])).values())),
    reviews.entities<{ reviews: ReviewRow[] }>(
      REVIEWS,
      topUpcs.map((upc) => ({ __typename: 'Product', upc })),
    ),
  ]);
  const authorIds = new Set<string>();
  const nestedUpcs = new Set<string>();
  for (const { reviews: list } of topReviews) {
    for (const review of list) {
      authorIds.add(review.author.id);
      for (const nested of review.author.reviews) nestedUpcs.add(nested.product.upc);
    }
  }
  const authorKeys = [...authorIds];
  const nestedKeys = [...nestedUpcs];
  const [authors, nested] = await Promise.all([
    accounts.entities<UserRow>(
      ACCOUNTS,
      authorKeys.map((id) => ({ __typename: 'User', id })),
    ),
    products
      .entities<ProductRow>(
        PRODUCTS,
        nestedKeys.map((upc) => ({ __typename: 'Product', upc })),
      )
      .then(async (rows) => {
        const withKeys = rows.map((row, i) => ({ ...row, upc: nestedKeys[i]! }));
        return { rows: withKeys, stock: await inventory.entities<StockRow>(INVENTORY, stockRepresentations(withKeys)) };
      }),
  ]);
  const stockByUpc = byKey(topStock, topUpcs);
  const reviewsByUpc = byKey(topReviews, topUpcs);
  const authorById = byKey(authors, authorKeys);
  const nestedByUpc = byKey(nested.rows, nestedKeys);
  const nestedStockByUpc = byKey(nested.stock, nestedKeys);
  const topProducts = top.map((p) => {
    const stock = stockByUpc.get(p.upc)!;
    return {
      upc: p.upc,
      name: p.name,
      price: p.price,
      weight: p.weight,
      inStock: stock.inStock,
      shippingEstimate: stock.shippingEstimate,
      reviews: reviewsByUpc.get(p.upc)!.reviews.map((review) => {
        const author = authorById.get(review.author.id)!;
        return {
          id: review.id,
          body: review.body,
          author: {
            id: review.author.id,
            name: author.name,
            username: author.username,
            reviews: review.author.reviews.map((r) => {
              const product = nestedByUpc.get(r.product.upc)!;
              const productStock = nestedStockByUpc.get(r.product.upc)!;
              return {
                id: r.id,
                body: r.body,
                product: {
                  upc: product.upc,
                  name: product.name,
                  price: product.price,
                  inStock: productStock.inStock,
                  shippingEstimate: productStock.shippingEstimate,
                },
              };
            }),
          },
        };
      }),
    };
  });
  return { topProducts };
}

/** Any other operation (the harness's readiness probe `{ __typename }`) gets this. */
const OTHER = { __typename: 'Query' };

async function serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const body = JSON.parse(await readBody(request)) as { operationName?: unknown; variables?: { first?: unknown } };
  const data = body.operationName === 'TopProducts' ? await runPlan(body.variables?.first) : OTHER;
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
