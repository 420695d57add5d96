/**
 * The playground at `GET /` in a real browser: headless Chromium loads it
 * from a router over the demo graph, with every request recorded (and any to
 * another origin refused), a query is typed into the editor and run, and the
 * documentation explorer is opened. A screenshot goes to test/artifacts/.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoSubgraphs } from '../../examples/demo/subgraphs.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { launchChromium, type Chromium } from './browser.js';

const ARTIFACTS = join(import.meta.dirname, '../artifacts');

let subgraphs: TestSubgraph[] = [];
let router: TestRouter;
let browser: Chromium;
let page: Page;
let origin: string;
const requests: string[] = [];
const consoleErrors: string[] = [];

beforeAll(async () => {
  subgraphs = await Promise.all(demoSubgraphs.map((s) => startSubgraph(s)));
  router = await startTestRouter({ subgraphs, listen: true });
  origin = router.url!;
  browser = await launchChromium();
  const { context } = browser;
  // Whatever asks for another host is recorded, and never leaves the machine.
  await context.route('**/*', (route) => (new URL(route.request().url()).origin === origin ? route.continue() : route.abort()));
  context.on('request', (request) => void requests.push(request.url()));
  page = context.pages()[0] ?? (await context.newPage());
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => void consoleErrors.push(error.message));
  await page.goto(`${origin}/`, { timeout: 15_000 });
  await page.locator('.graphiql-query-editor .monaco-editor').waitFor({ timeout: 15_000 });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await router?.close();
  await Promise.all(subgraphs.map((s) => s.close()));
});

/** Text of an editor as a reader sees it (Monaco renders spaces as no-break spaces). */
async function editorText(page: Page, selector: string): Promise<string> {
  return (await page.locator(`${selector} .view-lines`).innerText()).replace(/\u00a0/g, ' ');
}

describe('the playground in headless Chromium', () => {
  it('loads the page and its assets from the router alone', async () => {
    const paths = () =>
      requests
        .map((url) => new URL(url))
        .filter((url) => url.origin === origin)
        .map((url) => url.pathname);
    expect(paths()[0]).toBe('/');
    // The schema is fetched from /graphql once the editor is up, not before.
    await expect
      .poll(paths, { timeout: 10_000 })
      .toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^\/playground\/graphiql\.[0-9a-f]{12}\.js$/),
          expect.stringMatching(/^\/playground\/graphiql\.[0-9a-f]{12}\.css$/),
          '/graphql',
        ]),
      );
    expect(await page.title()).toBe('Switchyard playground');
  });

  it('runs a query typed into the editor and shows its result', async () => {
    await page.locator('.graphiql-query-editor .monaco-editor').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    // insertText types without the editor's bracket auto-closing getting in the way.
    await page.keyboard.insertText('query TopProducts { topProducts(first: 2) { name inStock reviews { author { username } } } }');
    await page.getByRole('button', { name: /^Prettify query/ }).click();
    await expect.poll(() => editorText(page, '.graphiql-query-editor'), { timeout: 10_000 }).toMatch(/^query TopProducts \{\n {2}topProducts\(first: 2\) \{\n/);
    await page.locator('.graphiql-execute-button').click();
    // The plan-and-trace panel opens under GraphiQL (trace-panel-in-chromium.test.ts); closed, the whole answer fits the response editor.
    await page.getByRole('button', { name: 'Hide the plan and trace' }).click();
    // Monaco renders only the lines in view: wait until the editor has its height back and the whole answer parses.
    const shown = async () => {
      try {
        return JSON.parse(await editorText(page, '.graphiql-response')) as unknown;
      } catch {
        return undefined;
      }
    };
    await expect.poll(shown, { timeout: 10_000 }).toEqual({
      data: {
        topProducts: [
          { name: 'Table', inStock: true, reviews: [{ author: { username: '@ada' } }, { author: { username: '@grace' } }] },
          { name: 'Couch', inStock: false, reviews: [{ author: { username: '@ada' } }] },
        ],
      },
    });
  });

  it("lists the graph's types in the documentation explorer", async () => {
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    const explorer = page.locator('.graphiql-doc-explorer');
    await expect.poll(() => explorer.innerText(), { timeout: 10_000 }).toContain('All Schema Types');
    const text = await explorer.innerText();
    for (const type of ['Query', 'Product', 'Review', 'User']) expect(text).toMatch(new RegExp(`\\b${type}\\b`));
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'playground.png') });
  });

  it('logged no console error and sent no request to another host', () => {
    expect(consoleErrors).toEqual([]);
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
  });
});
