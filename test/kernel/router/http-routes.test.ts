/**
 * The plugin contract for HTTP on the main listener (`PluginInstance.http`):
 * a third-party plugin serves routes of its own and steps in before
 * `/graphql` reads a request, the way the built-in health, playground and
 * CORS plugins do; and a built-in feature that is off adds nothing.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, definePlugin, z, type HttpRoute, type SwitchyardPlugin } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

const JSON_TYPE = { 'content-type': 'application/json; charset=utf-8' };

/** A third-party plugin, written as one would be outside the repository. */
const useHello = definePlugin({
  name: 'hello-routes',
  options: z.object({ greeting: z.string().default('hello') }),
  setup: (_context, options) => ({
    http: {
      routes: [
        {
          path: '/hello',
          methods: ['GET', 'HEAD'],
          handle: (request) => ({
            status: 200,
            headers: JSON_TYPE,
            body: JSON.stringify({ greeting: options.greeting, name: request.query.get('name'), agent: request.header('x-agent') ?? null }),
          }),
        },
        { path: '/echo', methods: ['POST'], handle: async (request) => ({ status: 201, headers: { 'content-type': 'text/plain' }, body: await request.body() }) },
        { path: '/files/', prefix: true, handle: (request) => (request.path === '/files/a.txt' ? { status: 200, body: 'a' } : undefined) },
        {
          path: '/broken',
          handle: () => {
            throw new Error('the route broke');
          },
        },
      ],
      beforeGraphQL(request) {
        if (request.header('x-block') === 'yes') return { answer: { status: 403, headers: JSON_TYPE, body: '{"errors":[{"message":"blocked"}]}' } };
        return { headers: { 'x-seen-by': 'hello-routes' } };
      },
    },
  }),
});

let library: TestSubgraph;
let router: TestRouter;
const logs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  library = await startSubgraph(librarySubgraph());
  const logger = createLogger({
    level: 'error',
    destination: {
      write(text: string) {
        for (const line of text.split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  });
  router = await startTestRouter({ subgraphs: [library], listen: true, logger, plugins: [useHello({ greeting: 'hej' })], config: { limits: { max_request_body: '2KB' } } });
});

afterAll(async () => {
  await router?.close();
  await library?.close();
});

/** The same request over the socket and in-process: both answers. */
async function both(path: string, init: RequestInit = {}): Promise<Response[]> {
  return [await fetch(`${router.url}${path}`, init), await router.router.handle(new Request(`http://router.test${path}`, init))];
}

describe('a third-party plugin route on the main listener', () => {
  it('answers with what the route returns, reading the query and headers', async () => {
    for (const response of await both('/hello?name=kim', { headers: { 'x-agent': 'test' } })) {
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(JSON_TYPE['content-type']);
      expect(await response.json()).toEqual({ greeting: 'hej', name: 'kim', agent: 'test' });
    }
  });

  it('answers HEAD without a body, and a method the route does not list with 404', async () => {
    for (const response of await both('/hello', { method: 'HEAD' })) {
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('');
    }
    for (const response of await both('/hello', { method: 'DELETE' })) {
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ errors: [{ message: 'Not found: /hello' }] });
    }
  });

  it('reads a body, and refuses one over limits.max_request_body with 413', async () => {
    for (const response of await both('/echo', { method: 'POST', body: 'ping' })) {
      expect(response.status).toBe(201);
      expect(await response.text()).toBe('ping');
    }
    for (const response of await both('/echo', { method: 'POST', body: 'x'.repeat(3000) })) {
      expect(response.status).toBe(413);
      expect(await response.json()).toMatchObject({ errors: [{ extensions: { code: 'REQUEST_TOO_LARGE' } }] });
    }
  });

  it('refuses a chunked body over the limit too, and closes that connection', async () => {
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const req = httpRequest(`${router.url}/echo`, { method: 'POST' }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
      });
      req.on('error', reject);
      req.write('x'.repeat(1500));
      req.end('x'.repeat(1500));
    });
    expect(answer).toEqual({ status: 413, connection: 'close' });
  });

  it('serves a prefix route; an undefined answer is a 404', async () => {
    for (const response of await both('/files/a.txt')) expect([response.status, await response.text()]).toEqual([200, 'a']);
    for (const response of await both('/files/b.txt')) expect(response.status).toBe(404);
  });

  it('answers a route that throws with 500 PLUGIN_ERROR, logs the plugin, and keeps serving', async () => {
    for (const response of await both('/broken')) {
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({ errors: [{ message: 'Plugin "hello-routes" failed to answer /broken.', extensions: { code: 'PLUGIN_ERROR' } }] });
    }
    expect(logs.some((line) => line.plugin === 'hello-routes' && String(line.msg).includes('HTTP route failed'))).toBe(true);
    expect((await router.query('{ books { id } }')).status).toBe(200);
  });
});

describe('a plugin step before /graphql', () => {
  it('adds its headers to every answer on /graphql: the post lane, the general handler, in-process', async () => {
    const post = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ books { id } }' }) };
    const get = { method: 'GET' };
    for (const response of [...(await both('/graphql', post)), ...(await both('/graphql?query=%7Bbooks%7Bid%7D%7D', get)), ...(await both('/graphql', { method: 'PUT' }))]) {
      expect(response.headers.get('x-seen-by')).toBe('hello-routes');
    }
    // Not on the plugin's own routes or the health endpoints.
    expect((await fetch(`${router.url}/health/live`)).headers.get('x-seen-by')).toBeNull();
  });

  it('answers a request itself: nothing is read or run', async () => {
    const calls = library.calls.length;
    const init = { method: 'POST', headers: { 'content-type': 'application/json', 'x-block': 'yes' }, body: JSON.stringify({ query: 'mutation { addBook(title: "no") { id } }' }) };
    for (const response of await both('/graphql', init)) {
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ errors: [{ message: 'blocked' }] });
    }
    expect(library.calls.length).toBe(calls);
  });
});

describe('a step that throws', () => {
  it('answers 500 PLUGIN_ERROR naming the plugin, and runs nothing', async () => {
    const broken: SwitchyardPlugin = {
      name: 'broken-step',
      setup: () => ({
        http: {
          beforeGraphQL() {
            throw new Error('the step broke');
          },
        },
      }),
    };
    const probe = await startTestRouter({ subgraphs: [library], plugins: [broken] });
    const calls = library.calls.length;
    const response = await probe.fetch('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ books { id } }' }) });
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ errors: [{ message: 'Plugin "broken-step" failed on a request to /graphql.', extensions: { code: 'PLUGIN_ERROR' } }] });
    expect(library.calls.length).toBe(calls);
    await probe.close();
  });
});

describe('routes are checked at startup', () => {
  const routePlugin = (name: string, route: Partial<HttpRoute>): SwitchyardPlugin => ({
    name,
    setup: () => ({ http: { routes: [{ path: '/x', handle: () => ({ status: 204 }), ...route } as HttpRoute] } }),
  });
  const start = (plugins: SwitchyardPlugin[], config: Record<string, unknown> = {}) => startTestRouter({ subgraphs: [library], plugins, config });

  it('refuses a route on /graphql, or a prefix that would take it', async () => {
    await expect(start([routePlugin('takes-graphql', { path: '/graphql' })])).rejects.toThrow(/\[takes-graphql\] the route \/graphql would take \/graphql/);
    await expect(start([routePlugin('takes-prefix', { path: '/g', prefix: true })])).rejects.toThrow(/\[takes-prefix\] the route \/g would take \/graphql/);
  });

  it('refuses a path another plugin serves, naming it; with the playground off, / is free', async () => {
    await expect(start([routePlugin('my-home', { path: '/' })])).rejects.toMatchObject({ code: 'PLUGIN_DUPLICATE', message: expect.stringContaining('"switchyard/playground"') });
    await expect(start([routePlugin('a', { path: '/same' }), routePlugin('b', { path: '/same' })])).rejects.toThrow(/\[b\] the route \/same overlaps \/same, served by plugin "a"/);
    await expect(start([routePlugin('health-clash', { path: '/health/', prefix: true })])).rejects.toThrow(/served by plugin "switchyard\/health"/);
    const free = await start([routePlugin('my-home', { path: '/' })], { playground: { enabled: false } });
    expect((await free.fetch('/')).status).toBe(204);
    await free.close();
  });

  it('leaves /health to a plugin that serves it (the built-in alias of /health/live gives way), and keeps /health/live', async () => {
    const own = await start([routePlugin('my-health', { path: '/health', handle: () => ({ status: 200, body: 'mine' }) })]);
    const health = await own.fetch('/health');
    expect([health.status, await health.text()]).toEqual([200, 'mine']);
    expect(await (await own.fetch('/health/live')).json()).toEqual({ status: 'ok' });
    await own.close();
    // A prefix over /health/live still clashes with the built-in routes.
    await expect(start([routePlugin('health-prefix', { path: '/health', prefix: true })])).rejects.toThrow(/overlaps \/health\/live, served by plugin "switchyard\/health"/);
  });

  it('refuses a route without a path starting with / or without a handler', async () => {
    await expect(start([routePlugin('no-slash', { path: 'x' })])).rejects.toThrow(/\[no-slash\] an HTTP route needs a path starting with "\/"/);
    await expect(start([routePlugin('no-handler', { handle: undefined })])).rejects.toMatchObject({ code: 'PLUGIN_ERROR' });
  });
});

describe('built-in HTTP features that are off add nothing', () => {
  type Internal = { host: { httpRoutes: { graphqlSteps: readonly unknown[]; find(path: string, method: string): unknown } } };

  it('without CORS no step runs before /graphql; without the playground / is a 404', async () => {
    const off = await startTestRouter({ subgraphs: [library], config: { playground: { enabled: false } } });
    const routes = (off.router as unknown as Internal).host.httpRoutes;
    expect(routes.graphqlSteps).toHaveLength(0);
    expect(routes.find('/', 'GET')).toBeUndefined();
    expect((await off.fetch('/')).status).toBe(404);
    expect((await off.fetch('/health/live')).status).toBe(200);
    await off.close();
    const on = await startTestRouter({ subgraphs: [library], config: { cors: { enabled: true, allow_origins: ['https://app.example'] } } });
    expect((on.router as unknown as Internal).host.httpRoutes.graphqlSteps).toHaveLength(1);
    expect((on.router as unknown as Internal).host.httpRoutes.find('/', 'GET')).toBeDefined();
    await on.close();
  });

  it('fails startup on a bad cors.allow_origins entry, naming it', async () => {
    await expect(startTestRouter({ subgraphs: [library], config: { cors: { enabled: true, allow_origins: ['https://*'] } } })).rejects.toThrow(/cors\.allow_origins\[0\]/);
  });
});

describe('headers of earlier steps on every answer /graphql gets', () => {
  /** After CORS (a built-in, so first): answers 429 for `x-limit`, throws for `x-throw`; its results vary by `X-Client`. */
  const limiter: SwitchyardPlugin = {
    name: 'limiter',
    setup: () => ({
      http: {
        beforeGraphQL(request) {
          if (request.header('x-limit') === 'yes') return { answer: { status: 429, headers: { ...JSON_TYPE, 'retry-after': '1' }, body: '{"errors":[{"message":"slow down"}]}' } };
          if (request.header('x-throw') === 'yes') throw new Error('the limiter broke');
          return undefined;
        },
      },
      hooks: {
        onRespond: () => (after) => {
          after.setOutput({ ...after.output, headers: { ...after.output.headers, vary: 'X-Client' } });
        },
      },
    }),
  };
  let cors: TestRouter;
  const ORIGIN = 'https://app.example';

  beforeAll(async () => {
    cors = await startTestRouter({ subgraphs: [library], listen: true, plugins: [limiter], config: { cors: { enabled: true, allow_origins: [ORIGIN] } } });
  });
  afterAll(async () => {
    await cors?.close();
  });

  const corsBoth = async (headers: Record<string, string>): Promise<Response[]> => {
    const init = { method: 'POST', headers: { 'content-type': 'application/json', origin: ORIGIN, ...headers }, body: JSON.stringify({ query: '{ books { id } }' }) };
    return [await fetch(`${cors.url}/graphql`, init), await cors.router.handle(new Request('http://router.test/graphql', init))];
  };

  it('a later step that answers keeps them (CORS on a 429)', async () => {
    for (const response of await corsBoth({ 'x-limit': 'yes' })) {
      expect(response.status).toBe(429);
      expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(response.headers.get('vary')).toBe('Origin');
      expect(response.headers.get('retry-after')).toBe('1');
      expect(await response.json()).toEqual({ errors: [{ message: 'slow down' }] });
    }
  });

  it('a later step that throws keeps them on the 500 PLUGIN_ERROR', async () => {
    for (const response of await corsBoth({ 'x-throw': 'yes' })) {
      expect(response.status).toBe(500);
      expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect((await response.json()).errors[0].extensions.code).toBe('PLUGIN_ERROR');
    }
  });

  it("an answer's own Vary adds to the step's Vary: Origin, over a socket as in-process", async () => {
    for (const response of await corsBoth({})) {
      expect(response.status).toBe(200);
      expect(response.headers.get('access-control-allow-origin')).toBe(ORIGIN);
      expect(response.headers.get('vary')).toBe('X-Client, Origin');
    }
  });
});
