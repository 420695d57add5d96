/**
 * The playground's plan-and-trace panel in headless Chromium: an operation
 * crossing three subgraphs (products -> reviews -> users, with the response
 * cache in front) is run from the editor; the panel shows the plan as a tree
 * and a waterfall of the subgraph calls, then cache hits on the second run
 * and a failed call in red. The panel's screenshot goes to test/artifacts/
 * and is checked where it matters (bars drawn in their colours where the
 * DOM says they are), not pixel for pixel: fonts differ between machines.
 * A router with `query_plans.enabled: false` serves no panel at all.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useCacheTags } from '../../plugins/cache-tags/index.js';
import { useResponseCache } from '../../plugins/response-cache/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { productsSubgraph, reviewsSubgraph, usersSubgraph } from '../plugins/telemetry/fixtures.js';
import { launchChromium, type Chromium } from './browser.js';

const ARTIFACTS = join(import.meta.dirname, '../artifacts');

const TOP_PRODUCTS = 'query TopProducts { topProducts { name reviews { body author { username } } } }';
/** Another root selection: products is asked again (not from the cache). */
const WITH_UPC = 'query TopProductsWithUpc { topProducts { upc name reviews { body author { username } } } }';

/** The bar colours of playground-trace-panel.ts, as [r, g, b]. */
const SENT = [0x2f, 0x6f, 0xde];
const HIT = [0x2e, 0x9e, 0x5b];
const ERROR = [0xd6, 0x45, 0x3d];

let subgraphs: TestSubgraph[] = [];
let router: TestRouter;
let plansOff: TestRouter;
let browser: Chromium;
let page: Page;
let productsFail = false;
const consoleErrors: string[] = [];

beforeAll(async () => {
  const cacheable = { reply: () => ({ headers: { 'cache-control': 'max-age=60' } }) };
  subgraphs = await Promise.all([
    // Delays make the bars wide enough to see and to order.
    startSubgraph(productsSubgraph({ delayMs: 40, reply: () => (productsFail ? { status: 503, body: 'down for maintenance' } : { headers: { 'cache-control': 'max-age=60' } }) })),
    startSubgraph(reviewsSubgraph({ ...cacheable, delayMs: 30 })),
    startSubgraph(usersSubgraph({ ...cacheable, delayMs: 20 })),
  ]);
  const cache = () => [useCacheTags(), useResponseCache({ enabled: true, storage: { provider: 'memory' }, debug: { enabled: true } })];
  router = await startTestRouter({ subgraphs, listen: true, plugins: cache() });
  plansOff = await startTestRouter({ subgraphs, listen: true, config: { query_plans: { enabled: false } } });
  browser = await launchChromium();
  const { context } = browser;
  await context.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => void consoleErrors.push(error.message));
  await page.goto(`${router.url}/`, { timeout: 15_000 });
  await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await router?.close();
  await plansOff?.close();
  await Promise.all(subgraphs.map((s) => s.close()));
});

async function editorText(selector: string): Promise<string> {
  return (await page.locator(`${selector} .view-lines`).innerText()).replace(/\u00a0/g, ' ');
}

/** Types an operation into the editor and runs it; resolves once the response editor shows `expected`. */
async function run(operation: string, expected: string): Promise<void> {
  // A busy machine can leave a suggestion widget open or drop a key: clear until the editor is empty, then check what was typed.
  await expect
    .poll(
      async () => {
        await page.locator('.graphiql-query-editor .monaco-editor').click();
        await page.keyboard.press('Escape');
        await page.keyboard.press('ControlOrMeta+A');
        await page.keyboard.press('Delete');
        return (await editorText('.graphiql-query-editor')).trim();
      },
      { timeout: 10_000 },
    )
    .toBe('');
  await page.keyboard.insertText(operation);
  await expect.poll(async () => (await editorText('.graphiql-query-editor')).trim(), { timeout: 5_000 }).toBe(operation);
  await page.keyboard.press('Escape');
  // GraphiQL reads the operation name from the editor a moment later (its tab shows it): run it only then, or it sends the previous name.
  const name = /^(?:query|mutation)\s+(\w+)/.exec(operation)![1]!;
  await expect.poll(() => page.locator('.graphiql-tab-active').innerText(), { timeout: 5_000 }).toContain(name);
  await page.locator('.graphiql-execute-button').click();
  await expect.poll(() => editorText('.graphiql-response'), { timeout: 10_000 }).toContain(expected);
}

interface Row {
  readonly label: string;
  readonly cache: string | undefined;
  readonly classes: string;
  readonly text: string;
  readonly bar: { x: number; y: number; width: number; height: number };
}

async function waterfallRows(): Promise<Row[]> {
  return page.locator('#switchyard-trace .sy-row').evaluateAll((rows) =>
    rows.map((row) => {
      const box = row.querySelector('.sy-bar')!.getBoundingClientRect();
      return {
        label: row.querySelector('.sy-row-label')!.textContent!,
        cache: (row as HTMLElement).dataset.cache,
        classes: row.className,
        text: (row as HTMLElement).innerText,
        bar: { x: box.x, y: box.y, width: box.width, height: box.height },
      };
    }),
  );
}

/**
 * Saves a screenshot of the panel and reads back, with Chromium's own PNG
 * decoder, the colour at the middle of each bar and the share of the panel
 * that is not its background.
 */
async function screenshotPanel(panel: Locator, name: string, bars: readonly Row['bar'][]): Promise<{ colours: number[][]; inked: number }> {
  const png = await panel.screenshot();
  await mkdir(ARTIFACTS, { recursive: true });
  await writeFile(join(ARTIFACTS, name), png);
  const origin = (await panel.boundingBox())!;
  const points = bars.map((bar) => ({ x: Math.round(bar.x - origin.x + bar.width / 2), y: Math.round(bar.y - origin.y + bar.height / 2) }));
  return page.evaluate(
    async ({ base64, points }) => {
      const image = new Image();
      image.src = `data:image/png;base64,${base64}`;
      await image.decode();
      const canvas = document.createElement('canvas');
      canvas.width = image.width;
      canvas.height = image.height;
      const context = canvas.getContext('2d')!;
      context.drawImage(image, 0, 0);
      const pixels = context.getImageData(0, 0, image.width, image.height).data;
      const colours = points.map(({ x, y }) => [...pixels.slice((y * image.width + x) * 4, (y * image.width + x) * 4 + 3)]);
      const [br, bg, bb] = [pixels[0]!, pixels[1]!, pixels[2]!];
      let inked = 0;
      for (let i = 0; i < pixels.length; i += 4) if (Math.abs(pixels[i]! - br) + Math.abs(pixels[i + 1]! - bg) + Math.abs(pixels[i + 2]! - bb) > 60) inked++;
      return { colours, inked: inked / (pixels.length / 4) };
    },
    { base64: png.toString('base64'), points },
  );
}

function near(colour: readonly number[], expected: readonly number[]): boolean {
  return colour.every((channel, index) => Math.abs(channel - expected[index]!) <= 12);
}

describe('the plan-and-trace panel in headless Chromium', () => {
  it('is hidden until an operation runs', async () => {
    await expect.poll(() => page.locator('#switchyard-trace').count()).toBe(1);
    expect(await page.locator('#switchyard-trace').isHidden()).toBe(true);
  });

  it('shows the plan as a tree and the subgraph calls as a waterfall', async () => {
    await run(TOP_PRODUCTS, '"grace"');
    const panel = page.locator('#switchyard-trace');
    await panel.waitFor({ state: 'visible', timeout: 5_000 });
    expect(await panel.locator('.sy-trace-summary').innerText()).toMatch(
      /^TopProducts · router [\d.]+ ms · round trip [\d.]+ ms · plan [\d.]+ ms \(plan cache miss\) · 3 subgraph calls$/,
    );

    // The tree: a sequence of a root fetch and two flattened entity fetches.
    const tree = panel.locator('.sy-plan-tree');
    expect(await tree.locator(':scope > .sy-tree > .sy-node-sequence > .sy-node-label').innerText()).toBe('Sequence');
    const fetches = await tree
      .locator('.sy-node-fetch')
      .evaluateAll((nodes) => nodes.map((node) => [node.querySelector('.sy-subgraph')!.textContent, node.querySelector('.sy-node-kind')!.textContent]));
    expect(fetches).toEqual([
      ['products', 'root'],
      ['reviews', 'entity'],
      ['users', 'entity'],
    ]);
    expect(await tree.locator('.sy-node-flatten .sy-node-path').allInnerTexts()).toEqual(['topProducts.@', 'topProducts.@.reviews.@.author']);

    // The waterfall: planning, then three calls one after the other, each sent and missed by the cache.
    const rows = await waterfallRows();
    expect(rows.map((row) => row.label)).toEqual(['plan', 'products #0', 'reviews #1', 'users #2']);
    expect(rows.slice(1).map((row) => row.cache)).toEqual(['miss', 'miss', 'miss']);
    for (const row of rows.slice(1)) {
      expect(row.text).toMatch(/cache miss/);
      expect(row.bar.width).toBeGreaterThan(20);
    }
    // Each call starts after the one it depends on ended (the bars do not overlap).
    for (let i = 2; i < rows.length; i++) expect(rows[i]!.bar.x).toBeGreaterThanOrEqual(rows[i - 1]!.bar.x + rows[i - 1]!.bar.width - 1);
    // 40 ms of products out of the whole request: a good share of the track.
    const track = (await panel.locator('.sy-row .sy-track').first().boundingBox())!;
    expect(rows[1]!.bar.width / track.width).toBeGreaterThan(0.2);

    const shot = await screenshotPanel(
      panel,
      'trace-panel-miss.png',
      rows.slice(1).map((row) => row.bar),
    );
    for (const colour of shot.colours) expect(near(colour, SENT), `bar colour ${colour.join(',')}`).toBe(true);
    expect(shot.inked).toBeGreaterThan(0.03);
  });

  it('shows cache hits on the second run', async () => {
    // The same operation (the operation name is part of what is sent to subgraphs, so of the cache keys).
    await run(TOP_PRODUCTS, '"grace"');
    const panel = page.locator('#switchyard-trace');
    await expect.poll(async () => (await waterfallRows()).slice(1).map((row) => row.cache)).toEqual(['hit', 'hit', 'hit']);
    expect(await panel.locator('.sy-trace-summary').innerText()).toMatch(/\(plan cache hit\) · 3 subgraph calls$/);
    const rows = await waterfallRows();
    for (const row of rows.slice(1)) expect(row.text).toMatch(/cache hit/);
    const shot = await screenshotPanel(
      panel,
      'trace-panel-hit.png',
      rows.slice(1).map((row) => row.bar),
    );
    for (const colour of shot.colours) expect(near(colour, HIT), `bar colour ${colour.join(',')}`).toBe(true);
  });

  it('shows a failed subgraph call in red with its error', async () => {
    productsFail = true;
    try {
      await run(WITH_UPC, '"errors"');
    } finally {
      productsFail = false;
    }
    const panel = page.locator('#switchyard-trace');
    await expect.poll(() => panel.locator('.sy-trace-summary').innerText()).toMatch(/^TopProductsWithUpc · .* · 1 subgraph call$/);
    const rows = await waterfallRows();
    expect(rows.map((row) => row.label)).toEqual(['plan', 'products #0']);
    expect(rows[1]!.classes).toContain('sy-error');
    expect(rows[1]!.text).toMatch(/1 error/);
    expect(await panel.locator('.sy-row.sy-error .sy-row-errors').innerText()).toMatch(/503/);
    const shot = await screenshotPanel(panel, 'trace-panel-error.png', [rows[1]!.bar]);
    expect(near(shot.colours[0]!, ERROR), `bar colour ${shot.colours[0]!.join(',')}`).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, 'playground-trace.png') });
  });

  it('leaves out of the answer GraphiQL shows what the panel asked for', async () => {
    await run('query Names { topProducts { name } }', '"Couch"');
    await expect.poll(() => page.locator('#switchyard-trace .sy-trace-summary').innerText()).toMatch(/^Names · .* · 1 subgraph call$/);
    // A short answer: the response editor shows all of it.
    expect(JSON.parse(await editorText('.graphiql-response'))).toEqual({ data: { topProducts: [{ name: 'Table' }, { name: 'Couch' }] } });
  });

  it('closes with its button, and GraphiQL gets its full height back', async () => {
    const container = page.locator('.graphiql-container').first();
    const withPanel = (await container.boundingBox())!.height;
    await page.getByRole('button', { name: 'Hide the plan and trace' }).click();
    expect(await page.locator('#switchyard-trace').isHidden()).toBe(true);
    expect((await container.boundingBox())!.height).toBeGreaterThan(withPanel + 200);
  });

  it('logged no console error', () => {
    expect(consoleErrors).toEqual([]);
  });

  it('is not served where query_plans.enabled is false', async () => {
    const other = await browser.context.newPage();
    try {
      const assets: string[] = [];
      other.on('request', (request) => void assets.push(new URL(request.url()).pathname));
      await other.goto(`${plansOff.url}/`, { timeout: 15_000 });
      await other.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
      expect(await other.locator('#switchyard-trace').count()).toBe(0);
      expect(assets.filter((path) => path.includes('trace-panel'))).toEqual([]);
    } finally {
      await other.close();
    }
  });
});
