/**
 * Hot reload of contracts: the services folder is watched (with its
 * subfolders) and every change, once the writes settle, reloads it.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../src/index.js';

/** Quiet time after the last change before reloading (a generation writes three files, an editor may write twice). */
export const RELOAD_SETTLE_MS = 150;

/** Watches `root`; calls `reload` after changes. Returns a function that stops watching. */
export function watchContracts(root: string, reload: () => Promise<void>, log: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  const run = (): void => {
    timer = undefined;
    if (running) {
      // A change during a reload: reload once more when it is done.
      again = true;
      return;
    }
    running = reload().finally(() => {
      running = undefined;
      if (again) {
        again = false;
        run();
      }
    });
  };
  let watcher: FSWatcher;
  try {
    watcher = watch(root, { recursive: true }, () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(run, RELOAD_SETTLE_MS);
    });
  } catch (error) {
    log.warn({ path: root, err: error }, 'Connect contracts are not watched; changes need a restart');
    return () => undefined;
  }
  watcher.on('error', (error) => log.warn({ path: root, err: error }, 'Connect contracts are no longer watched; changes need a restart'));
  return () => {
    if (timer) clearTimeout(timer);
    watcher.close();
  };
}
