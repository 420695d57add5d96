/** A `switchyard` program with only the operations command, run as a real process by cli.test.ts. */
import { Command } from 'commander';
import { exitForUsageError } from '../../../src/cli/cli-support.js';
import { registerOperationsCommand } from '../../../src/cli/commands/operations.js';

const program = new Command('switchyard').exitOverride(exitForUsageError);
registerOperationsCommand(program);
await program.parseAsync(process.argv);
