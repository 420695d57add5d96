/** `switchyard plan`: prints the query plan of an operation, without running it. */
import { InvalidArgumentError, type Command } from 'commander';
import { EXIT_FAILED, exitForUsageError, writeProblem } from '../cli-support.js';
import type { PlanRequest } from '../operation-plan.js';

async function runPlan(this: Command, options: PlanRequest): Promise<void> {
  if (!options.supergraph && !options.config) {
    this.error('error: give the graph with --supergraph <file> or -c <config>', { exitCode: 2 });
  }
  try {
    const { printedPlan } = await import('../operation-plan.js');
    const plan = await printedPlan(options);
    if (plan === undefined) process.exitCode = EXIT_FAILED;
    else process.stdout.write(`${plan}\n`);
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
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
