/**
 * `manifest.json`: every operation of one federated graph, in Cosmo Router's
 * format, so a manifest written by one router family loads in the other.
 *
 * ```json
 * {"version": 1, "revision": "…", "generatedAt": "2025-01-01T00:00:00.000Z",
 *  "operations": {"<sha256>": "<operation text>"}}
 * ```
 *
 * Relay ids pushed as aliases add an `aliases` object (`{"<relay id>": "<sha256>"}`),
 * written only when there are any; readers that do not know it ignore it.
 */
import { randomUUID } from 'node:crypto';
import { isRecord } from './json-value.js';
import { isSha256Hex, sha256Hex } from './operation-id.js';

/** The manifest of one federated graph. */
export interface OperationsManifest {
  /** Format version; always `1`. */
  readonly version: 1;
  /** Opaque; changes on every push and deletion. */
  readonly revision: string;
  /** When the manifest was written, ISO 8601. */
  readonly generatedAt: string;
  /** Operation text by SHA-256 id (lower-case hex), of every client. */
  readonly operations: Readonly<Record<string, string>>;
  /** SHA-256 id by alias (Relay ids). Absent when there are none. */
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
 * Parses and checks a manifest: version 1, a revision, and every id the
 * SHA-256 of its text (a corrupted or hand-edited entry is refused whole).
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
  if (typeof raw.generatedAt !== 'string') throw new ManifestFormatError('"generatedAt" must be a string');
  if (!isRecord(raw.operations)) throw new ManifestFormatError('"operations" must be an object of id -> operation text');
  const operations: Record<string, string> = {};
  let checked = 0;
  for (const [id, body] of Object.entries(raw.operations)) {
    if (typeof body !== 'string') throw new ManifestFormatError(`operation ${id}: the text must be a string`);
    if (!isSha256Hex(id)) throw new ManifestFormatError(`operation id "${id}" is not a SHA-256 (64 hex characters)`);
    if (sha256Hex(body) !== id.toLowerCase()) throw new ManifestFormatError(`operation ${id}: the id is not the SHA-256 of its text`);
    operations[id.toLowerCase()] = body;
    if (++checked % SLICE === 0) yield;
  }
  const manifest = { version: 1 as const, revision: raw.revision, generatedAt: raw.generatedAt, operations };
  if (raw.aliases === undefined) return manifest;
  if (!isRecord(raw.aliases)) throw new ManifestFormatError('"aliases" must be an object of alias -> id');
  // No prototype: an alias is any string a client chose, `__proto__` included.
  const aliases: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const [alias, id] of Object.entries(raw.aliases)) {
    if (typeof id !== 'string' || !Object.hasOwn(operations, id.toLowerCase())) throw new ManifestFormatError(`alias "${alias}" names no operation of the manifest`);
    aliases[alias] = id.toLowerCase();
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
