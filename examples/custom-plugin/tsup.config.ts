import { defineConfig } from 'tsup';

// ESM with type declarations; `switchyard` stays external (a peer dependency:
// the plugin runs on the router's copy, so its errors and types are the router's).
export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm'],
  target: 'node20',
  platform: 'node',
  dts: true,
  sourcemap: true,
  clean: true,
});
