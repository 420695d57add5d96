/**
 * The plugin contract for HTTP on the main listener (`listen_addr`), beside
 * `/graphql`: a plugin's `PluginInstance.http` serves routes of its own
 * (health, the playground) and may step in before the router reads a
 * request to `/graphql` (CORS). docs/plugins.md "HTTP routes".
 */
import type { MaybePromise } from './hooks.js';

/** A request on the main listener as a plugin sees it. */
export interface HttpRequest {
  readonly method: string;
  /** The path, without the query string. */
  readonly path: string;
  /** The query string's parameters. */
  readonly query: URLSearchParams;
  /** A request header by lower-case name (repeated ones joined with `, `); undefined when absent. */
  header(name: string): string | undefined;
  /**
   * The body, at most `limits.max_request_body` bytes; a larger one rejects
   * and the router answers 413 `REQUEST_TOO_LARGE` (a route need not catch it).
   */
  body(): Promise<Uint8Array>;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
}

/** A complete answer. */
export interface HttpAnswer {
  readonly status: number;
  /** Default: none. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default: none. Left out of answers to HEAD. */
  readonly body?: string | Uint8Array;
}

/** A path a plugin answers on the main listener. */
export interface HttpRoute {
  /** `/health/live`; with `prefix`, every path starting with it (`/playground/`). Never `/graphql`. */
  readonly path: string;
  /** Default: false (the exact path). */
  readonly prefix?: boolean;
  /** Methods answered; another method gets the router's 404, as an unknown path. Default: every method. */
  readonly methods?: readonly string[];
  /** The answer; undefined: the router's 404. A throw is logged with the plugin's name and answered 500 `PLUGIN_ERROR`. */
  handle(request: HttpRequest): MaybePromise<HttpAnswer | undefined>;
}

/** What a `beforeGraphQL` step decides. */
export interface GraphQLRequestStep {
  /** The whole answer, earlier steps' headers added: the router neither reads nor runs the request (a CORS preflight). */
  readonly answer?: HttpAnswer;
  /**
   * Headers added to whatever answer the request gets (the router's, a later
   * step's answer or failure, a streamed one); a header the answer sets
   * itself wins, except `Vary`, whose values add up.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What a plugin serves on the main listener. */
export interface PluginHttp {
  /** Routes of the plugin's own; a path another plugin (or the router) serves is refused at startup. */
  readonly routes?: readonly HttpRoute[];
  /**
   * Runs for every request to `/graphql`, in plugin order, before CSRF
   * prevention and before the body is read; `body()` is not available here.
   * Undefined: nothing to add.
   */
  beforeGraphQL?(request: HttpRequest): GraphQLRequestStep | undefined;
}
