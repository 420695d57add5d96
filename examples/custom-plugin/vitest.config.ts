import { defineConfig } from 'vitest/config';

export default defineConfig({
  // A linked switchyard (`file:` or `npm link`) stays a node_modules package to
  // vitest, so it runs as Node loads it, with the graphql copy it depends on.
  resolve: { preserveSymlinks: true },
  test: {
    include: ['test/**/*.test.ts'],
    // Tests start real subgraphs and a router on 127.0.0.1.
    testTimeout: 30_000,
  },
});
