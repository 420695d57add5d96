import { readdirSync, existsSync } from 'node:fs';
import { defineConfig } from 'tsup';

/** One entry per plugin folder: `switchyard/plugins/<name>`. */
const pluginEntries = Object.fromEntries(
  (existsSync('plugins') ? readdirSync('plugins', { withFileTypes: true }) : [])
    .filter((entry) => entry.isDirectory() && existsSync(`plugins/${entry.name}/index.ts`))
    .map((entry) => [`plugins/${entry.name}/index`, `plugins/${entry.name}/index.ts`]),
);

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    'testing/index': 'src/testing/index.ts',
    // Public subpaths for plugins: the operations store, the gRPC service files and the Connect contract pieces.
    'operations/index': 'src/operations/index.ts',
    'grpc/index': 'src/grpc/index.ts',
    'connect/index': 'src/connect/index.ts',
    // Config-file setup for programs that start the router themselves.
    'setup/index': 'src/setup/index.ts',
    'cli/main': 'src/cli/main.ts',
    ...pluginEntries,
  },
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: {
    entry: {
      index: 'src/index.ts',
      'testing/index': 'src/testing/index.ts',
      'operations/index': 'src/operations/index.ts',
      'grpc/index': 'src/grpc/index.ts',
      'connect/index': 'src/connect/index.ts',
      'setup/index': 'src/setup/index.ts',
      ...pluginEntries,
    },
  },
  sourcemap: true,
  clean: true,
  splitting: true,
  shims: false,
});
