/**
 * The GraphiQL playground at `GET /`: a small HTML page that loads the
 * GraphiQL bundle, its styles and the editor's workers from
 * `/playground/<file>`, all served by the router itself (no outside host).
 * Asset names carry a content hash, so browsers keep them for a year and the
 * page itself (never cached) is a few hundred bytes per visit.
 */
import { createHash } from 'node:crypto';
import { asset, assetsByFile, loadPlaygroundBundle, type PlaygroundAsset } from './playground-assets.js';
import { TRACE_PANEL_SCRIPT, TRACE_PANEL_STYLES } from './playground-trace-panel.js';
import { acceptsGzip } from './response-compression.js';

/** Path prefix of the playground's assets. */
export const PLAYGROUND_ASSETS_PATH = '/playground/';

/** An HTTP answer of the playground. */
export interface PlaygroundReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Buffer<ArrayBuffer>;
}

/** Options of `Playground`. */
export interface PlaygroundOptions {
  /** Where the page sends operations. Default: `/graphql`. */
  readonly endpoint?: string;
  /** The page title. Default: `Switchyard playground`. */
  readonly title?: string;
  /**
   * Adds the plan-and-trace panel (playground-trace-panel.ts); it asks for
   * query plans and traces, so only where `query_plans.enabled`. Default: false.
   */
  readonly tracePanel?: boolean;
}

interface LoadedPlayground {
  readonly page: string;
  readonly contentSecurityPolicy: string;
  readonly files: ReadonlyMap<string, PlaygroundAsset>;
}

const IMMUTABLE = 'public, max-age=31536000, immutable';
/** Browsers take every playground answer as the type it says (a 404 echoing a path is never read as HTML). */
const NO_SNIFF = { 'x-content-type-options': 'nosniff' } as const;

/** Serves the playground page and its assets; loads the bundle on the first request. */
export class Playground {
  private loaded: Promise<LoadedPlayground> | undefined;

  constructor(private readonly options: PlaygroundOptions = {}) {}

  /**
   * Answers `/` and `/playground/<file>` (for GET and HEAD); undefined for
   * every other path. `acceptEncoding` is the request's `Accept-Encoding`.
   */
  async answer(path: string, acceptEncoding: string | undefined): Promise<PlaygroundReply | undefined> {
    if (path !== '/' && !path.startsWith(PLAYGROUND_ASSETS_PATH)) return undefined;
    const { page, contentSecurityPolicy, files } = await this.load();
    if (path === '/') {
      return {
        status: 200,
        headers: {
          'content-type': 'text/html; charset=utf-8',
          'cache-control': 'no-cache',
          'content-security-policy': contentSecurityPolicy,
          // No other page may frame the playground (clickjacking); `frame-ancestors` in the policy says the same to newer browsers.
          'x-frame-options': 'DENY',
          // The editor writes the operation into the page's URL: links followed from it must not carry that along.
          'referrer-policy': 'no-referrer',
          ...NO_SNIFF,
        },
        body: page,
      };
    }
    const asset = files.get(path.slice(PLAYGROUND_ASSETS_PATH.length));
    if (!asset) {
      return { status: 404, headers: { 'content-type': 'application/json; charset=utf-8', ...NO_SNIFF }, body: JSON.stringify({ errors: [{ message: `Not found: ${path}` }] }) };
    }
    const headers = { 'content-type': asset.contentType, 'cache-control': IMMUTABLE, vary: 'accept-encoding', ...NO_SNIFF };
    if (acceptEncoding !== undefined && acceptsGzip(acceptEncoding)) return { status: 200, headers: { ...headers, 'content-encoding': 'gzip' }, body: await asset.gzipped() };
    return { status: 200, headers, body: asset.bytes };
  }

  private load(): Promise<LoadedPlayground> {
    this.loaded ??= buildPlayground(this.options).catch((error: unknown) => {
      this.loaded = undefined;
      throw error;
    });
    return this.loaded;
  }
}

async function buildPlayground({ endpoint = '/graphql', title = 'Switchyard playground', tracePanel = false }: PlaygroundOptions): Promise<LoadedPlayground> {
  const bundle = await loadPlaygroundBundle();
  const url = (asset: PlaygroundAsset) => `${PLAYGROUND_ASSETS_PATH}${asset.file}`;
  const JS = 'text/javascript; charset=utf-8';
  const panel = tracePanel
    ? { js: asset('trace-panel', 'js', JS, Buffer.from(TRACE_PANEL_SCRIPT)), css: asset('trace-panel', 'css', 'text/css; charset=utf-8', Buffer.from(TRACE_PANEL_STYLES)) }
    : undefined;
  const workerUrls = {
    editorWorkerService: url(bundle.workers.editorWorkerService),
    json: url(bundle.workers.json),
    graphql: url(bundle.workers.graphql),
  };
  // Monaco asks for a worker by label; the environment must exist before the bundle runs.
  const environment = `self.MonacoEnvironment={globalAPI:false,getWorkerUrl:function(moduleId,label){return ${scriptJson(workerUrls)}[label];}};`;
  const start = `YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'),${scriptJson({ endpoint, title })});`;
  const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="${url(bundle.favicon)}" />
    <link rel="stylesheet" href="${url(bundle.css)}" />${
      panel
        ? `
    <link rel="stylesheet" href="${url(panel.css)}" />`
        : ''
    }
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>The playground needs JavaScript.</noscript>
    <div id="root"></div>
    <script>${environment}</script>${
      panel
        ? `
    <script src="${url(panel.js)}" data-endpoint="${escapeHtml(endpoint)}"></script>`
        : ''
    }
    <script src="${url(bundle.js)}"></script>
    <script>${start}</script>
  </body>
</html>
`;
  // Only the router's own origin, only the two inline scripts above, and never inside another page's frame.
  const contentSecurityPolicy = [
    "default-src 'self'",
    `script-src 'self' ${scriptHash(environment)} ${scriptHash(start)}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "worker-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  const files = new Map(assetsByFile(bundle));
  if (panel) for (const extra of [panel.js, panel.css]) files.set(extra.file, extra);
  return { page, contentSecurityPolicy, files };
}

/** JSON that is safe inside a `<script>` element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

function scriptHash(script: string): string {
  return `'sha256-${createHash('sha256').update(script).digest('base64')}'`;
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
