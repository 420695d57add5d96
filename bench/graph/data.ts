/**
 * The benchmark's data set: products, users and reviews, generated
 * deterministically so every run (and every contender) sees the same bytes.
 * The subgraphs and the reference answer read the same lookups, so a wrong
 * answer always means wrong routing or merging, never different data.
 */

/** A product as the products subgraph owns it. */
export interface Product {
  readonly upc: string;
  readonly name: string;
  /** Cents. */
  readonly price: number;
  /** Grams. */
  readonly weight: number;
}

/** A user as the accounts subgraph owns it. */
export interface User {
  readonly id: string;
  readonly name: string;
  readonly username: string;
}

/** A review as the reviews subgraph owns it. */
export interface Review {
  readonly id: string;
  readonly body: string;
  readonly authorId: string;
  readonly productUpc: string;
}

/** Products in the catalogue; every one of them is some author's reviewed product. */
export const PRODUCT_COUNT = 50;
/** Reviews each product has. */
export const REVIEWS_PER_PRODUCT = 4;
/** Users; with 7 coprime to it, review k's author `(7k) mod USER_COUNT` gives every user the same number of reviews. */
export const USER_COUNT = 20;

const WORDS = [
  'sturdy',
  'light',
  'bright',
  'quiet',
  'solid',
  'cheap',
  'sleek',
  'handy',
  'smooth',
  'compact',
  'warm',
  'crisp',
  'simple',
  'heavy',
  'clever',
  'tidy',
  'rugged',
  'gentle',
  'steady',
  'lovely',
];
const NOUNS = ['Table', 'Couch', 'Chair', 'Lamp', 'Shelf', 'Desk', 'Stool', 'Bench', 'Rug', 'Clock'];
const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Radia', 'Ken'];
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'Backus', 'Perlman', 'Thompson'];

function sentence(seed: number, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(WORDS[(seed * 13 + i * 7) % WORDS.length]!);
  const text = parts.join(' ');
  return `${text[0]!.toUpperCase()}${text.slice(1)}.`;
}

function makeProducts(): Product[] {
  return Array.from({ length: PRODUCT_COUNT }, (_, i) => ({
    upc: `p${i + 1}`,
    name: `${WORDS[(i * 3) % WORDS.length]} ${NOUNS[i % NOUNS.length]}`,
    price: 500 + ((i * 137) % 1500),
    weight: 20 + ((i * 53) % 980),
  }));
}

function makeUsers(): User[] {
  return Array.from({ length: USER_COUNT }, (_, i) => ({
    id: `u${i + 1}`,
    name: `${FIRST[i % FIRST.length]} ${LAST[(i * 3) % LAST.length]}`,
    username: `@${FIRST[i % FIRST.length]!.toLowerCase()}${i + 1}`,
  }));
}

function makeReviews(products: readonly Product[]): Review[] {
  const reviews: Review[] = [];
  for (const [p, product] of products.entries()) {
    for (let j = 0; j < REVIEWS_PER_PRODUCT; j++) {
      const k = p * REVIEWS_PER_PRODUCT + j;
      reviews.push({ id: `r${k + 1}`, body: sentence(k, 13), authorId: `u${((7 * k) % USER_COUNT) + 1}`, productUpc: product.upc });
    }
  }
  return reviews;
}

const products = makeProducts();
const users = makeUsers();
const reviews = makeReviews(products);
const productByUpc = new Map(products.map((p) => [p.upc, p]));
const userById = new Map(users.map((u) => [u.id, u]));
const reviewsByProduct = groupBy(reviews, (r) => r.productUpc);
const reviewsByAuthor = groupBy(reviews, (r) => r.authorId);

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** The first `first` products of the catalogue (the products subgraph's `topProducts`). */
export function topProducts(first: number): readonly Product[] {
  return products.slice(0, Math.max(0, first));
}

export function productByUpcOrNull(upc: string): Product | null {
  return productByUpc.get(upc) ?? null;
}

export function userByIdOrNull(id: string): User | null {
  return userById.get(id) ?? null;
}

/** The first `first` users (the accounts subgraph's `users`, read by the two-root-field scenario). */
export function firstUsers(first: number): readonly User[] {
  return users.slice(0, Math.max(0, first));
}

export function reviewsOfProduct(upc: string): readonly Review[] {
  return reviewsByProduct.get(upc) ?? [];
}

export function reviewsByUser(id: string): readonly Review[] {
  return reviewsByAuthor.get(id) ?? [];
}

/** The inventory subgraph's stock flag. */
export function inStock(upc: string): boolean {
  return Number(upc.slice(1)) % 3 !== 0;
}

/**
 * The inventory subgraph's `@requires(fields: "price weight")` field: needs
 * both values from the products subgraph, so a router that forgets to send
 * them gets an error instead of a plausible number.
 */
export function shippingEstimate(price: unknown, weight: unknown): number {
  if (typeof price !== 'number' || typeof weight !== 'number') {
    throw new Error('shippingEstimate needs price and weight (@requires)');
  }
  return price > 1500 ? 0 : Math.round(weight / 2);
}
