/** The playground over plain HTTP: a small page, hashed assets cached for good, gzip when asked, and nothing else. */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { useLibraryRouter } from '../kernel/library-hooks.js';

let library: TestSubgraph;
let router: TestRouter;
useLibraryRouter((started) => ({ library, router } = started));

/** A raw HTTP GET (fetch would decode gzip itself and hide the encoding). */
function get(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${router.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function assetPaths(): Promise<string[]> {
  const page = (await get('/')).body.toString('utf8');
  return [...page.matchAll(/(?:src|href)="(\/playground\/[^"]+)"/g)].map((match) => match[1]!);
}

describe('the playground over HTTP', () => {
  it('answers / with a small page that loads everything from /playground/ and allows no other origin', async () => {
    const response = await get('/');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.body.length).toBeLessThan(4096);
    const page = response.body.toString('utf8');
    expect(page).not.toMatch(/https?:\/\//);
    expect(await assetPaths()).toEqual([
      expect.stringMatching(/^\/playground\/favicon\.[0-9a-f]{12}\.ico$/),
      expect.stringMatching(/^\/playground\/graphiql\.[0-9a-f]{12}\.css$/),
      // The plan-and-trace panel (query_plans.enabled follows introspection.enabled, on by default).
      expect.stringMatching(/^\/playground\/trace-panel\.[0-9a-f]{12}\.css$/),
      expect.stringMatching(/^\/playground\/trace-panel\.[0-9a-f]{12}\.js$/),
      expect.stringMatching(/^\/playground\/graphiql\.[0-9a-f]{12}\.js$/),
    ]);
    for (const worker of ['editor.worker', 'json.worker', 'graphql.worker']) expect(page).toMatch(new RegExp(`"/playground/${worker}\\.[0-9a-f]{12}\\.js"`));
    const policy = String(response.headers['content-security-policy']);
    expect(policy).toMatch(/^default-src 'self'; script-src 'self' 'sha256-[^']+' 'sha256-[^']+'; /);
    expect(policy).not.toMatch(/https?:|\*|unsafe-eval/);
  });

  it('serves each asset with a year-long immutable cache lifetime, gzip-encoded when the client accepts it', async () => {
    const [favicon, css, panelCss, panelJs, js] = await assetPaths();
    const plain = await get(js!);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.vary).toBe('accept-encoding');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString('utf8')).toContain('renderYogaGraphiQL');

    const zipped = await get(js!, { 'accept-encoding': 'gzip, deflate, br' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(zipped.body.length).toBeLessThan(plain.body.length / 3);
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);

    expect((await get(js!, { 'accept-encoding': 'gzip;q=0, identity' })).headers['content-encoding']).toBeUndefined();
    expect((await get(css!)).headers['content-type']).toBe('text/css; charset=utf-8');
    expect((await get(panelCss!)).headers['content-type']).toBe('text/css; charset=utf-8');
    const panel = await get(panelJs!);
    expect([panel.headers['content-type'], panel.headers['cache-control']]).toEqual(['text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    expect(panel.body.toString('utf8')).toContain("'x-switchyard-include-trace'");
    const icon = await get(favicon!);
    expect([icon.headers['content-type'], icon.body.subarray(0, 4).toString('hex')]).toEqual(['image/x-icon', '00000100']);
  });

  it('answers HEAD with the headers and no body', async () => {
    const response = await get('/', {}, 'HEAD');
    expect([response.status, response.headers['content-type'], response.body.length]).toEqual([200, 'text/html; charset=utf-8', 0]);
  });

  it('answers an unknown or outdated asset name, and methods other than GET and HEAD, with 404', async () => {
    const missing = await get('/playground/graphiql.000000000000.js');
    expect([missing.status, JSON.parse(missing.body.toString('utf8'))]).toEqual([404, { errors: [{ message: 'Not found: /playground/graphiql.000000000000.js' }] }]);
    const js = (await assetPaths()).at(-1);
    expect((await get(js!, {}, 'POST')).status).toBe(404);
    expect((await get('/', {}, 'DELETE')).status).toBe(404);
  });

  it('serves neither the page nor its assets when playground.enabled is false', async () => {
    const js = (await assetPaths()).at(-1);
    const off = await startTestRouter({ subgraphs: [library], config: { playground: { enabled: false } } });
    try {
      expect((await off.fetch('/')).status).toBe(404);
      expect((await off.fetch(js!)).status).toBe(404);
      expect((await off.query('{ books { id } }')).status).toBe(200);
    } finally {
      await off.close();
    }
  });

  it('leaves the plan-and-trace panel out where query_plans.enabled is false', async () => {
    const panelJs = (await assetPaths()).find((path) => path.includes('/trace-panel.') && path.endsWith('.js'));
    const off = await startTestRouter({ subgraphs: [library], config: { query_plans: { enabled: false } } });
    try {
      const page = await (await off.fetch('/')).text();
      expect(page).toContain('/playground/graphiql.');
      expect(page).not.toContain('trace-panel');
      expect((await off.fetch(panelJs!)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
