#!/usr/bin/env -S node --max-semi-space-size=64
// The flag: a router allocates fast and most of it dies young. A young
// generation of up to 64 MiB per semi-space (Node's default is 16) cuts
// garbage collection under load several times over (README, "Performance").
/** The `switchyard` command. */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { installBindBackport } from './async-resource-bind.js';
import { exitForUsageError } from './cli-support.js';
import { registerComposeCommand } from './commands/compose.js';
import { registerConfigCommand } from './commands/config.js';
import { registerGrpcServiceCommand } from './commands/grpc-service.js';
import { registerOperationsCommand } from './commands/operations.js';
import { registerPlanCommand } from './commands/plan.js';
import { registerPluginCommand } from './commands/plugin.js';
import { registerRouterCommand } from './commands/router.js';

function packageVersion(): string {
  for (const candidate of ['../../package.json', '../package.json']) {
    try {
      return (JSON.parse(readFileSync(new URL(candidate, import.meta.url), 'utf8')) as { version: string }).version;
    } catch {
      // try the next layout (source tree vs. dist)
    }
  }
  return '0.0.0';
}

// Every gRPC call is an HTTP/2 request, and Node 20's requests pay for a slow AsyncResource#bind (async-resource-bind.ts).
installBindBackport();

const program = new Command()
  .name('switchyard')
  .description('Switchyard: a federated GraphQL router built from plugins')
  .version(packageVersion())
  .showHelpAfterError()
  .exitOverride(exitForUsageError);

// Each command's work (the router, the planner, composition, config migration)
// is imported inside its action: help, usage errors and the light commands
// start without loading the rest.
registerRouterCommand(program);
registerComposeCommand(program);
registerGrpcServiceCommand(program);
registerPlanCommand(program);
registerOperationsCommand(program);
registerPluginCommand(program);
registerConfigCommand(program);

await program.parseAsync(process.argv);
