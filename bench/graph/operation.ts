/**
 * The benchmark operation: top products -> their reviews -> the authors ->
 * the authors' reviews -> those reviews' products, with the `@requires`
 * field at both product levels. With `first: 10` the response is about
 * 89 KB. The minimal plan is 6 fetches:
 *
 *   products(root) -> [inventory(top products), reviews(top products)]
 *   reviews -> [accounts(authors), products(nested) -> inventory(nested)]
 *
 * The nested products ask for `shippingEstimate` but not `weight`: a router
 * must fetch `weight` for `@requires` and still leave it out of the answer.
 */
export const BENCH_QUERY = /* GraphQL */ `query TopProducts($first: Int!) {
  topProducts(first: $first) {
    upc
    name
    price
    weight
    inStock
    shippingEstimate
    reviews {
      id
      body
      author {
        id
        name
        username
        reviews {
          id
          body
          product {
            upc
            name
            price
            inStock
            shippingEstimate
          }
        }
      }
    }
  }
}`;

export const BENCH_OPERATION_NAME = 'TopProducts';

export const BENCH_VARIABLES: Readonly<Record<string, unknown>> = { first: 10 };

/** The client request body, as every contender receives it. */
export function benchRequestBody(): string {
  return JSON.stringify({ query: BENCH_QUERY, operationName: BENCH_OPERATION_NAME, variables: BENCH_VARIABLES });
}
