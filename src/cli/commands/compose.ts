/**
 * `switchyard compose -i router.compose.yaml -o <file>`: composes the subgraphs
 * and writes an execution config (`.json`) or a supergraph SDL (`.graphql`).
 */
import type { Command } from 'commander';
import { EXIT_FAILED, EXIT_USAGE, exitForUsageError, writeProblem } from '../cli-support.js';

/** Options commander hands to the action. */
interface ComposeOptions {
  /** `-i, --input`: the compose file. */
  input: string;
  /** `-o, --output`: the file to write. */
  output: string;
}

const EXAMPLES = `
Output format (by extension of -o):
  .json                      router.execution.config.json: supergraph + subgraph routing (versioned)
  .graphql, .graphqls, .gql  the plain Federation v2 supergraph SDL

Examples:
  $ switchyard compose -i router.compose.yaml -o router.execution.config.json
  $ switchyard compose -i router.compose.yaml -o supergraph.graphql

Either file works as execution_config.file.path or --supergraph of \`switchyard router\`.
Format reference: docs/execution-config.md`;

async function runCompose(this: Command, options: ComposeOptions): Promise<void> {
  const { composeGraph, outputFormatOf, writeOutput } = await import('../../compose/index.js');
  const format = outputFormatOf(options.output);
  if (!format) {
    this.error(`error: cannot tell the output format of '${options.output}': use a .json (execution config) or .graphql (supergraph SDL) file`, {
      exitCode: EXIT_USAGE,
      code: 'switchyard.outputFormat',
    });
  }
  try {
    const graph = await composeGraph(options.input);
    await writeOutput(options.output, graph);
    const what = format === 'execution-config' ? 'execution config' : 'supergraph SDL';
    const names = graph.subgraphs.map((subgraph) => subgraph.name).join(', ');
    process.stdout.write(`wrote ${what} to ${options.output} (${graph.subgraphs.length} subgraphs: ${names})\n`);
  } catch (error) {
    writeProblem(error);
    process.exitCode = EXIT_FAILED;
  }
}

/** Adds `compose` to the `switchyard` program and returns the new command. */
export function registerComposeCommand(program: Command): Command {
  return program
    .command('compose')
    .description('Compose subgraphs into a supergraph and write an execution config (.json) or a supergraph SDL (.graphql)')
    .requiredOption('-i, --input <file>', 'compose file listing the subgraphs (router.compose.yaml)')
    .requiredOption('-o, --output <file>', 'file to write: .json = execution config, .graphql = supergraph SDL')
    .addHelpText('after', EXAMPLES)
    .exitOverride(exitForUsageError)
    .action(runCompose);
}
