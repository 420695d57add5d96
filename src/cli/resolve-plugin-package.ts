/**
 * Where a plugin package named in `plugins[].package` lives, looked up from
 * the config file's folder. `require.resolve` alone misses ESM-only packages,
 * whose `exports` offer no `require` condition (`{ "types", "import" }`, as
 * `switchyard plugin init` writes them); those are read from their manifest.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/** The entry file of `name` in a node_modules folder at or above `baseDir`; undefined when none has it. */
export function resolvePluginPackage(name: string, baseDir: string): string | undefined {
  const require = createRequire(join(baseDir, 'router.config.yaml'));
  try {
    return require.resolve(name);
  } catch {
    // Not resolvable for `require`: find the package folder and read its `import` entry.
  }
  for (const modules of require.resolve.paths(name) ?? []) {
    const manifestPath = join(modules, name, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { exports?: unknown; main?: unknown };
    const exported = typeof manifest.exports === 'object' && manifest.exports !== null && '.' in manifest.exports ? manifest.exports['.'] : manifest.exports;
    const entry = importTarget(exported) ?? (typeof manifest.main === 'string' ? manifest.main : undefined);
    return entry === undefined ? undefined : resolve(modules, name, entry);
  }
  return undefined;
}

/** The file an `exports` entry names for `import` (or `node`, or `default`). */
function importTarget(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (target === null || typeof target !== 'object') return undefined;
  for (const condition of ['import', 'node', 'default']) {
    const found = importTarget((target as Record<string, unknown>)[condition]);
    if (found !== undefined) return found;
  }
  return undefined;
}
