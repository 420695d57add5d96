import { Kind, print, type DocumentNode, type SelectionNode, type SelectionSetNode } from 'graphql';
import { RouterError } from '../errors.js';
import type { FederationIndex } from '../graph/federation-index.js';
import type { FetchGroup } from './fetch-group.js';
import { normalizeOperation, selectOperation, type NormalizedOperation } from './normalize.js';
import { batchFetchNode } from './batch-node.js';
import { batchFetchGroups, mergeFetchGroups } from './merge-fetches.js';
import { Planner } from './planner.js';
import type { FetchEntry, FetchNode, PlanNode, QueryPlan, RepresentationField, RepresentationSpec } from './query-plan.js';
import { REPRESENTATIONS_VARIABLE, representationsVariableFor } from './representations-variable.js';

/** Options of `buildQueryPlan`. */
export interface BuildPlanOptions {
  /**
   * Merge entity fetches to one subgraph of one wave into one call
   * (merge-fetches.ts). Default true; off only to compare against the
   * one-call-per-path plan in tests and benchmarks.
   */
  readonly mergeFetches?: boolean;
}

/**
 * Plans one operation of a document for a supergraph. `conditions` are the
 * values of the variables that `@skip`/`@include` read: they are part of the
 * plan's identity, so the plan holds only what will be fetched.
 */
export function buildQueryPlan(
  index: FederationIndex,
  document: DocumentNode,
  operationName: string | undefined | null,
  conditions: Readonly<Record<string, unknown>> = {},
  options: BuildPlanOptions = {},
): QueryPlan {
  const definition = selectOperation(document, operationName);
  const { rootTypes } = index.supergraph;
  const rootType = definition.operation === 'mutation' ? rootTypes.mutation : definition.operation === 'subscription' ? rootTypes.subscription : rootTypes.query;
  // Never another root type in its place: a mutation planned on Query would run Query's fields as a mutation.
  if (rootType === undefined) {
    throw new RouterError('GRAPHQL_VALIDATION_FAILED', `Schema is not configured to execute ${definition.operation} operation.`, { status: 400 });
  }
  const operation = normalizeOperation(document, definition, rootType, conditions, {
    isObjectType: (name) => index.type(name)?.kind === 'OBJECT',
    fieldType: (parent, field) => index.fieldNamedType(parent, field),
    satisfies: (objectType, condition) => index.satisfies(objectType, condition),
  });
  const planned = new Planner(index, operation).plan();
  const { groups, batches } = options.mergeFetches === false ? { groups: planned.groups, batches: undefined } : batchFetchGroups(mergeFetchGroups(index, planned.groups));
  const fetches = groups.map((group) => {
    const parts = batches?.get(group);
    return parts
      ? batchFetchNode(
          parts.map((part) => toFetchNode(part, operation)),
          operation,
        )
      : toFetchNode(group, operation);
  });
  const byGroup = new Map(groups.map((group, i) => [group, fetches[i]!]));
  return {
    kind: 'QueryPlan',
    node: arrangeNodes(groups, byGroup, operation.operationType === 'mutation'),
    fetches,
    operation,
    introspection: planned.introspectionFields.length > 0 ? introspectionDocument(document, operation) : undefined,
  };
}

function toFetchNode(group: FetchGroup, operation: NormalizedOperation): FetchNode {
  const selectionSet = group.tree.print();
  const used = group.tree.collectVariables(new Set());
  const variableDefinitions = operation.variableDefinitions.filter((d) => used.has(d.variable.name.value)).map((d) => print(d));
  const name = operation.name ? `${operation.name}__${sanitize(group.subgraph)}__${group.id}` : undefined;
  // Entity fetches: `$representations`, unless the client's own variable of that name is sent too.
  const representationsVariable = group.kind === 'entity' ? representationsVariableFor(used) : undefined;
  let text: string;
  if (representationsVariable) {
    const variables = [`$${representationsVariable}: [_Any!]!`, ...variableDefinitions].join(', ');
    text = `query${name ? ` ${name}` : ''}(${variables}) { _entities(representations: $${representationsVariable}) ${selectionSet} }`;
  } else {
    const variables = variableDefinitions.length > 0 ? `(${variableDefinitions.join(', ')})` : '';
    const head = `${group.operationType}${name ? ` ${name}` : ''}${variables}`;
    text = head === 'query' ? selectionSet : `${head} ${selectionSet}`;
  }
  return {
    kind: 'Fetch',
    id: group.id,
    subgraph: group.subgraph,
    fetchKind: group.kind,
    operationType: group.operationType,
    operation: text,
    operationName: name,
    selectionSet,
    variableUsages: [...used],
    mergePath: group.mergePath,
    representations: group.kind === 'entity' ? representationsOf(group) : undefined,
    // Set only when renamed, so plans without a collision stay as they were.
    ...(representationsVariable && representationsVariable !== REPRESENTATIONS_VARIABLE ? { representationsVariable } : {}),
    ...(group.mergedWith.length > 0 ? { entries: [group, ...group.mergedWith].map(entryOf) } : {}),
    ...(group.aliases.length > 0 ? { aliases: group.aliases } : {}),
    ...(group.kind === 'root' ? { rootFields: [...group.tree.fields.keys()].filter((key) => key !== '__typename') } : {}),
  };
}

function entryOf(group: FetchGroup): FetchEntry {
  return { path: group.mergePath, representations: [...group.representations.values()].map((r) => r.build()) };
}

/** A merged fetch's representations: per type, the union of its entries' fields (what the call may carry). */
function representationsOf(group: FetchGroup): RepresentationSpec[] {
  const own = [...group.representations.values()].map((r) => r.build());
  if (group.mergedWith.length === 0) return own;
  const byType = new Map<string, { spec: RepresentationSpec; fields: RepresentationField[] }>();
  for (const spec of [own, ...group.mergedWith.map((g) => entryOf(g).representations)].flat()) {
    const known = byType.get(spec.typeCondition);
    if (!known) {
      byType.set(spec.typeCondition, { spec, fields: [...spec.fields] });
      continue;
    }
    for (const field of spec.fields) {
      if (!known.fields.some((f) => f.name === field.name && f.responseKey === field.responseKey)) known.fields.push(field);
    }
  }
  return [...byType.values()].map(({ spec, fields }) => ({ ...spec, fields }));
}

function sanitize(name: string): string {
  return name.replace(/[^_0-9A-Za-z]/g, '_');
}

/**
 * Turns the dependency graph of fetch groups into a Sequence/Parallel tree:
 * a group with one dependency runs right after it (in parallel with its
 * siblings); a group waiting for several runs after their closest common
 * ancestor's subtree.
 */
function arrangeNodes(groups: readonly FetchGroup[], nodes: ReadonlyMap<FetchGroup, FetchNode>, sequential: boolean): PlanNode | undefined {
  if (groups.length === 0) return undefined;
  const present = new Set(groups);
  const owner = new Map<FetchGroup, FetchGroup | undefined>();
  const children = new Map<FetchGroup | undefined, FetchGroup[]>();
  const joins = new Map<FetchGroup | undefined, FetchGroup[]>();
  const ancestors = (group: FetchGroup | undefined): Array<FetchGroup | undefined> => {
    const chain: Array<FetchGroup | undefined> = [];
    let current = group;
    while (current) {
      chain.push(current);
      current = owner.get(current);
    }
    chain.push(undefined);
    return chain;
  };
  for (const group of topological(groups)) {
    const dependencies = [...group.dependsOn].filter((d) => present.has(d));
    if (dependencies.length === 0) {
      owner.set(group, undefined);
      push(children, undefined, group);
    } else if (dependencies.length === 1) {
      owner.set(group, dependencies[0]);
      push(children, dependencies[0], group);
    } else {
      const chains = dependencies.map((d) => ancestors(d));
      const common = chains[0]!.find((candidate) => chains.every((chain) => chain.includes(candidate)));
      owner.set(group, common);
      push(joins, common, group);
    }
  }
  const build = (group: FetchGroup | undefined): PlanNode | undefined => {
    const parts: PlanNode[] = [];
    if (group) {
      const fetch = nodes.get(group)!;
      if (fetch.fetchKind !== 'entity') parts.push(fetch);
      else if (fetch.parts) parts.push({ kind: 'Flatten', path: fetch.mergePath, paths: fetch.parts.flatMap(pathsOf), node: fetch });
      else if (fetch.entries) parts.push({ kind: 'Flatten', path: fetch.mergePath, paths: pathsOf(fetch), node: fetch });
      else parts.push({ kind: 'Flatten', path: fetch.mergePath, node: fetch });
    }
    const childNodes = (children.get(group) ?? []).map(build).filter((n): n is PlanNode => !!n);
    if (group === undefined && sequential) parts.push(...childNodes);
    else if (childNodes.length > 0) parts.push(parallel(childNodes));
    for (const layer of layers(joins.get(group) ?? [])) {
      parts.push(parallel(layer.map(build).filter((n): n is PlanNode => !!n)));
    }
    if (parts.length === 0) return undefined;
    return parts.length === 1 ? parts[0] : { kind: 'Sequence', nodes: flattenSequences(parts) };
  };
  return build(undefined);
}

function pathsOf(fetch: FetchNode): Array<readonly string[]> {
  return fetch.entries ? fetch.entries.map((e) => e.path) : [fetch.mergePath];
}

function parallel(nodes: PlanNode[]): PlanNode {
  return nodes.length === 1 ? nodes[0]! : { kind: 'Parallel', nodes };
}

function flattenSequences(nodes: PlanNode[]): PlanNode[] {
  return nodes.flatMap((n) => (n.kind === 'Sequence' ? n.nodes : [n]));
}

/** Groups of joins that can run together: each layer waits only for earlier ones. */
function layers(groups: readonly FetchGroup[]): FetchGroup[][] {
  const remaining = [...groups];
  const result: FetchGroup[][] = [];
  while (remaining.length > 0) {
    const layer = remaining.filter((g) => !remaining.some((other) => other !== g && g.dependsOnTransitively(other)));
    result.push(layer);
    for (const g of layer) remaining.splice(remaining.indexOf(g), 1);
  }
  return result;
}

function topological(groups: readonly FetchGroup[]): FetchGroup[] {
  const done = new Set<FetchGroup>();
  const order: FetchGroup[] = [];
  const visit = (group: FetchGroup): void => {
    if (done.has(group)) return;
    done.add(group);
    for (const dependency of group.dependsOn) visit(dependency);
    order.push(group);
  };
  for (const group of groups) visit(group);
  return order.filter((g) => groups.includes(g));
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The client document cut down to its introspection root fields, to run against the API schema. */
function introspectionDocument(document: DocumentNode, operation: NormalizedOperation): DocumentNode {
  const keep = (set: SelectionSetNode): SelectionSetNode => ({
    ...set,
    selections: set.selections.flatMap((selection): SelectionNode[] => {
      if (selection.kind === Kind.FIELD) return selection.name.value === '__schema' || selection.name.value === '__type' ? [selection] : [];
      if (selection.kind === Kind.INLINE_FRAGMENT) return [{ ...selection, selectionSet: keep(selection.selectionSet) }];
      const fragment = operation.fragments.get(selection.name.value);
      return fragment ? [{ kind: Kind.INLINE_FRAGMENT, typeCondition: fragment.typeCondition, directives: selection.directives, selectionSet: keep(fragment.selectionSet) }] : [];
    }),
  });
  return {
    kind: Kind.DOCUMENT,
    definitions: [...document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION), { ...operation.definition, selectionSet: keep(operation.definition.selectionSet) }],
  };
}
