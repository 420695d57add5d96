/** A `switchyard` program with only the compose command, run as a real process by cli.test.ts. */
import { Command } from 'commander';
import { registerComposeCommand } from '../../src/cli/commands/compose.js';

const program = new Command('switchyard');
registerComposeCommand(program);
await program.parseAsync(process.argv);
