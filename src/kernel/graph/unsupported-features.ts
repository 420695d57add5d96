/**
 * Federation features a supergraph can use that Switchyard does not
 * implement. Loading such a supergraph would serve wrong data silently, so it
 * is refused with `SUPERGRAPH_INVALID` naming the feature (and the field, for
 * join-spec features).
 */
import { Kind, type ConstDirectiveNode, type ConstValueNode, type DocumentNode } from 'graphql';
import { RouterError } from '../errors.js';
import { parseOverrideLabel } from './override-label.js';

/**
 * Throws for a `@join__field` on `owner` (`Type.field`) that needs a feature
 * the planner lacks: contextual arguments (`@context`/`@fromContext`), or a
 * progressive override label that is not a label (`percent(150)`).
 */
export function refuseUnsupportedJoinField(owner: string, directive: ConstDirectiveNode): void {
  const contextArguments = argument(directive, 'contextArguments');
  if (contextArguments && contextArguments.kind !== Kind.NULL && !(contextArguments.kind === Kind.LIST && contextArguments.values.length === 0)) {
    throw unsupported(`@fromContext/@context (contextArguments on ${owner}) is not supported`);
  }
  const label = argument(directive, 'overrideLabel');
  if (label?.kind !== Kind.STRING) return;
  const parsed = parseOverrideLabel(label.value);
  if (parsed.kind === 'malformed') {
    throw unsupported(`${owner}: @override label "${label.value}" is not a valid percent(x) with 0 <= x <= 100`);
  }
}

function argument(directive: ConstDirectiveNode, name: string) {
  return directive.arguments?.find((a) => a.name.value === name)?.value;
}

function unsupported(message: string): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', `invalid supergraph: ${message}`);
}

/**
 * The one list of the specs Switchyard implements, by identity and the
 * versions of it. The link spec (and Apollo Gateway's check) says a router
 * must refuse a schema that links a feature `for: EXECUTION` or
 * `for: SECURITY` it does not support: serving without it would answer
 * wrongly or without the security it asks for (Apollo Connectors' `connect`,
 * for instance, would be sent GraphQL at its placeholder URL). So such a
 * link to a spec or version missing here refuses the supergraph
 * (refuseUnsupportedLinkedFeatures). Links without `for:` (custom composed
 * directives, `tag`, `cost` as composers write them) are metadata and are
 * loaded whatever they are.
 * - link: the `@link`s themselves (canonical-imports.ts).
 * - join v0.2 to v0.5, what Apollo's and The Guild's composers write for
 *   Federation 2 (read-supergraph.ts); v0.1 was Federation 1's, with `@core`.
 * - inaccessible: the API schema (api-schema.ts).
 * - authenticated, requiresScopes, policy: the authorization plugin.
 * - context: used only through `@join__field(contextArguments:)`, which is
 *   refused field by field (refuseUnsupportedJoinField) with a message naming the field.
 * - tag, cost (`@cost`, `@listSize`): metadata, listed should a supergraph mark them for EXECUTION.
 */
export const SUPPORTED_FEATURES: ReadonlyMap<string, readonly string[]> = new Map([
  ['https://specs.apollo.dev/link', ['v1.0']],
  ['https://specs.apollo.dev/join', ['v0.2', 'v0.3', 'v0.4', 'v0.5']],
  ['https://specs.apollo.dev/inaccessible', ['v0.1', 'v0.2']],
  ['https://specs.apollo.dev/authenticated', ['v0.1']],
  ['https://specs.apollo.dev/requiresScopes', ['v0.1']],
  ['https://specs.apollo.dev/policy', ['v0.1']],
  ['https://specs.apollo.dev/context', ['v0.1']],
  ['https://specs.apollo.dev/tag', ['v0.1', 'v0.2', 'v0.3']],
  ['https://specs.apollo.dev/cost', ['v0.1']],
]);

/** Purposes whose unsupported features make a router refuse the schema. */
const REFUSED_PURPOSES = new Set(['EXECUTION', 'SECURITY']);
/** The link spec itself (and Federation 1's core spec), whose directive may be renamed with `as:`. */
const LINK_SPEC = /^https:\/\/specs\.apollo\.dev\/(link|core)\/v\d+\.\d+\/?$/;

/**
 * Throws for a `@link(url:, for: EXECUTION | SECURITY)` (or `@core(feature:, for:)`)
 * on the schema whose spec and version are not in SUPPORTED_FEATURES.
 */
export function refuseUnsupportedLinkedFeatures(document: DocumentNode): void {
  const links = document.definitions.flatMap((definition) =>
    definition.kind === Kind.SCHEMA_DEFINITION || definition.kind === Kind.SCHEMA_EXTENSION ? (definition.directives ?? []) : [],
  );
  const linkNames = new Set(['link', 'core']);
  for (const directive of links) {
    if (LINK_SPEC.test(featureUrl(directive) ?? '')) linkNames.add(directive.name.value);
  }
  for (const directive of links) {
    if (!linkNames.has(directive.name.value)) continue;
    const purpose = enumOrString(argument(directive, 'for'));
    if (purpose === undefined || !REFUSED_PURPOSES.has(purpose)) continue;
    const url = featureUrl(directive) ?? '';
    if (isSupported(url)) continue;
    throw unsupported(
      `feature ${url} is for: ${purpose} but is unsupported: Switchyard does not implement it and cannot serve this supergraph correctly without it ` +
        `(supported: ${[...SUPPORTED_FEATURES].map(([identity, versions]) => `${identity.slice(identity.lastIndexOf('/') + 1)} ${versions.join('/')}`).join(', ')})`,
    );
  }
}

function isSupported(url: string): boolean {
  const match = /^(.+)\/(v\d+\.\d+)\/?$/.exec(url.replace(/[?#].*$/, ''));
  return match !== null && (SUPPORTED_FEATURES.get(match[1]!)?.includes(match[2]!) ?? false);
}

function featureUrl(directive: ConstDirectiveNode): string | undefined {
  const value = argument(directive, 'url') ?? argument(directive, 'feature');
  return value?.kind === Kind.STRING ? value.value : undefined;
}

function enumOrString(value: ConstValueNode | undefined): string | undefined {
  return value?.kind === Kind.ENUM || value?.kind === Kind.STRING ? value.value : undefined;
}
