/**
 * Composition of subgraph SDLs (@theguild/federation-composition), for
 * `switchyard compose` and for Cosmo execution configs the router composes
 * again when it loads them. The library follows the graph recursively: on a
 * very long chain of entity types it runs out of stack, and the bare
 * "Maximum call stack size exceeded" says nothing about why. That becomes a
 * composition error like any other, reported where the callers report them.
 */
import { composeServices as composeWithLibrary, type CompositionResult, type ServiceDefinition } from '@theguild/federation-composition';
import { GraphQLError } from 'graphql';

export function composeServices(services: ServiceDefinition[]): CompositionResult {
  try {
    return composeWithLibrary(services);
  } catch (error) {
    if (!(error instanceof RangeError && /call stack/i.test(error.message))) throw error;
    const message = 'the graph nests types deeper than the composition library can follow (its stack ran out); split very long chains of entity types';
    return { errors: [new GraphQLError(message)] };
  }
}
