/**
 * `manifest.json`: every operation of one federated graph, in Cosmo Router's
 * format, so a manifest written by one router family loads in the other.
 *
 * ```json
 * {"version": 1, "revision": "…", "generatedAt": "2025-01-01T00:00:00.000Z",
 *  "operations": {"<id>": "<operation text>"}}
 * ```
 *
 * `switchyard operations push` writes SHA-256 ids; a manifest from Cosmo
 * may carry ids its clients chose (Relay or Apollo manifest ids, any
 * string): those are loaded as they are and found by that id. An id of 64
 * hex characters is read in lower case, as requests' hashes are.
 *
 * Relay ids pushed as aliases add an `aliases` object (`{"<relay id>": "<id>"}`),
 * written only when there are any; readers that do not know it ignore it.
 */
import { randomUUID } from 'node:crypto';
import { isRecord } from './json-value.js';
import { isSha256Hex } from './operation-id.js';

/** The manifest of one federated graph. */
export interface OperationsManifest {
  /** Format version; always `1`. */
  readonly version: 1;
  /** Opaque; changes on every push and deletion. */
  readonly revision: string;
  /** When the manifest was written, ISO 8601; empty when a manifest read had none (Cosmo does not require it). */
  readonly generatedAt: string;
  /**
   * Operation text by id, of every client (a prototype-free object). Ids
   * Switchyard writes are SHA-256 (lower-case hex); a Cosmo manifest's may be
   * any non-empty string its clients chose.
   */
  readonly operations: Readonly<Record<string, string>>;
  /** Id by alias (Relay ids). Absent when there are none. */
  readonly aliases?: Readonly<Record<string, string>>;
}

/** Thrown when a manifest's text is not a valid manifest; the message says why. */
export class ManifestFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ManifestFormatError';
  }
}

/** A new revision string: unique for every write. */
export function newRevision(): string {
  return randomUUID();
}

/** Entries checked between two pauses of `parseManifestInSlices`. */
const SLICE = 500;

/**
 * Parses and checks a manifest: version 1, a non-empty revision, an
 * `operations` object of non-empty id -> string text (Cosmo's checks, plus
 * the types). An id need not be the SHA-256 of its text (Cosmo's ids are
 * client-supplied). Hex ids are read in lower case; of two that differ only
 * in case, the first stands.
 */
export function parseManifest(text: string): OperationsManifest {
  const steps = manifestParser(text);
  for (let step = steps.next(); ; step = steps.next()) if (step.done) return step.value;
}

/**
 * `parseManifest`, pausing for the event loop every few hundred entries, so
 * a router reloading a manifest of thousands of operations keeps answering
 * requests meanwhile.
 */
export async function parseManifestInSlices(text: string, pause: () => Promise<unknown>): Promise<OperationsManifest> {
  const steps = manifestParser(text);
  for (let step = steps.next(); ; step = steps.next()) {
    if (step.done) return step.value;
    await pause();
  }
}

/** The parser, yielding after every slice of entries. */
function* manifestParser(text: string): Generator<void, OperationsManifest> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ManifestFormatError(`not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isRecord(raw)) throw new ManifestFormatError('expected a JSON object');
  if (raw.version !== 1) throw new ManifestFormatError(`unsupported version ${JSON.stringify(raw.version)}; only version 1 is read`);
  if (typeof raw.revision !== 'string' || raw.revision === '') throw new ManifestFormatError('"revision" must be a non-empty string');
  if (raw.generatedAt !== undefined && raw.generatedAt !== null && typeof raw.generatedAt !== 'string') throw new ManifestFormatError('"generatedAt" must be a string');
  if (!isRecord(raw.operations)) throw new ManifestFormatError('"operations" must be an object of id -> operation text');
  // No prototype: an id is any string a client chose, `__proto__` included.
  const operations: Record<string, string> = Object.create(null) as Record<string, string>;
  let checked = 0;
  for (const [id, body] of Object.entries(raw.operations)) {
    if (typeof body !== 'string') throw new ManifestFormatError(`operation ${JSON.stringify(id)}: the text must be a string`);
    const key = isSha256Hex(id) ? id.toLowerCase() : id;
    // Two hex ids differing only in case: the first one stands (Cosmo would keep both, but requests' hashes are case-insensitive here).
    if (!Object.hasOwn(operations, key)) operations[key] = body;
    if (++checked % SLICE === 0) yield;
  }
  const manifest = { version: 1 as const, revision: raw.revision, generatedAt: typeof raw.generatedAt === 'string' ? raw.generatedAt : '', operations };
  if (raw.aliases === undefined) return manifest;
  if (!isRecord(raw.aliases)) throw new ManifestFormatError('"aliases" must be an object of alias -> id');
  // No prototype: an alias is any string a client chose, `__proto__` included.
  const aliases: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [alias, id] of Object.entries(raw.aliases)) {
    const target = typeof id === 'string' && isSha256Hex(id) ? id.toLowerCase() : id;
    if (typeof target !== 'string' || !Object.hasOwn(operations, target)) throw new ManifestFormatError(`alias "${alias}" names no operation of the manifest`);
    aliases[alias] = target;
  }
  return { ...manifest, aliases };
}

/** The manifest as written to the store (stable key order, two-space indent). */
export function serializeManifest(manifest: OperationsManifest): string {
  const { version, revision, generatedAt, operations, aliases } = manifest;
  const sorted = Object.fromEntries(Object.entries(operations).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const out: Record<string, unknown> = { version, revision, generatedAt, operations: sorted };
  if (aliases && Object.keys(aliases).length > 0) out.aliases = aliases;
  return `${JSON.stringify(out, null, 2)}\n`;
}
