import { RouterError, type GraphQLErrorJSON } from '../errors.js';
import type { EntityCallPart, JsonObject, SubgraphRequest, SubgraphResponse } from '../fetch/subgraph-types.js';
import { representationVariables } from '../plan/batch-node.js';
import type { FetchNode, PlanNode, QueryPlan } from '../plan/query-plan.js';
import { scheduleParallel, type MergedFetch } from './multi-fetch.js';
import { restoreAliases } from './restore-aliases.js';
import { collectFetchBatch, entryFetches } from './merged-batch.js';
import { partIndexOf, partVariableDefinitions, withEntityParts } from './batch-call.js';
import type { EntityBatch } from './representations.js';
import { ResponseTree } from './response-tree.js';
import { SharedAnswers, type AnswerTrace } from './shared-answers.js';
import { subgraphErrorPolicy, type ErrorPathMapper, type SubgraphErrorPolicy } from './subgraph-errors.js';
import { EntityPositions, entityErrorPath, rootErrorPath, wholeLookupErrorPath } from './error-positions.js';
import type { SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import { representationsVariableOf } from '../plan/representations-variable.js';
import { setOwn } from '../own-property.js';

/** A subgraph call as the executor describes it; the kernel adds headers and runs the fetch stage. */
export type FetchCall = Omit<SubgraphRequest, 'headers'>;

/** Runs one subgraph call (fetch stage hooks, then the transport). */
export type FetchRunner = (call: FetchCall) => Promise<SubgraphResponse>;

/** Everything fetched for one request, before it is shaped into the response. */
export interface ExecutionOutcome {
  readonly tree: ResponseTree;
  readonly errors: GraphQLErrorJSON[];
  /** The answers the tree was built from, when work derived from them may be shared (see shared-answers.ts). */
  readonly trace: AnswerTrace | undefined;
}

/** Options of `executePlan`. */
export interface ExecuteOptions {
  /** Client variables (forwarded as sent). */
  readonly variables: Readonly<Record<string, unknown>>;
  readonly runFetch: FetchRunner;
  /** Whether an object of a runtime type matches a type condition. */
  readonly satisfies: (typename: string, condition: string) => boolean;
  /** Whether a type name is an object type (not an interface reported by an interface object). */
  readonly isObjectType: (typename: string) => boolean;
  /** Merge entity fetches to one subgraph in one parallel wave (`engine.enable_multi_fetch`). */
  readonly multiFetch?: boolean;
  /**
   * Mutations: whether the response's data is lost once the given root
   * fields are in (a non-null one null, sent so or nulled by a non-null
   * field below it that another fetch failed). The fields after them are
   * then not run: their side effects must not happen once the data is lost,
   * as in graphql-js. Absent when no root field is non-null.
   */
  readonly mutationDataLost?: (tree: ResponseTree, rootKeys: readonly string[]) => boolean;
  /** `subgraph_error_propagation`: what of subgraph errors reaches clients. Default: the config's defaults. */
  readonly subgraphErrors?: SubgraphErrorPropagationConfig;
}

/**
 * Walks a plan: Sequence nodes in order, Parallel nodes together, each
 * Fetch through `runFetch`. A failed fetch becomes an error; the rest of the
 * plan still runs, and what it could not fetch ends up null.
 */
export async function executePlan(plan: QueryPlan, options: ExecuteOptions): Promise<ExecutionOutcome> {
  const tree = new ResponseTree();
  const errors: GraphQLErrorJSON[] = [];
  if (!plan.node) return { tree, errors, trace: undefined };
  const walker = new PlanWalker(tree, errors, options, plan.operation.operationType !== 'mutation');
  if (plan.operation.operationType === 'mutation' && plan.node.kind === 'Sequence') await walker.runMutationSteps(plan.node.nodes);
  else await walker.run(plan.node);
  return { tree, errors, trace: walker.trace };
}

/** Entity fetches prepared from identical answers, shared between the requests that got them. */
const preparedFetches = new SharedAnswers<FetchNode, PreparedEntityFetch>();

/** An entity fetch ready to send: its node and its representations. */
interface PreparedEntityFetch {
  readonly node: FetchNode;
  readonly batch: EntityBatch;
  /** The fetch's variables when it uses no client variable: one object, so its JSON is made once too. */
  variables?: Record<string, unknown>;
}

class PlanWalker {
  /** Root fetches run so far (mutation steps check their fields). */
  private readonly completedRoots: FetchNode[] = [];
  /** Answers in arrival order; undefined once one of them makes the tree this request's own. */
  trace: SubgraphResponse[] | undefined;
  private readonly errorPolicy: SubgraphErrorPolicy;

  constructor(
    private readonly tree: ResponseTree,
    private readonly errors: GraphQLErrorJSON[],
    private readonly options: ExecuteOptions,
    shareable: boolean,
  ) {
    this.trace = shareable ? [] : undefined;
    this.errorPolicy = subgraphErrorPolicy(options.subgraphErrors);
  }

  /** The errors of one subgraph answer, as the policy lets clients see them (callers skip answers without errors). */
  private reportErrors(subgraph: string, errors: NonNullable<SubgraphResponse['errors']>, clientPath: ErrorPathMapper, fetchPath?: readonly string[]): void {
    this.errorPolicy.report(this.errors, subgraph, errors, clientPath, fetchPath);
  }

  /** Records an answer: the tree now depends on it (or on a copy of it, which nobody shares). */
  private received(response: SubgraphResponse | undefined, rewritten: boolean): void {
    if (!this.trace) return;
    if (response === undefined || rewritten) this.trace = undefined;
    else this.trace.push(response);
  }

  /**
   * Runs mutation steps in order: each root fetch, then the entity fetches
   * its fields need. Before the next root fetch, the fields run so far are
   * checked, their entity fetches included; once the data is lost, nothing
   * after runs.
   */
  async runMutationSteps(steps: readonly PlanNode[]): Promise<void> {
    const dataLost = this.options.mutationDataLost;
    let unchecked: string[] = [];
    for (const step of steps) {
      if (dataLost && unchecked.length > 0 && step.kind === 'Fetch' && step.fetchKind !== 'entity') {
        if (dataLost(this.tree, unchecked)) return;
        unchecked = [];
      }
      const before = this.completedRoots.length;
      await this.run(step);
      for (const root of this.completedRoots.slice(before)) unchecked.push(...(root.rootFields ?? []));
    }
  }

  async run(node: PlanNode): Promise<void> {
    switch (node.kind) {
      case 'Sequence':
        for (const child of node.nodes) await this.run(child);
        return;
      case 'Parallel': {
        if (!this.options.multiFetch) {
          await Promise.all(node.nodes.map((child) => this.run(child)));
          return;
        }
        const schedule = scheduleParallel(node);
        await Promise.all([...schedule.merged.map((m) => this.runMerged(m)), ...schedule.rest.map((child) => this.run(child))]);
        return;
      }
      case 'Flatten':
        return this.runEntityFetch(node.node);
      case 'Fetch':
        return node.fetchKind === 'entity' ? this.runEntityFetch(node) : this.runRootFetch(node);
    }
  }

  private variablesFor(usages: readonly string[]): Record<string, unknown> {
    const variables: Record<string, unknown> = {};
    const source = this.options.variables;
    for (const name of usages) if (Object.hasOwn(source, name)) setOwn(variables, name, source[name]);
    return variables;
  }

  private async runRootFetch(node: FetchNode): Promise<void> {
    this.completedRoots.push(node);
    const response = await this.fetchRoot(node, {
      subgraph: node.subgraph,
      kind: 'root',
      operationType: node.operationType,
      query: node.operation,
      operationName: node.operationName,
      variables: this.variablesFor(node.variableUsages),
      representations: undefined,
      selectionSet: node.selectionSet,
      fetchId: node.id,
    });
    this.received(response, node.aliases !== undefined);
    if (!response) return;
    if (response.errors?.length) this.reportErrors(node.subgraph, response.errors, (error) => rootErrorPath(error.path, node.aliases));
    const data = node.aliases ? (restoreAliases(response.data, node.aliases, this.options.satisfies) as SubgraphResponse['data']) : response.data;
    if (data === undefined || data === null) {
      // No data and no word why: say so at each root field rather than leave silent nulls.
      if (!response.errors?.length) for (const key of rootKeys(node)) this.errors.push(invalidResponse(node.subgraph, 'it sent no data and no errors', [key]));
      return;
    }
    if (typeof data !== 'object' || Array.isArray(data)) {
      for (const key of rootKeys(node)) this.errors.push(invalidResponse(node.subgraph, 'its "data" is not an object', [key]));
      return;
    }
    this.tree.addRoot(data);
  }

  /** A root fetch that fails answers with one error per root field it was to fill, each at its path. */
  private async fetchRoot(node: FetchNode, call: FetchCall): Promise<SubgraphResponse | undefined> {
    try {
      return await this.options.runFetch(call);
    } catch (error) {
      const keys = rootKeys(node);
      if (keys.length === 0) this.errors.push(fetchFailure(error, node.subgraph, []));
      for (const key of keys) this.errors.push(fetchFailure(error, node.subgraph, [key]));
      return undefined;
    }
  }

  private prepare(node: FetchNode): PreparedEntityFetch | undefined {
    const trace = this.trace;
    if (trace && trace.length > 0) {
      const shared = preparedFetches.get(node, trace);
      if (shared) return shared;
    }
    const batch = collectFetchBatch(this.tree, node, this.options);
    if (!batch) return undefined;
    const prepared: PreparedEntityFetch = { node, batch };
    if (trace && trace.length > 0) preparedFetches.set(node, trace, prepared);
    return prepared;
  }

  private async runEntityFetch(node: FetchNode): Promise<void> {
    if (node.parts) return this.runBatch(node, node.parts);
    const prepared = this.prepare(node);
    if (prepared) await this.runPrepared(prepared);
  }

  /** The variables an entity fetch sends alone: the client variables it reads and `representations` (made once when it reads none). */
  private variablesOf(prepared: PreparedEntityFetch): Record<string, unknown> {
    if (prepared.variables) return prepared.variables;
    const variables = this.variablesFor(prepared.node.variableUsages);
    variables[representationsVariableOf(prepared.node)] = prepared.batch.representations;
    if (prepared.node.variableUsages.length === 0) prepared.variables = variables;
    return variables;
  }

  private async runPrepared(prepared: PreparedEntityFetch): Promise<void> {
    const { node, batch } = prepared;
    const response = await this.fetch(prepared, {
      subgraph: node.subgraph,
      kind: 'entity',
      operationType: 'query',
      query: node.operation,
      operationName: node.operationName,
      variables: this.variablesOf(prepared),
      representations: batch.representations,
      ...(node.representationsVariable ? { representationsVariable: node.representationsVariable } : {}),
      selectionSet: node.selectionSet,
      fetchId: node.id,
    });
    if (node.entries && failedWhole(response, noEntity(response?.data?._entities), (field) => field === '_entities')) {
      // Several paths shared the call, and one bad entity failed it all: each path is asked again alone, so only its own fail.
      const alone = entryFetches(this.tree, node, this.options);
      if (alone.length > 1) {
        this.trace = undefined;
        await Promise.all(alone.map((entry) => this.runPrepared(entry)));
        return;
      }
    }
    this.received(response, node.aliases !== undefined);
    if (!response) return;
    if (response.errors?.length) {
      const positions = this.positions(prepared);
      const noList = !Array.isArray(response.data?._entities);
      this.reportErrors(
        node.subgraph,
        response.errors,
        (error) => entityErrorPath(error, '_entities', positions) ?? (noList ? wholeLookupErrorPath(error, '_entities', positions) : undefined),
        sharedPath([node]),
      );
    }
    this.mergeEntities(prepared, response.data?._entities);
  }

  /** Where the errors of `prepared`'s answer go (each entity's positions, found only when an error needs them). */
  private positions({ node, batch }: PreparedEntityFetch): EntityPositions {
    return new EntityPositions(this.tree, node, batch, this.options.satisfies);
  }

  /**
   * A batched call: the parts with objects to look up go out as one request
   * of aliased `_entities` fields (a lone one as a call of its own), and
   * each part's answer is read as if it had been sent alone.
   */
  private async runBatch(node: FetchNode, parts: readonly FetchNode[]): Promise<void> {
    const sent: Array<{ prepared: PreparedEntityFetch; part: EntityCallPart }> = [];
    const variableNames = representationVariables(parts.length, node.variableUsages);
    parts.forEach((partNode, i) => {
      const prepared = this.prepare(partNode);
      if (!prepared) return;
      const part: EntityCallPart = {
        alias: `_${i}`,
        variable: variableNames[i]!,
        selectionSet: partNode.selectionSet,
        representations: prepared.batch.representations,
        variables: this.variablesOf(prepared),
        ...(partNode.representationsVariable ? { representationsVariable: partNode.representationsVariable } : {}),
        variableDefinitions: partVariableDefinitions(node, partNode),
        fetchId: partNode.id,
      };
      sent.push({ prepared, part });
    });
    if (sent.length === 0) return;
    if (sent.length === 1) return this.runPrepared(sent[0]!.prepared);
    const base: FetchCall = {
      subgraph: node.subgraph,
      kind: 'entity',
      operationType: 'query',
      query: node.operation,
      operationName: node.operationName,
      variables: {},
      representations: undefined,
      selectionSet: node.selectionSet,
      fetchId: node.id,
    };
    const call = withEntityParts(
      base,
      sent.map((s) => s.part),
    );
    let response: SubgraphResponse | undefined;
    try {
      response = await this.options.runFetch(call);
    } catch (error) {
      // As the parts alone would have: an error at each of their positions.
      for (const { prepared } of sent) this.failedAt(this.positions(prepared), (path) => fetchFailure(error, node.subgraph, path));
    }
    if (failedWhole(response, response?.data, (field) => partIndexOf(field) !== undefined)) {
      // `_entities` is non-null: one part failing nulls the whole answer. Each part is asked again alone, so only its own fail.
      this.trace = undefined;
      await Promise.all(sent.map(({ prepared }) => this.runPrepared(prepared)));
      return;
    }
    this.received(
      response,
      sent.some((s) => s.prepared.node.aliases !== undefined),
    );
    if (!response) return;
    const byAlias = new Map(sent.map((s) => [s.part.alias, s.prepared]));
    if (response.errors?.length) {
      const positions: Record<string, EntityPositions> = {};
      this.reportErrors(
        node.subgraph,
        response.errors,
        (error) => {
          const alias = error.path?.[0];
          const prepared = partIndexOf(alias) === undefined ? undefined : byAlias.get(alias as string);
          return prepared ? entityErrorPath(error, alias as string, (positions[alias as string] ??= this.positions(prepared))) : undefined;
        },
        sharedPath(sent.map((s) => s.prepared.node)),
      );
    }
    for (const { prepared, part } of sent) this.mergeEntities(prepared, response.data?.[part.alias]);
  }

  /** Several entity fetches to one subgraph as one request; each part is merged back as if sent alone. */
  private async runMerged(merged: MergedFetch): Promise<void> {
    const parts = merged.nodes.map((node) => this.prepare(node));
    const present = parts.filter((p): p is PreparedEntityFetch => p !== undefined);
    if (present.length === 0) return;
    if (present.length === 1) {
      await this.runEntityFetch(present[0]!.node);
      return;
    }
    // One answer for several fetches: not worth tracing.
    this.trace = undefined;
    const variables = this.variablesFor(merged.variableUsages);
    const representations: JsonObject[] = [];
    parts.forEach((part, i) => {
      variables[merged.representationVariables[i]!] = part?.batch.representations ?? [];
      if (part) representations.push(...part.batch.representations);
    });
    const response = await this.fetch(present, {
      subgraph: merged.subgraph,
      kind: 'entity',
      operationType: 'query',
      query: merged.operation,
      operationName: undefined,
      variables,
      representations,
      selectionSet: merged.selectionSet,
      fetchId: merged.nodes[0]!.id,
      merged: true,
    });
    if (!response) return;
    // One request, one answer: its errors are reported once, each at the path of the part it belongs to.
    if (response.errors?.length) {
      const positions: EntityPositions[] = [];
      this.reportErrors(
        merged.subgraph,
        response.errors,
        (error) => {
          const field = error.path?.[0];
          const n = typeof field === 'string' && /^_e\d+$/.test(field) ? Number(field.slice(2)) : undefined;
          // Only the field the router sent (`_e0`, never `_e00`): each part has one set of positions, and one copy budget.
          const part = n !== undefined && field === `_e${n}` ? parts[n] : undefined;
          return part ? entityErrorPath(error, field as string, (positions[n!] ??= this.positions(part))) : undefined;
        },
        sharedPath(present.map((p) => p.node)),
      );
    }
    parts.forEach((part, i) => {
      if (part) this.mergeEntities(part, response.data?.[`_e${i}`]);
    });
  }

  private mergeEntities(prepared: PreparedEntityFetch, results: unknown): void {
    const { node, batch } = prepared;
    if (results === undefined || results === null) return;
    if (!Array.isArray(results) || results.length !== batch.representations.length) {
      const reason = Array.isArray(results) ? `it returned ${results.length} entities for ${batch.representations.length} representations` : '"_entities" is not a list';
      this.failedAt(this.positions(prepared), (path) => invalidResponse(node.subgraph, reason, path));
      return;
    }
    const { tree, options } = this;
    tree.later(() => {
      for (let i = 0; i < results.length; i++) {
        const result: unknown = node.aliases ? restoreAliases(results[i], node.aliases, options.satisfies) : results[i];
        if (result === null || typeof result !== 'object' || Array.isArray(result)) continue;
        for (const target of batch.targets[i]!) tree.attach(target, result as JsonObject);
      }
    });
  }

  /** Runs an entity fetch for `prepared`; a thrown error becomes a GraphQL error at each of their positions, and an absent answer. */
  private async fetch(prepared: PreparedEntityFetch | readonly PreparedEntityFetch[], call: FetchCall): Promise<SubgraphResponse | undefined> {
    try {
      return await this.options.runFetch(call);
    } catch (error) {
      for (const each of Array.isArray(prepared) ? prepared : [prepared]) this.failedAt(this.positions(each), (path) => fetchFailure(error, call.subgraph, path));
      return undefined;
    }
  }

  /** One error (made by `errorAt`) at each position a fetch was to fill. */
  private failedAt(positions: EntityPositions, errorAt: (path: ReadonlyArray<string | number>) => GraphQLErrorJSON): void {
    for (const path of positions.all()) this.errors.push(errorAt(path));
  }
}

/**
 * Whether a subgraph answered a shared entity call with nothing at all where
 * the entities go (`answer` null or absent) and an error at an `_entities`
 * field (`entitiesField` tells which): the field failed, which one entity of
 * one part can cause for every part. A failure of the whole request (no
 * response, an HTTP error status, errors without such a path: overload, a
 * refused token) is not one: asking again per part would fail the same, and
 * multiply the calls to a subgraph already in trouble.
 */
function failedWhole(response: SubgraphResponse | undefined, answer: unknown, entitiesField: (field: unknown) => boolean): boolean {
  if (response === undefined || (answer !== null && answer !== undefined)) return false;
  return response.errors?.some((error) => entitiesField(error.path?.[0])) ?? false;
}

/**
 * A merged call's `_entities` with no entity in it as null: a subgraph that
 * looks entities up in batches (a gRPC lookup RPC) answers a list of nulls
 * when the one batch holding every path's keys failed.
 */
function noEntity(answer: unknown): unknown {
  return Array.isArray(answer) && answer.length > 0 && answer.every((entity) => entity === null) ? null : answer;
}

function rootKeys(node: FetchNode): readonly string[] {
  return node.rootFields ?? [];
}

function fetchFailure(error: unknown, subgraph: string, path: ReadonlyArray<string | number>): GraphQLErrorJSON {
  const routerError =
    error instanceof RouterError ? error : new RouterError('SUBGRAPH_REQUEST_FAILED', `Request to subgraph "${subgraph}" failed: ${(error as Error)?.message ?? String(error)}`);
  const json: GraphQLErrorJSON = { message: routerError.message, extensions: { code: routerError.code, serviceName: subgraph } };
  if (path.length > 0) json.path = [...path];
  return json;
}

function invalidResponse(subgraph: string, reason: string, path: ReadonlyArray<string | number>): GraphQLErrorJSON {
  const json: GraphQLErrorJSON = {
    message: `Subgraph "${subgraph}" sent an invalid response: ${reason}.`,
    extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: subgraph },
  };
  if (path.length > 0) json.path = [...path];
  return json;
}

/**
 * The path the entity fetches sent as one request share (a merged fetch's
 * entries included), named in a wrapped error; undefined when they look up
 * objects at different paths.
 */
function sharedPath(nodes: readonly FetchNode[]): readonly string[] | undefined {
  const paths = nodes.flatMap((node) => (node.entries ? node.entries.map((entry) => entry.path) : [node.mergePath]));
  const first = paths[0];
  if (!first) return undefined;
  const text = first.join('\u0000');
  return paths.every((path) => path.join('\u0000') === text) ? first : undefined;
}
