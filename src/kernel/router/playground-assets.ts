import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);

/** One file the playground page loads, served by the router under `/playground/`. */
export interface PlaygroundAsset {
  /** File name with a content hash (`graphiql.3f9a1c0d2b7e.js`), so it can be cached for good. */
  readonly file: string;
  readonly contentType: string;
  readonly bytes: Buffer<ArrayBuffer>;
  /** The gzip encoding, made on first use and kept. */
  gzipped(): Promise<Buffer<ArrayBuffer>>;
}

/** The GraphiQL bundle as separate files: the app, its styles, the editor's three workers, the icon. */
export interface PlaygroundBundle {
  readonly js: PlaygroundAsset;
  readonly css: PlaygroundAsset;
  readonly favicon: PlaygroundAsset;
  /** Monaco worker scripts by the label Monaco asks for. */
  readonly workers: { readonly editorWorkerService: PlaygroundAsset; readonly json: PlaygroundAsset; readonly graphql: PlaygroundAsset };
}

const JS = 'text/javascript; charset=utf-8';

/**
 * Loads GraphiQL as @graphql-yoga/render-graphiql bundles it (about 9 MB of
 * strings, so only when the playground is first asked for) and splits it
 * into files. Yoga's own page inlines all of it into every HTML response.
 */
export async function loadPlaygroundBundle(): Promise<PlaygroundBundle> {
  const bundle = await import('@graphql-yoga/render-graphiql/graphiql');
  return {
    js: asset('graphiql', 'js', JS, Buffer.from(bundle.js)),
    css: asset('graphiql', 'css', 'text/css; charset=utf-8', Buffer.from(bundle.css)),
    favicon: asset('favicon', 'ico', 'image/x-icon', dataUrlBytes(bundle.favicon)),
    workers: {
      editorWorkerService: asset('editor.worker', 'js', JS, Buffer.from(bundle.editorWorkerService)),
      json: asset('json.worker', 'js', JS, Buffer.from(bundle.jsonWorker)),
      graphql: asset('graphql.worker', 'js', JS, Buffer.from(bundle.graphqlWorker)),
    },
  };
}

/** Every asset of a bundle, by file name. */
export function assetsByFile(bundle: PlaygroundBundle): ReadonlyMap<string, PlaygroundAsset> {
  const all = [bundle.js, bundle.css, bundle.favicon, bundle.workers.editorWorkerService, bundle.workers.json, bundle.workers.graphql];
  return new Map(all.map((entry) => [entry.file, entry]));
}

/** An asset named `<name>.<content hash>.<extension>`. */
export function asset(name: string, extension: string, contentType: string, bytes: Buffer<ArrayBuffer>): PlaygroundAsset {
  const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  let compressed: Promise<Buffer<ArrayBuffer>> | undefined;
  return {
    file: `${name}.${hash}.${extension}`,
    contentType,
    bytes,
    // zlib runs on the thread pool: the first visitor waits, requests do not.
    // The copy is backed by a plain ArrayBuffer, which fetch's Response accepts as a body.
    gzipped: () => (compressed ??= gzipAsync(bytes, { level: 9 }).then((encoded) => Buffer.from(encoded))),
  };
}

/** The bytes of a `data:<type>;base64,<data>` URL. */
function dataUrlBytes(dataUrl: string): Buffer<ArrayBuffer> {
  const comma = dataUrl.indexOf(',');
  return Buffer.from(dataUrl.slice(comma + 1), 'base64');
}
