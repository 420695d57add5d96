/**
 * What of a subgraph's errors reaches clients (`subgraph_error_propagation`,
 * in Cosmo's shape). A subgraph error can carry anything its server put in
 * it (stack traces, SQL, internal hostnames), so by default a client gets
 * only its `message`, its `path` (the client's path) and `extensions.code`.
 *
 * - `pass-through`: each subgraph error becomes one client error, filtered.
 * - `wrapped`: one error per fetch that got errors,
 *   `Failed to fetch from Subgraph '<name>'.` (`... at Path 'a.@.b'.` for an
 *   entity fetch, as Cosmo writes it), with the filtered subgraph errors in
 *   `extensions.errors`.
 * - `omit_extensions`: no `extensions` at all on what clients get of
 *   subgraph errors (in `wrapped` mode, then, just the message), as Cosmo.
 * - `enabled: false`: one such error per fetch, without the subgraph's errors.
 *
 * Errors a transport or plugin builds itself inside a subgraph answer (a gRPC
 * deadline, an unreachable service) are the router's own: marked with
 * `ROUTER_MADE_ERROR` they pass as made, with `extensions.serviceName`, like
 * the errors of a fetch that failed outright.
 *
 * The policy is compiled once per config object; an answer without errors
 * costs nothing here.
 */
import { coreConfigShape, type SubgraphErrorPropagationConfig } from '../config/core-schema.js';
import type { GraphQLErrorJSON } from '../errors.js';
import { setOwn } from '../own-property.js';

/**
 * Marks an error in a subgraph answer as built by the router (a transport or
 * plugin), not sent by the subgraph: it is forwarded as it is, whatever the
 * policy. A registered symbol, so plugins can set it without importing this
 * module: `error[Symbol.for('switchyard.router-made-error')] = true`.
 */
export const ROUTER_MADE_ERROR: unique symbol = Symbol.for('switchyard.router-made-error');

/** Marks `error` as router-made (see `ROUTER_MADE_ERROR`) and returns it. */
export function routerMadeError<T extends GraphQLErrorJSON>(error: T): T {
  (error as T & { [ROUTER_MADE_ERROR]?: true })[ROUTER_MADE_ERROR] = true;
  return error;
}

/** Several client paths for one subgraph error: an entity found at several positions of the response failed at each. */
export class ErrorPaths {
  constructor(readonly paths: ReadonlyArray<ReadonlyArray<string | number>>) {}
}

/**
 * The client path of a subgraph error (or `ErrorPaths`: each of its client
 * paths, one client error each), or undefined when it has none the client
 * could use.
 */
export type ErrorPathMapper = (error: GraphQLErrorJSON) => ReadonlyArray<string | number> | ErrorPaths | undefined;

/** A compiled `subgraph_error_propagation`. */
export interface SubgraphErrorPolicy {
  /**
   * Appends to `out` what clients see of the errors of one subgraph answer.
   * `clientPath` rewrites a subgraph error's path to the client's (used
   * when `rewrite_paths` is on, and always for router-made errors).
   * `fetchPath`: where an entity fetch's objects sit (`a`, `@`, `b`), named in
   * the one error of a wrapped or withheld fetch; none for a root fetch.
   */
  report(out: GraphQLErrorJSON[], subgraph: string, errors: readonly GraphQLErrorJSON[], clientPath: ErrorPathMapper, fetchPath?: readonly string[]): void;
}

/** Error fields with options of their own; `allowed_fields` cannot name them. */
const RESERVED_FIELDS = new Set(['message', 'path', 'locations', 'extensions']);

class CompiledErrorPolicy implements SubgraphErrorPolicy {
  private readonly enabled: boolean;
  private readonly wrapped: boolean;
  private readonly rewritePaths: boolean;
  private readonly keepLocations: boolean;
  private readonly keepExtensions: boolean;
  private readonly allowAllExtensions: boolean;
  private readonly allowedExtensions: readonly string[];
  private readonly allowedFields: readonly string[];
  private readonly serviceName: boolean;
  private readonly defaultCode: string;

  constructor(config: SubgraphErrorPropagationConfig) {
    this.enabled = config.enabled;
    this.wrapped = config.mode === 'wrapped';
    this.rewritePaths = config.rewrite_paths;
    this.keepLocations = !config.omit_locations;
    this.keepExtensions = !config.omit_extensions;
    this.allowAllExtensions = config.allow_all_extension_fields;
    this.allowedExtensions = [...new Set(config.allowed_extension_fields)];
    this.allowedFields = [...new Set(config.allowed_fields)].filter((name) => !RESERVED_FIELDS.has(name));
    this.serviceName = config.attach_service_name;
    this.defaultCode = config.default_extension_code;
  }

  report(out: GraphQLErrorJSON[], subgraph: string, errors: readonly GraphQLErrorJSON[], clientPath: ErrorPathMapper, fetchPath?: readonly string[]): void {
    let forwarded: GraphQLErrorJSON[] | undefined;
    let withheld = false;
    for (const error of errors) {
      if (isRouterMade(error)) {
        const path = clientPath(error);
        if (path instanceof ErrorPaths) for (const each of path.paths) out.push(routerMade(error, subgraph, each));
        else out.push(routerMade(error, subgraph, path));
      } else if (!this.enabled) {
        withheld = true;
      } else {
        const into = this.wrapped ? (forwarded ??= []) : out;
        const path = this.rewritePaths ? clientPath(error) : error.path;
        if (path instanceof ErrorPaths) for (const each of path.paths) into.push(this.filter(error, subgraph, each));
        else into.push(this.filter(error, subgraph, path));
      }
    }
    if (withheld) out.push(this.fetchError(subgraph, fetchPath, undefined));
    if (forwarded) out.push(this.fetchError(subgraph, fetchPath, forwarded));
  }

  /** One subgraph error as clients see it. */
  private filter(error: GraphQLErrorJSON, subgraph: string, path: unknown): GraphQLErrorJSON {
    const json: GraphQLErrorJSON = { message: typeof error.message === 'string' ? error.message : 'Subgraph error' };
    const clean = cleanPath(path);
    if (clean) json.path = clean;
    if (this.keepLocations) {
      const locations = cleanLocations(error.locations);
      if (locations) json.locations = locations;
    }
    const extensions = this.extensionsOf(error.extensions, this.wrapped ? undefined : subgraph);
    if (extensions) json.extensions = extensions;
    for (const name of this.allowedFields) {
      if (Object.hasOwn(error, name)) setOwn(json as unknown as Record<string, unknown>, name, (error as unknown as Record<string, unknown>)[name]);
    }
    return json;
  }

  /** The forwarded `extensions` of one error: allowed fields, then the default code and the service name; none with `omit_extensions`. */
  private extensionsOf(source: unknown, serviceName: string | undefined): Record<string, unknown> | undefined {
    if (!this.keepExtensions) return undefined;
    let extensions: Record<string, unknown> | undefined;
    if (isObject(source)) {
      if (this.allowAllExtensions) {
        for (const name of Object.keys(source)) setOwn((extensions ??= {}), name, source[name]);
      } else {
        for (const name of this.allowedExtensions) if (Object.hasOwn(source, name)) setOwn((extensions ??= {}), name, source[name]);
      }
    }
    if (this.defaultCode !== '' && (extensions?.code === undefined || extensions.code === null)) (extensions ??= {}).code = this.defaultCode;
    if (this.serviceName && serviceName !== undefined) (extensions ??= {}).serviceName = serviceName;
    return extensions;
  }

  /** The one error of a fetch: wrapping the subgraph's errors (`wrapped`), or standing for them (disabled). */
  private fetchError(subgraph: string, fetchPath: readonly string[] | undefined, errors: GraphQLErrorJSON[] | undefined): GraphQLErrorJSON {
    const json: GraphQLErrorJSON = { message: `Failed to fetch from Subgraph '${subgraph}'${atPath(fetchPath)}.` };
    if (!this.keepExtensions) return json;
    const extensions: Record<string, unknown> = {};
    if (errors) extensions.errors = errors;
    if (this.defaultCode !== '') extensions.code = this.defaultCode;
    if (this.serviceName) extensions.serviceName = subgraph;
    if (Object.keys(extensions).length > 0) json.extensions = extensions;
    return json;
  }
}

/**
 * ` at Path 'a.@.b'` for an entity fetch's path, as Cosmo names it: response
 * keys joined by dots, `@` for list items between them (not after the last
 * key), type conditions left out.
 */
function atPath(fetchPath: readonly string[] | undefined): string {
  if (!fetchPath) return '';
  const steps = fetchPath.filter((step) => !step.startsWith('... on '));
  while (steps.at(-1) === '@') steps.pop();
  return steps.length === 0 ? '' : ` at Path '${steps.join('.')}'`;
}

function isRouterMade(error: GraphQLErrorJSON): boolean {
  return (error as GraphQLErrorJSON & { [ROUTER_MADE_ERROR]?: unknown })[ROUTER_MADE_ERROR] === true;
}

/** A router-made error: as made, at the client's path, with the subgraph's name. */
function routerMade(error: GraphQLErrorJSON, subgraph: string, path: ReadonlyArray<string | number> | undefined): GraphQLErrorJSON {
  const json: GraphQLErrorJSON = { message: error.message };
  const clean = cleanPath(path);
  if (clean) json.path = clean;
  json.extensions = { ...(isObject(error.extensions) ? error.extensions : {}), serviceName: subgraph };
  return json;
}

/** Longest path passed on: documents nest at most 256 levels, so a response path is never near this. */
const MAX_PATH_SEGMENTS = 1024;

/** A copy of a path made of names and list indexes (whole numbers from 0); undefined for an empty, malformed or absurdly long one. */
function cleanPath(path: unknown): Array<string | number> | undefined {
  if (!Array.isArray(path) || path.length === 0 || path.length > MAX_PATH_SEGMENTS) return undefined;
  for (const segment of path) {
    if (typeof segment !== 'string' && !(typeof segment === 'number' && Number.isSafeInteger(segment) && segment >= 0)) return undefined;
  }
  return [...(path as Array<string | number>)];
}

/** `locations` reduced to `{line, column}` numbers; undefined when malformed. */
function cleanLocations(locations: unknown): Array<{ line: number; column: number }> | undefined {
  if (!Array.isArray(locations) || locations.length === 0) return undefined;
  const clean: Array<{ line: number; column: number }> = [];
  for (const location of locations) {
    if (!isObject(location) || typeof location.line !== 'number' || typeof location.column !== 'number') return undefined;
    clean.push({ line: location.line, column: location.column });
  }
  return clean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const compiled = new WeakMap<SubgraphErrorPropagationConfig, SubgraphErrorPolicy>();

/** The policy of the defaults (`coreConfigShape`'s), for callers without a config. */
export const DEFAULT_SUBGRAPH_ERROR_POLICY: SubgraphErrorPolicy = new CompiledErrorPolicy(coreConfigShape.subgraph_error_propagation.parse(undefined));

/** The compiled policy of a `subgraph_error_propagation` section (compiled once per config object). */
export function subgraphErrorPolicy(config: SubgraphErrorPropagationConfig | undefined): SubgraphErrorPolicy {
  if (!config) return DEFAULT_SUBGRAPH_ERROR_POLICY;
  let policy = compiled.get(config);
  if (!policy) {
    policy = new CompiledErrorPolicy(config);
    compiled.set(config, policy);
  }
  return policy;
}
