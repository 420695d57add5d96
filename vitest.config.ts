import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS build for every importer; vite would pick
    // its .mjs build for ours, and two copies of graphql cannot share types.
    alias: [
      { find: /^graphql$/, replacement: require.resolve('graphql') },
      // Example plugin packages import `switchyard` as users do; here that is this checkout's source.
      { find: /^switchyard$/, replacement: fileURLToPath(new URL('src/index.ts', import.meta.url)) },
      { find: /^switchyard\/(testing|setup|operations|grpc|connect)$/, replacement: fileURLToPath(new URL('src/$1/index.ts', import.meta.url)) },
      { find: /^switchyard\/plugins\/([a-z0-9-]+)$/, replacement: fileURLToPath(new URL('plugins/$1/index.ts', import.meta.url)) },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'plugins/**/*.test.ts', 'examples/*/test/**/*.test.ts'],
    setupFiles: ['test/support/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // scripts/test.sh runs most files with isolation off (--no-isolate): a worker
    // process keeps the modules it loaded for the next file. A test file that
    // changes process-wide state, or a helper module that registers hooks at its
    // top level, goes in its `isolated` list.
    pool: 'forks',
  },
});
