/**
 * The floor of the two-root-field scenario (bench/scenarios/two-roots.ts):
 * a bare node:http "router" that knows only the `TwoRoots` operation and
 * sends its minimal plan's 6 fetches with undici, then writes the response:
 *
 *   accounts(users) + products(topProducts)
 *   -> reviews (users' and top products' reviews, one `_entities` call)
 *   -> accounts (authors' names) + products (reviewed products)
 *   -> inventory (stock and `@requires` shipping estimates)
 *
 * Operations other than `TwoRoots` get `{"data":{"__typename":"Query"}}`.
 *
 * Usage: node floor-two-roots.js --port <n> --accounts <url> --products <url>
 *        --inventory <url> --reviews <url> [--sharing]
 */
import { byKey, ENTITIES, type FloorSubgraphs, startFloor } from './floor-kit.js';

const ROOT_USERS = 'query($users:Int!){users(first:$users){id username}}';
const ROOT_PRODUCTS = 'query($first:Int!){topProducts(first:$first){upc name}}';
const REVIEWS = `${ENTITIES}{...on User{reviews{body product{upc reviews{id author{id reviews{body product{upc}}}}}}}...on Product{reviews{body author{id reviews{product{upc}}}}}}}`;
const ACCOUNTS = `${ENTITIES}{...on User{name}}}`;
const PRODUCTS = `${ENTITIES}{...on Product{name price weight}}}`;
const INVENTORY = `${ENTITIES}{...on Product{inStock shippingEstimate}}}`;

interface UserReviews {
  reviews: Array<{ body: string; product: { upc: string; reviews: Array<{ id: string; author: { id: string; reviews: Array<{ body: string; product: { upc: string } }> } }> } }>;
}
interface ProductReviews {
  reviews: Array<{ body: string; author: { id: string; reviews: Array<{ product: { upc: string } }> } }>;
}
interface ProductRow {
  name: string;
  price: number;
  weight: number;
}
interface StockRow {
  inStock: boolean;
  shippingEstimate: number;
}

async function runPlan({ accounts, products, inventory, reviews }: FloorSubgraphs, { first, users: userCount }: Record<string, unknown>): Promise<unknown> {
  const [usersData, topData] = await Promise.all([accounts.fetch(ROOT_USERS, { users: userCount }), products.fetch(ROOT_PRODUCTS, { first })]);
  const users = (usersData as { users: Array<{ id: string; username: string }> }).users;
  const top = (topData as { topProducts: Array<{ upc: string; name: string }> }).topProducts;
  const userIds = [...new Set(users.map((u) => u.id))];
  const topUpcs = [...new Set(top.map((p) => p.upc))];
  const reviewed = await reviews.entities<UserReviews | ProductReviews>(REVIEWS, [
    ...userIds.map((id) => ({ __typename: 'User', id })),
    ...topUpcs.map((upc) => ({ __typename: 'Product', upc })),
  ]);
  const userReviews = byKey(reviewed.slice(0, userIds.length) as UserReviews[], userIds);
  const productReviews = byKey(reviewed.slice(userIds.length) as ProductReviews[], topUpcs);
  const authorIds = new Set<string>();
  const productUpcs = new Set<string>();
  for (const { reviews: list } of userReviews.values()) {
    for (const review of list) {
      for (const inner of review.product.reviews) {
        authorIds.add(inner.author.id);
        for (const last of inner.author.reviews) productUpcs.add(last.product.upc);
      }
    }
  }
  for (const { reviews: list } of productReviews.values()) {
    for (const review of list) {
      authorIds.add(review.author.id);
      for (const last of review.author.reviews) productUpcs.add(last.product.upc);
    }
  }
  const authorKeys = [...authorIds];
  const productKeys = [...productUpcs];
  const [names, details] = await Promise.all([
    accounts.entities<{ name: string }>(
      ACCOUNTS,
      authorKeys.map((id) => ({ __typename: 'User', id })),
    ),
    products
      .entities<ProductRow>(
        PRODUCTS,
        productKeys.map((upc) => ({ __typename: 'Product', upc })),
      )
      .then(async (rows) => ({
        rows,
        stock: await inventory.entities<StockRow>(
          INVENTORY,
          rows.map((row, i) => ({ __typename: 'Product', upc: productKeys[i], price: row.price, weight: row.weight })),
        ),
      })),
  ]);
  const nameById = byKey(names, authorKeys);
  const rowByUpc = byKey(details.rows, productKeys);
  const stockByUpc = byKey(details.stock, productKeys);
  const product = (upc: string) => {
    const stock = stockByUpc.get(upc)!;
    return { name: rowByUpc.get(upc)!.name, inStock: stock.inStock, shippingEstimate: stock.shippingEstimate };
  };
  return {
    users: users.map((user) => ({
      id: user.id,
      username: user.username,
      reviews: userReviews.get(user.id)!.reviews.map((review) => ({
        body: review.body,
        product: {
          upc: review.product.upc,
          reviews: review.product.reviews.map((inner) => ({
            id: inner.id,
            author: {
              name: nameById.get(inner.author.id)!.name,
              reviews: inner.author.reviews.map((last) => ({ body: last.body, product: product(last.product.upc) })),
            },
          })),
        },
      })),
    })),
    topProducts: top.map((p) => ({
      name: p.name,
      reviews: productReviews.get(p.upc)!.reviews.map((review) => ({
        body: review.body,
        author: {
          name: nameById.get(review.author.id)!.name,
          reviews: review.author.reviews.map((last) => ({ product: product(last.product.upc) })),
        },
      })),
    })),
  };
}

startFloor('TwoRoots', runPlan);
