/**
 * `registry.json`: the clients of one graph and what each pushed, with the
 * metadata a management view shows. Operation texts live in the manifest
 * and in the per-operation files; this file holds no text.
 */
import { isRecord } from './json-value.js';

/** GraphQL operation kinds. */
export type OperationType = 'query' | 'mutation' | 'subscription';

/** One operation as registered for one client. */
export interface RegistryEntry {
  /** Operation name(s), comma-separated when a document holds several; null when anonymous. */
  readonly name: string | null;
  /** Kind of the (first) operation. */
  readonly type: OperationType;
  /** When it was first pushed for this client, ISO 8601. */
  readonly firstPushedAt: string;
  /** Other ids that resolve to it (Relay ids). */
  readonly aliases: readonly string[];
  /** SHA-256 of its normalized text, when that differs from its id (a hidden lookup key for the safelist). */
  readonly normalizedId?: string;
}

/** One client of a graph. */
export interface RegistryClient {
  /** When its first operation was pushed, ISO 8601. */
  readonly registeredAt: string;
  /** Its operations by SHA-256 id. */
  readonly operations: Readonly<Record<string, RegistryEntry>>;
}

/** The registry of one graph. */
export interface Registry {
  /** Format version; always `1`. */
  readonly version: 1;
  /** The revision of the manifest written with it; empty before the first push. */
  readonly revision: string;
  /** Clients by name. */
  readonly clients: Readonly<Record<string, RegistryClient>>;
}

/** An empty registry (a graph nothing was pushed to). */
export function emptyRegistry(): Registry {
  return { version: 1, revision: '', clients: {} };
}

/** Parses `registry.json`; throws with the reason when it is not one. */
export function parseRegistry(text: string, where: string): Registry {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error(`${where} is not valid JSON; restore it from a backup or delete the graph's folder and push again`);
  }
  if (!isRecord(raw) || raw.version !== 1 || typeof raw.revision !== 'string' || !isRecord(raw.clients)) {
    throw new Error(`${where} is not a registry of this Switchyard version (expected {"version": 1, "revision", "clients"})`);
  }
  // Safe after the shape check: the file is only written by serializeRegistry.
  return raw as unknown as Registry;
}

/** The registry as written to the store. */
export function serializeRegistry(registry: Registry): string {
  return `${JSON.stringify(registry, null, 2)}\n`;
}
