/**
 * Headless Chromium (the OS package) driven by playwright-core, with a fresh
 * profile and the background traffic Chromium makes on its own switched off,
 * so every request the test sees comes from the page.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** A running Chromium: its one context, and `close` that also removes the profile. */
export interface Chromium {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Starts Chromium on a new user-data dir. */
export async function launchChromium(): Promise<Chromium> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install the OS package (apt-get install -y chromium), as scripts/test.sh does`);
  const profile = await mkdtemp(join(tmpdir(), 'switchyard-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    // A cold start on a busy machine can take a while; the hook allows 60 s.
    timeout: 45_000,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
