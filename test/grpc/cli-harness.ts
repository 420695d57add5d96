/** A `switchyard` program with only the grpc-service command, run as a real process by the CLI tests (it starts faster than the full CLI). */
import { Command } from 'commander';
import { exitForUsageError } from '../../src/cli/cli-support.js';
import { registerGrpcServiceCommand } from '../../src/cli/commands/grpc-service.js';

const program = new Command('switchyard').exitOverride(exitForUsageError);
registerGrpcServiceCommand(program);
await program.parseAsync(process.argv);
