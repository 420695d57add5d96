/**
 * The file layout every provider shares (an HTTP host serves the same tree
 * a directory store writes):
 *
 * ```
 * <graph>/manifest.json                      every operation of the graph (manifest.ts)
 * <graph>/registry.json                      clients and operation metadata (registry.ts)
 * <graph>/operations/<client>/<key>.json     {"version":1,"id":"<sha256>","body":"…"}
 * ```
 *
 * This is Cosmo's layout under its `<organization id>/` folder: Cosmo writes
 * `<graph>/operations/<client>/<id>.json` as `{"version":1,"body":"…"}` (no
 * `id`; the file name is the client's id) and its manifest at
 * `<graph>/operations/manifest.json`, which is read when
 * `<graph>/manifest.json` is absent.
 *
 * `<key>` is the SHA-256 id, a Relay alias, or the SHA-256 of the normalized
 * text (so the safelist finds equivalent texts). Names are percent-encoded
 * path segments.
 */

const MAX_NAME_LENGTH = 200;
/**
 * Longest path segment once percent-encoded: a file is named `<segment>.json`
 * and file systems allow 255 bytes per name.
 */
const MAX_SEGMENT_LENGTH = 240;
/** Half of a UTF-16 surrogate pair without its other half (percent-encoding cannot write it). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a graph or client name cannot be used, or undefined when it can. */
export function nameProblem(kind: 'graph' | 'client', name: string): string | undefined {
  if (name.trim() === '') return `the ${kind} name is empty`;
  if (name.length > MAX_NAME_LENGTH) return `the ${kind} name is longer than ${MAX_NAME_LENGTH} characters`;
  if (name === '.' || name === '..') return `"${name}" is not a usable ${kind} name`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return `the ${kind} name contains control characters`;
  if (LONE_SURROGATE.test(name)) return `the ${kind} name is not well-formed Unicode`;
  if (segment(name).length > MAX_SEGMENT_LENGTH) return `the ${kind} name is longer than ${MAX_SEGMENT_LENGTH} characters once percent-encoded`;
  return undefined;
}

/**
 * Why a lookup key (an operation id, alias or normalized id) can never name
 * a file of the store, or undefined when it can. Keys that cannot are not
 * looked up at all: a client's junk id never reaches the storage.
 */
export function keyProblem(key: string): string | undefined {
  if (key === '') return 'the id is empty';
  if (key.length > MAX_SEGMENT_LENGTH) return `the id is longer than ${MAX_SEGMENT_LENGTH} characters`;
  if (/[\u0000-\u001f\u007f]/.test(key)) return 'the id contains control characters';
  if (LONE_SURROGATE.test(key)) return 'the id is not well-formed Unicode';
  if (segment(key).length > MAX_SEGMENT_LENGTH) return `the id is longer than ${MAX_SEGMENT_LENGTH} characters once percent-encoded`;
  return undefined;
}

/** One path segment for a name (graph, client, key). */
export function segment(name: string): string {
  return encodeURIComponent(name);
}

/** `<graph>/manifest.json` */
export function manifestPath(graph: string): string {
  return `${segment(graph)}/manifest.json`;
}

/** `<graph>/operations/manifest.json`: where Cosmo keeps a graph's manifest (read when `manifestPath` is absent). */
export function cosmoManifestPath(graph: string): string {
  return `${segment(graph)}/operations/manifest.json`;
}

/** `<graph>/registry.json` */
export function registryPath(graph: string): string {
  return `${segment(graph)}/registry.json`;
}

/** `<graph>/operations/<client>/<key>.json` */
export function operationPath(graph: string, client: string, key: string): string {
  return `${segment(graph)}/operations/${segment(client)}/${segment(key)}.json`;
}

/** Whether a path is one operation's file (`<graph>/operations/<client>/<key>.json`), not a graph-wide file. */
export function isOperationFile(path: string): boolean {
  return path.split('/').length === 4;
}
