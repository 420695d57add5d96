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
import { byKey, ENTITIES, type FloorSubgraphs, startFloor } from './floor-kit.js';

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

function stockRepresentations(rows: Iterable<ProductRow>) {
  return [...rows].map((p) => ({ __typename: 'Product', upc: p.upc, price: p.price, weight: p.weight }));
}

async function runPlan({ accounts, products, inventory, reviews }: FloorSubgraphs, { first }: Record<string, unknown>): Promise<unknown> {
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

startFloor('TopProducts', runPlan);
