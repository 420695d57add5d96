/**
 * `@defer` and `@stream` in the API schema. Clients built for incremental
 * delivery (Apollo Client, Relay) send them; without their definitions such
 * an operation fails validation ("Unknown directive"). The router accepts
 * them and answers the whole result at once, which the incremental delivery
 * proposal allows a server to do: the planner drops directives other than
 * `@skip`/`@include`, so subgraphs never see them. Definitions as the
 * proposal (and graphql-js 17) give them.
 */
import { DirectiveLocation, GraphQLBoolean, GraphQLDirective, GraphQLInt, GraphQLNonNull, GraphQLSchema, GraphQLString } from 'graphql';

const DEFER = new GraphQLDirective({
  name: 'defer',
  description: 'Accepted; Switchyard delivers the fragment with the rest of the result (no incremental delivery).',
  locations: [DirectiveLocation.FRAGMENT_SPREAD, DirectiveLocation.INLINE_FRAGMENT],
  args: {
    if: { type: new GraphQLNonNull(GraphQLBoolean), defaultValue: true },
    label: { type: GraphQLString },
  },
});

const STREAM = new GraphQLDirective({
  name: 'stream',
  description: 'Accepted; Switchyard delivers the whole list with the rest of the result (no incremental delivery).',
  locations: [DirectiveLocation.FIELD],
  args: {
    if: { type: new GraphQLNonNull(GraphQLBoolean), defaultValue: true },
    label: { type: GraphQLString },
    initialCount: { type: GraphQLInt, defaultValue: 0 },
  },
});

/** `schema` with `@defer` and `@stream` defined, unless it defines directives of those names itself. */
export function withIncrementalDirectives(schema: GraphQLSchema): GraphQLSchema {
  const missing = [DEFER, STREAM].filter((directive) => schema.getDirective(directive.name) === undefined);
  if (missing.length === 0) return schema;
  const config = schema.toConfig();
  return new GraphQLSchema({ ...config, directives: [...config.directives, ...missing] });
}
