/**
 * The expected answer, computed without any router: graphql-js executes the
 * operation against the supergraph's public schema with resolvers reading
 * `data.ts` directly (one schema, no entity jumps). Every contender's
 * response must deep-equal it.
 */
import { transformSupergraphToPublicSchema } from '@theguild/federation-composition';
import { buildASTSchema, execute, parse, type GraphQLFieldResolver } from 'graphql';
import {
  firstUsers,
  inStock,
  productByUpcOrNull,
  reviewsByUser,
  reviewsOfProduct,
  shippingEstimate,
  topProducts,
  userByIdOrNull,
  type Product,
  type Review,
  type User,
} from './data.js';

type Resolver = (source: never, args: Record<string, unknown>) => unknown;

const resolvers: Readonly<Record<string, Resolver>> = {
  'Query.topProducts': (_: unknown, args) => topProducts(Number(args.first)),
  'Query.product': (_: unknown, args) => productByUpcOrNull(String(args.upc)),
  'Query.user': (_: unknown, args) => userByIdOrNull(String(args.id)),
  'Query.users': (_: unknown, args) => firstUsers(Number(args.first)),
  'Product.inStock': (product: Product) => inStock(product.upc),
  'Product.shippingEstimate': (product: Product) => shippingEstimate(product.price, product.weight),
  'Product.reviews': (product: Product) => reviewsOfProduct(product.upc),
  'User.reviews': (user: User) => reviewsByUser(user.id),
  'Review.author': (review: Review) => userByIdOrNull(review.authorId),
  'Review.product': (review: Review) => productByUpcOrNull(review.productUpc),
};

const fieldResolver: GraphQLFieldResolver<unknown, unknown> = (source, args, _context, info) => {
  const resolver = resolvers[`${info.parentType.name}.${info.fieldName}`];
  if (resolver) return resolver(source as never, args);
  return (source as Record<string, unknown>)[info.fieldName];
};

/** The exact response body a correct router sends for `query` with `variables`. */
export async function referenceResponse(supergraphSdl: string, query: string, variables: Record<string, unknown>): Promise<string> {
  const schema = buildASTSchema(transformSupergraphToPublicSchema(parse(supergraphSdl)));
  const result = await execute({ schema, document: parse(query), variableValues: variables, fieldResolver });
  if (result.errors) throw new Error(`the reference execution failed: ${result.errors.map((e) => e.message).join('; ')}`);
  return JSON.stringify({ data: result.data });
}
