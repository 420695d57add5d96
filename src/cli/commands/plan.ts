/** `switchyard plan`: prints the query plan of an operation, without running it. */
import { readFile } from 'node:fs/promises';
import { InvalidArgumentError, type Command } from 'commander';
import { GraphQLError, parse, Source, validate, type DocumentNode } from 'graphql';
import { readGraphSource } from '../../kernel/graph/execution-config.js';
import { LoadedGraph } from '../../kernel/graph/loaded-graph.js';
import { buildQueryPlan } from '../../kernel/plan/build-plan.js';
import { printQueryPlan } from '../../kernel/plan/print-plan.js';
import { EXIT_FAILED, exitForUsageError, writeProblem } from '../cli-support.js';
import { loadRouterSetup } from '../router-setup.js';

interface PlanOptions {
  supergraph?: string;
  config?: string;
  query: string;
  operationName?: string;
}

async function runPlan(this: Command, options: PlanOptions): Promise<void> {
  if (!options.supergraph && !options.config) {
    this.error('error: give the graph with --supergraph <file> or -c <config>', { exitCode: 2 });
  }
  try {
    const setup = options.supergraph ? { graph: options.supergraph } : await loadRouterSetup({ configPath: options.config });
    if (!setup.graph) throw new Error('the config names no graph (execution_config.file.path)');
    const graph = new LoadedGraph(await readGraphSource(setup.graph), 1);
    const text = await readFile(options.query, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new Error(error.code === 'ENOENT' ? `operation file not found: ${options.query}` : error.message);
    });
    const document = checkedOperation(graph, text, options.query);
    if (!document) {
      process.exitCode = EXIT_FAILED;
      return;
    }
    const plan = buildQueryPlan(graph.index, document, options.operationName);
    process.stdout.write(`${printQueryPlan(plan)}\n`);
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
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

function nonEmpty(value: string): string {
  if (!value.trim()) throw new InvalidArgumentError('must not be empty');
  return value;
}

export function registerPlanCommand(program: Command): Command {
  return program
    .command('plan')
    .description('Print the query plan of an operation (docs/query-plans.md)')
    .option('--supergraph <file>', 'execution config JSON or supergraph SDL')
    .option('-c, --config <file>', 'router config naming the graph')
    .requiredOption('-q, --query <operation.graphql>', 'file holding the operation', nonEmpty)
    .option('--operation-name <name>', 'operation to plan when the file holds several')
    .exitOverride(exitForUsageError)
    .action(runPlan);
}
