import { readFileSync } from 'node:fs';

let cached: string | undefined;

/**
 * The version of the `switchyard` package running this code, found by
 * walking up from this file (the source tree and the built `dist/` sit at
 * different depths).
 */
export function routerVersion(): string {
  if (cached !== undefined) return cached;
  let directory = new URL('./', import.meta.url);
  for (let depth = 0; depth < 6; depth++) {
    try {
      const manifest: unknown = JSON.parse(readFileSync(new URL('package.json', directory), 'utf8'));
      if (typeof manifest === 'object' && manifest !== null && 'name' in manifest && manifest.name === 'switchyard' && 'version' in manifest) {
        cached = String(manifest.version);
        return cached;
      }
    } catch {
      // no manifest at this level; look one folder up
    }
    directory = new URL('../', directory);
  }
  cached = 'unknown';
  return cached;
}
