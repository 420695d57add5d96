import { RouterError, type GraphQLErrorJSON } from '../errors.js';
import type { JsonObject, SubgraphResponse } from '../fetch/subgraph-types.js';
import type { FetchNode, PlanNode, QueryPlan } from '../plan/query-plan.js';
import { buildEntityBatch } from './representations.js';
import { ResponseTree, type EntityNode } from './response-tree.js';

/** Runs one fetch node; the kernel's fetch stage (hooks, transport) sits behind it. */
export type FetchRunner = (
  node: FetchNode,
  variables: Record<string, unknown>,
  representations: JsonObject[] | undefined,
) => Promise<SubgraphResponse>;

/** Everything fetched for one request, before it is shaped into the response. */
export interface ExecutionOutcome {
  readonly tree: ResponseTree;
  readonly errors: GraphQLErrorJSON[];
}

/**
 * Walks a plan: Sequence nodes in order, Parallel nodes together, each
 * Fetch through `runFetch`. A failed fetch becomes an error; the rest of the
 * plan still runs, and what it could not fetch ends up null.
 */
export async function executePlan(
  plan: QueryPlan,
  variables: Readonly<Record<string, unknown>>,
  runFetch: FetchRunner,
  satisfies: (typename: string, condition: string) => boolean,
): Promise<ExecutionOutcome> {
  const tree = new ResponseTree();
  const errors: GraphQLErrorJSON[] = [];
  if (plan.node) await new PlanWalker(tree, errors, variables, runFetch, satisfies).run(plan.node);
  return { tree, errors };
}

class PlanWalker {
  constructor(
    private readonly tree: ResponseTree,
    private readonly errors: GraphQLErrorJSON[],
    private readonly variables: Readonly<Record<string, unknown>>,
    private readonly runFetch: FetchRunner,
    private readonly satisfies: (typename: string, condition: string) => boolean,
  ) {}

  async run(node: PlanNode): Promise<void> {
    switch (node.kind) {
      case 'Sequence':
        for (const child of node.nodes) await this.run(child);
        return;
      case 'Parallel':
        await Promise.all(node.nodes.map((child) => this.run(child)));
        return;
      case 'Flatten':
        return this.runEntityFetch(node.node);
      case 'Fetch':
        return node.fetchKind === 'entity' ? this.runEntityFetch(node) : this.runRootFetch(node);
    }
  }

  private variablesFor(node: FetchNode): Record<string, unknown> {
    const variables: Record<string, unknown> = {};
    for (const name of node.variableUsages) {
      if (Object.hasOwn(this.variables, name)) variables[name] = this.variables[name];
    }
    return variables;
  }

  private async runRootFetch(node: FetchNode): Promise<void> {
    const response = await this.fetch(node, this.variablesFor(node), undefined, []);
    if (!response) return;
    for (const error of response.errors ?? []) this.errors.push(subgraphError(error, node, error.path));
    const data = response.data;
    if (data === undefined || data === null) return;
    if (typeof data !== 'object' || Array.isArray(data)) {
      this.errors.push(invalidResponse(node, 'its "data" is not an object', []));
      return;
    }
    this.tree.addRoot(data);
  }

  private async runEntityFetch(node: FetchNode): Promise<void> {
    const entities = this.tree.collect(node.mergePath, this.satisfies);
    if (entities.length === 0) return;
    const batch = buildEntityBatch(this.tree, entities, node.representations ?? [], this.satisfies);
    if (batch.representations.length === 0) return;
    const variables = this.variablesFor(node);
    variables.representations = batch.representations;
    const firstPath = batch.targets[0]![0]!.path;
    const response = await this.fetch(node, variables, batch.representations, firstPath);
    if (!response) return;
    for (const error of response.errors ?? []) {
      this.errors.push(subgraphError(error, node, entityErrorPath(error.path, batch.targets)));
    }
    const results = response.data?._entities;
    if (results === undefined || results === null) return;
    if (!Array.isArray(results) || results.length !== batch.representations.length) {
      this.errors.push(
        invalidResponse(
          node,
          Array.isArray(results)
            ? `it returned ${results.length} entities for ${batch.representations.length} representations`
            : '"_entities" is not a list',
          firstPath,
        ),
      );
      return;
    }
    for (let i = 0; i < results.length; i++) {
      const result: unknown = results[i];
      if (result === null || typeof result !== 'object' || Array.isArray(result)) continue;
      for (const target of batch.targets[i]!) this.tree.attach(target.primary, result as JsonObject);
    }
  }

  /** Runs a fetch; a thrown error becomes a GraphQL error and an absent answer. */
  private async fetch(
    node: FetchNode,
    variables: Record<string, unknown>,
    representations: JsonObject[] | undefined,
    path: ReadonlyArray<string | number>,
  ): Promise<SubgraphResponse | undefined> {
    try {
      return await this.runFetch(node, variables, representations);
    } catch (error) {
      this.errors.push(fetchFailure(error, node, path));
      return undefined;
    }
  }
}

function entityErrorPath(
  path: ReadonlyArray<string | number> | undefined,
  targets: readonly EntityNode[][],
): ReadonlyArray<string | number> | undefined {
  if (!path || path[0] !== '_entities' || typeof path[1] !== 'number') return undefined;
  const target = targets[path[1]]?.[0];
  return target ? [...target.path, ...path.slice(2)] : undefined;
}

function subgraphError(error: GraphQLErrorJSON, node: FetchNode, path: ReadonlyArray<string | number> | undefined): GraphQLErrorJSON {
  const json: GraphQLErrorJSON = { message: typeof error.message === 'string' ? error.message : 'Subgraph error' };
  if (path && path.length > 0) json.path = [...path];
  const extensions = error.extensions && typeof error.extensions === 'object' ? error.extensions : {};
  json.extensions = { ...extensions, serviceName: node.subgraph };
  return json;
}

function fetchFailure(error: unknown, node: FetchNode, path: ReadonlyArray<string | number>): GraphQLErrorJSON {
  const routerError =
    error instanceof RouterError
      ? error
      : new RouterError('SUBGRAPH_REQUEST_FAILED', `Request to subgraph "${node.subgraph}" failed: ${(error as Error)?.message ?? String(error)}`);
  const json: GraphQLErrorJSON = { message: routerError.message, extensions: { code: routerError.code, serviceName: node.subgraph } };
  if (path.length > 0) json.path = [...path];
  return json;
}

function invalidResponse(node: FetchNode, reason: string, path: ReadonlyArray<string | number>): GraphQLErrorJSON {
  const json: GraphQLErrorJSON = {
    message: `Subgraph "${node.subgraph}" sent an invalid response: ${reason}.`,
    extensions: { code: 'SUBGRAPH_INVALID_RESPONSE', serviceName: node.subgraph },
  };
  if (path.length > 0) json.path = [...path];
  return json;
}
