/**
 * What `switchyard plan` does once its flags are checked: load the graph,
 * check the operation as the router would, plan it and print the plan.
 * Its own module so the other commands start without the planner (main.ts).
 */
import { readFile } from 'node:fs/promises';
import { GraphQLError, parse, Source, validate, type DocumentNode } from 'graphql';
import { readGraphSource } from '../kernel/graph/execution-config.js';
import { LoadedGraph } from '../kernel/graph/loaded-graph.js';
import { buildQueryPlan } from '../kernel/plan/build-plan.js';
import { printQueryPlan } from '../kernel/plan/print-plan.js';
import { writeProblem } from './cli-support.js';
import { loadRouterSetup } from './router-setup.js';

/** Where the graph and the operation come from (the command's flags). */
export interface PlanRequest {
  supergraph?: string;
  config?: string;
  query: string;
  operationName?: string;
}

/**
 * The printed plan; undefined when the operation does not validate (each
 * problem already written to stderr). Throws when the graph or the file
 * cannot be read.
 */
export async function printedPlan(request: PlanRequest): Promise<string | undefined> {
  const setup = request.supergraph ? { graph: request.supergraph } : await loadRouterSetup({ configPath: request.config });
  if (!setup.graph) throw new Error('the config names no graph (execution_config.file.path)');
  const graph = new LoadedGraph(await readGraphSource(setup.graph), 1);
  const text = await readFile(request.query, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new Error(error.code === 'ENOENT' ? `operation file not found: ${request.query}` : error.message);
  });
  const document = checkedOperation(graph, text, request.query);
  return document && printQueryPlan(buildQueryPlan(graph.index, document, request.operationName));
}

/**
 * The operation parsed and validated against the graph's API schema, as the
 * router would before planning; undefined after writing each problem to
 * stderr as `<file>:<line>:<column>: <message>` (the planner would otherwise
 * plan an unknown field or a wrong argument as if it were valid).
 */
function checkedOperation(graph: LoadedGraph, text: string, file: string): DocumentNode | undefined {
  let errors: readonly GraphQLError[];
  try {
    const document = parse(new Source(text, file));
    errors = validate(graph.apiSchema, document);
    if (errors.length === 0) return document;
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error;
    errors = [error];
  }
  for (const error of errors) {
    const at = error.locations?.[0];
    writeProblem(at ? `${file}:${at.line}:${at.column}: ${error.message}` : `${file}: ${error.message}`);
  }
  return undefined;
}
