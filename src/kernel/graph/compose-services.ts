/**
 * Composition of subgraph SDLs (@theguild/federation-composition), for
 * `switchyard compose` and for Cosmo execution configs the router composes
 * again when it loads them. The library follows the graph recursively: on a
 * very long chain of entity types it runs out of stack, and the bare
 * "Maximum call stack size exceeded" says nothing about why. That becomes a
 * composition error like any other, reported where the callers report them.
 */
import { composeServices as composeWithLibrary, type CompositionResult, type ServiceDefinition } from '@theguild/federation-composition';
import { GraphQLError, Kind, parse, visit, type DocumentNode } from 'graphql';

export function composeServices(services: ServiceDefinition[]): CompositionResult {
  try {
    return composeWithLibrary(services.map((service) => ({ ...service, typeDefs: withCosmoDefinitions(service.typeDefs) })));
  } catch (error) {
    if (!(error instanceof RangeError && /call stack/i.test(error.message))) throw error;
    const message = 'the graph nests types deeper than the composition library can follow (its stack ran out); split very long chains of entity types';
    return { errors: [new GraphQLError(message)] };
  }
}

/**
 * What Cosmo's composition supplies for a subgraph's SDL itself, so schemas
 * written for it (and the SDLs in its older execution configs) rely on it:
 * - the field resolver directive of gRPC services
 *   (`@connect__fieldResolver(context:)`, which `grpc-service generate`
 *   reads), defined where used and not defined; the supergraph does not
 *   keep it (it is not a composed directive);
 * - Federation v2 without `@link`: a subgraph that uses a directive only
 *   Federation v2 has (`@shareable`, `@override`, `@interfaceObject`, ...) is read as v2, so the
 *   `@link` importing the federation directives it uses is added. A subgraph
 *   with a federation `@link`, or defining those directives itself, is
 *   taken as it is; one using only v1 directives stays Federation v1.
 */
const COSMO_DEFINED = new Map([['connect__fieldResolver', 'directive @connect__fieldResolver(context: String!) on FIELD_DEFINITION']]);
// Not `@inaccessible` or `@tag`: Federation 1 subgraphs use them too, and reading one of those as v2 would change its rules (shareability).
const FEDERATION_V2_ONLY = new Set([
  'shareable',
  'override',
  'interfaceObject',
  'composeDirective',
  'authenticated',
  'requiresScopes',
  'policy',
  'context',
  'fromContext',
  'cost',
  'listSize',
]);
const FEDERATION_DIRECTIVES = new Set([...FEDERATION_V2_ONLY, 'key', 'external', 'requires', 'provides', 'extends', 'tag', 'inaccessible']);

function withCosmoDefinitions(document: DocumentNode): DocumentNode {
  const defined = new Set<string>();
  const used = new Set<string>();
  let federationLink = false;
  visit(document, {
    DirectiveDefinition: (node) => void defined.add(node.name.value),
    Directive: (node) => {
      used.add(node.name.value);
      if (node.name.value !== 'link') return;
      const url = node.arguments?.find((argument) => argument.name.value === 'url')?.value;
      if (url?.kind === Kind.STRING && url.value.includes('specs.apollo.dev/federation/')) federationLink = true;
    },
  });
  const added: string[] = [];
  for (const [name, definition] of COSMO_DEFINED) if (used.has(name) && !defined.has(name)) added.push(definition);
  const federation = [...used].filter((name) => FEDERATION_DIRECTIVES.has(name) && !defined.has(name));
  if (!federationLink && federation.some((name) => FEDERATION_V2_ONLY.has(name))) {
    added.push(`extend schema @link(url: "https://specs.apollo.dev/federation/v2.9", import: [${federation.map((name) => `"@${name}"`).join(', ')}])`);
  }
  if (added.length === 0) return document;
  return { ...document, definitions: [...document.definitions, ...parse(added.join('\n')).definitions] };
}
