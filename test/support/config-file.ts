/**
 * `router.config.yaml` files for tests: written to the test's own folder and
 * loaded as `switchyard router -c` loads them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { RouterError } from '../../src/index.js';
import { loadRouterSetup, type RouterSetup } from '../../src/setup/index.js';

/** Writes `text`, after a `version: "1"` line, to a new config file in `dir` and loads it with `env`. */
export async function loadConfigText(dir: string, text: string, env: Record<string, string> = {}): Promise<RouterSetup> {
  const path = join(dir, `router-${Math.random().toString(36).slice(2)}.config.yaml`);
  await writeFile(path, `version: "1"\n${text}`);
  return loadRouterSetup({ configPath: path, env });
}

/** The message of the CONFIG_INVALID error that loading `text` fails with; any other outcome fails the test. */
export async function configFailure(dir: string, text: string, env: Record<string, string> = {}): Promise<string> {
  const error = await loadConfigText(dir, text, env).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(RouterError);
  expect((error as RouterError).code).toBe('CONFIG_INVALID');
  return (error as RouterError).message;
}
