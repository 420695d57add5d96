/**
 * The main listener's plugin routes and `/graphql` steps (the contract is
 * pipeline/http-routes.ts), gathered from the plugins in registration order:
 * internal ones (health, playground, CORS) first. Checked once at startup: a
 * path served twice, or `/graphql`, is refused there.
 */
import { RouterError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { GraphQLRequestStep, HttpAnswer, HttpRequest, HttpRoute } from '../pipeline/http-routes.js';
import type { PluginInstance } from '../pipeline/plugin.js';

/** The GraphQL endpoint: the router's own, never a plugin's. */
export const GRAPHQL_PATH = '/graphql';

interface OwnedRoute {
  readonly plugin: string;
  readonly log: Logger;
  readonly route: HttpRoute;
}

/** A `beforeGraphQL` step and its plugin. */
export interface OwnedStep {
  readonly plugin: string;
  readonly log: Logger;
  readonly step: (request: HttpRequest) => GraphQLRequestStep | undefined;
}

/** Routes that give way to a plugin serving the same path (`yieldingRoute`). */
const YIELDING = new WeakSet<HttpRoute>();

/**
 * Marks a built-in route as one that gives way: added after every plugin's
 * routes, and left out when one of them serves its path (the `/health`
 * alias, which a user plugin serving `/health` itself keeps).
 */
export function yieldingRoute(route: HttpRoute): HttpRoute {
  YIELDING.add(route);
  return route;
}

export class HttpRoutes {
  private readonly exact = new Map<string, OwnedRoute>();
  private readonly prefixes: OwnedRoute[] = [];
  /** `beforeGraphQL` steps in plugin order; empty when no plugin has one (no cost per request). */
  readonly graphqlSteps: readonly OwnedStep[];

  constructor(instances: ReadonlyArray<{ readonly name: string; readonly instance: PluginInstance; readonly log: Logger }>) {
    const steps: OwnedStep[] = [];
    const yielding: OwnedRoute[] = [];
    for (const { name, instance, log } of instances) {
      const http = instance.http;
      if (!http) continue;
      for (const route of http.routes ?? []) {
        if (YIELDING.has(route)) yielding.push({ plugin: name, log, route });
        else this.add({ plugin: name, log, route });
      }
      if (http.beforeGraphQL) steps.push({ plugin: name, log, step: http.beforeGraphQL.bind(http) });
    }
    for (const owned of yielding) if (!this.taken(owned.route)) this.add(owned);
    this.graphqlSteps = steps;
  }

  /** The route for a path and method, if any. */
  find(path: string, method: string): OwnedRoute | undefined {
    const owned = this.exact.get(path) ?? this.prefixes.find(({ route }) => path.startsWith(route.path));
    if (!owned) return undefined;
    const methods = owned.route.methods;
    return methods === undefined || methods.includes(method) ? owned : undefined;
  }

  private add(owned: OwnedRoute): void {
    const { plugin, route } = owned;
    if (typeof route.path !== 'string' || !route.path.startsWith('/') || typeof route.handle !== 'function') {
      throw new RouterError('PLUGIN_ERROR', `[${plugin}] an HTTP route needs a path starting with "/" and a handle function`);
    }
    if (overlaps(route, { path: GRAPHQL_PATH })) {
      throw new RouterError('PLUGIN_ERROR', `[${plugin}] the route ${route.path} would take ${GRAPHQL_PATH}, which the router serves`);
    }
    const taken = this.taken(route);
    if (taken) throw new RouterError('PLUGIN_DUPLICATE', `[${plugin}] the route ${route.path} overlaps ${taken.route.path}, served by plugin "${taken.plugin}"`);
    if (route.prefix) this.prefixes.push(owned);
    else this.exact.set(route.path, owned);
  }

  /** The route already serving some path `route` would serve. */
  private taken(route: HttpRoute): OwnedRoute | undefined {
    return [...this.exact.values(), ...this.prefixes].find((other) => overlaps(route, other.route));
  }
}

/** Whether some path would be claimed by both routes. */
function overlaps(a: Pick<HttpRoute, 'path' | 'prefix'>, b: Pick<HttpRoute, 'path' | 'prefix'>): boolean {
  if (a.prefix && b.prefix) return a.path.startsWith(b.path) || b.path.startsWith(a.path);
  if (a.prefix) return b.path.startsWith(a.path);
  if (b.prefix) return a.path.startsWith(b.path);
  return a.path === b.path;
}

/** Runs a route; a throw is the plugin's fault (logged with its name, answered 500 `PLUGIN_ERROR`), a body over the limit a 413. */
export async function runRoute(owned: OwnedRoute, request: HttpRequest): Promise<HttpAnswer | undefined> {
  try {
    return await owned.route.handle(request);
  } catch (error) {
    if (error instanceof RouterError && error.code === 'REQUEST_TOO_LARGE') return jsonError(413, error.message, 'REQUEST_TOO_LARGE');
    if (request.signal.aborted) throw error;
    owned.log.error({ err: error, path: request.path }, `[${owned.plugin}] HTTP route failed`);
    return jsonError(500, `Plugin "${owned.plugin}" failed to answer ${request.path}.`, 'PLUGIN_ERROR');
  }
}

/** `{"errors":[{message, extensions: {code}}]}` as an answer. */
export function jsonError(status: number, message: string, code: string): HttpAnswer {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ errors: [{ message, extensions: { code } }] }) };
}
