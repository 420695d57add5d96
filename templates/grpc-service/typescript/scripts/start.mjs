// `npm start`: runs the gRPC service and the router together, each line of
// output prefixed with its name; stops both when either stops or on Ctrl-C.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const switchyardPackage = require.resolve('switchyard/package.json');
const switchyardBin = join(dirname(switchyardPackage), JSON.parse(readFileSync(switchyardPackage, 'utf8')).bin.switchyard);

const processes = [
  ['service', [process.execPath, '--import', 'tsx', 'src/index.ts']],
  ['router', [process.execPath, switchyardBin, 'router', '-c', 'router.config.yaml']],
].map(([name, [command, ...args]]) => {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    let pending = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop();
      for (const line of lines) process.stdout.write(`[${name}] ${line}\n`);
    });
  }
  return { name, child };
});

let stopping = false;
function stopAll(code) {
  if (stopping) return;
  stopping = true;
  for (const { child } of processes) if (child.exitCode === null) child.kill('SIGTERM');
  process.exitCode = code;
}

for (const { name, child } of processes) {
  child.on('exit', (code, signal) => {
    if (!stopping) console.error(`[${name}] stopped (${signal ?? `exit code ${code}`}); stopping the others`);
    stopAll(code ?? 1);
  });
}
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => stopAll(0));
