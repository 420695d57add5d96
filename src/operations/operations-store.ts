/**
 * The operations store: what `switchyard operations` writes and the router
 * reads. Operations are kept per federated graph and per client name; every
 * push and deletion rewrites the graph's registry and its manifest under a
 * new revision. Works over any `OperationsStorage` provider.
 */
import { isRecord } from './json-value.js';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { ManifestFormatError, newRevision, parseManifest, parseManifestInSlices, serializeManifest, type OperationsManifest } from './manifest.js';
import { canonicalAlias, isSha256Hex, sha256Hex } from './operation-id.js';
import { emptyRegistry, parseRegistry, serializeRegistry, type OperationType, type Registry, type RegistryClient, type RegistryEntry } from './registry.js';
import { cosmoManifestPath, keyProblem, manifestPath, nameProblem, operationPath, registryPath } from './store-layout.js';
import { ReadOnlyStoreError, type OperationsStorage, type StorageChange } from './storage.js';

/** One operation to push (validated, id = SHA-256 of `body`). */
export interface OperationInput {
  /** SHA-256 of `body`, lower-case hex. */
  readonly id: string;
  /** The operation text, exactly as pushed. */
  readonly body: string;
  /** Operation name(s); null when anonymous. */
  readonly name: string | null;
  readonly type: OperationType;
  /** Other ids it should resolve under (Relay ids). Default: none. */
  readonly aliases?: readonly string[];
  /** SHA-256 of the normalized text. Default: none. */
  readonly normalizedId?: string;
}

/** What a push did with one operation. */
export interface PushedOperation {
  /** SHA-256 id. */
  readonly id: string;
  /** Operation name(s); null when anonymous. */
  readonly name: string | null;
  /** `created`: new for this client; `up to date`: the client had it already. */
  readonly status: 'created' | 'up to date';
}

/** An operation as `operations list` shows it. */
export interface RegisteredOperation {
  /** Federated graph name. */
  readonly graph: string;
  /** Client name it was pushed under. */
  readonly client: string;
  /** SHA-256 id. */
  readonly id: string;
  /** Operation name(s), comma-separated; null when anonymous. */
  readonly name: string | null;
  /** Kind of the (first) operation. */
  readonly type: OperationType;
  /** Other ids that resolve to it (Relay ids); empty when none. */
  readonly aliases: readonly string[];
  /** When the client first pushed it, ISO 8601. */
  readonly firstPushedAt: string;
}

/** An operation found by id or alias. */
export interface ResolvedOperation {
  /** Its id: the SHA-256 of its text, or the id a Cosmo manifest lists it under. */
  readonly id: string;
  /** The operation text, as pushed. */
  readonly body: string;
}

/** What reading the manifest found. */
export type ManifestRead =
  | { readonly status: 'unchanged' }
  | { readonly status: 'missing' }
  /**
   * `tag` is what to pass as `knownTag` next time: the provider's (an ETag), else the quoted revision when
   * that makes a valid entity tag, else none (the next read fetches the file again).
   */
  | { readonly status: 'found'; readonly manifest: OperationsManifest; readonly tag: string | undefined }
  /** The file is not a valid manifest; `tag` identifies this bad version, when the provider gave one. */
  | { readonly status: 'invalid'; readonly reason: string; readonly tag: string | undefined };

/** Options of `OperationsStore`. */
export interface OperationsStoreOptions {
  /** Clock for `firstPushedAt` and `generatedAt`. Default: `() => new Date()`. */
  readonly now?: () => Date;
}

/** Thrown for a push or deletion the store refuses (unknown id, alias clash, bad name). */
export class OperationsStoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OperationsStoreError';
  }
}

/** Prefix of a manifest tag that belongs to Cosmo's manifest path. */
const COSMO_PATH_TAG = 'cosmo:';

/** The registry and manifest logic over a storage provider. */
export class OperationsStore {
  readonly storage: OperationsStorage;
  private readonly now: () => Date;

  constructor(storage: OperationsStorage, { now = () => new Date() }: OperationsStoreOptions = {}) {
    this.storage = storage;
    this.now = now;
  }

  /** Where the store is, for messages. */
  get location(): string {
    return this.storage.location;
  }

  /**
   * Registers operations for a client (the client is registered on its first
   * push). All-or-nothing: a clash refuses the whole push before anything is
   * written. An id or alias names one operation in the whole graph (manifest
   * mode serves every client's from one manifest): an alias that already
   * names another operation, in any client or earlier in the push, an alias
   * that is another operation's id, or an id that is another operation's
   * alias refuses the push (`OperationsStoreError` naming both operations).
   * Aliases are kept in the form requests are read in (`canonicalAlias`).
   */
  async push(graph: string, client: string, inputs: readonly OperationInput[]): Promise<PushedOperation[]> {
    this.checkWritable();
    checkNames(graph, client);
    checkKeys(inputs);
    if (inputs.length === 0) return [];
    return this.storage.withLock(graph, async () => {
      const registry = await this.readRegistry(graph);
      const manifest = await this.readCurrentManifest(graph);
      const stamp = this.now().toISOString();
      const before = registry.clients[client];
      const operations: Record<string, RegistryEntry> = { ...before?.operations };
      const bodies = new Map<string, string>();
      const results: PushedOperation[] = [];
      for (const input of inputs) {
        const existing = operations[input.id];
        const pushedAliases = (input.aliases ?? []).map(canonicalAlias).filter((alias) => alias !== input.id);
        const aliases = [...new Set([...(existing?.aliases ?? []), ...pushedAliases])];
        operations[input.id] = existing
          ? { ...existing, aliases }
          : { name: input.name, type: input.type, firstPushedAt: stamp, aliases, ...(input.normalizedId === undefined ? {} : { normalizedId: input.normalizedId }) };
        // The same operation twice in one push (two files, two Relay ids) is one operation with both aliases.
        if (bodies.has(input.id)) continue;
        bodies.set(input.id, input.body);
        results.push({ id: input.id, name: existing?.name ?? input.name, status: existing ? 'up to date' : 'created' });
      }
      const after: RegistryClient = { registeredAt: before?.registeredAt ?? stamp, operations };
      checkClaims(graph, client, registry, before, after);
      const next: Registry = { version: 1, revision: newRevision(), clients: { ...registry.clients, [client]: after } };
      await this.storage.commit(graph, await this.changes(graph, client, before, after, registry, next, manifest, bodies, stamp));
      return results;
    });
  }

  /** Removes one operation (by id or alias) from a client; returns what was removed, or undefined when the client has no such operation. */
  async delete(graph: string, client: string, idOrAlias: string): Promise<RegisteredOperation | undefined> {
    this.checkWritable();
    checkNames(graph, client);
    return this.storage.withLock(graph, async () => {
      const registry = await this.readRegistry(graph);
      const before = registry.clients[client];
      const id = before && findId(before, idOrAlias);
      if (!before || id === undefined) return undefined;
      const entry = before.operations[id]!;
      const { [id]: _removed, ...operations } = before.operations;
      const after: RegistryClient = { registeredAt: before.registeredAt, operations };
      const next: Registry = { version: 1, revision: newRevision(), clients: { ...registry.clients, [client]: after } };
      const manifest = await this.readCurrentManifest(graph);
      await this.storage.commit(graph, await this.changes(graph, client, before, after, registry, next, manifest, new Map(), this.now().toISOString()));
      return { graph, client, id, name: entry.name, type: entry.type, aliases: entry.aliases, firstPushedAt: entry.firstPushedAt };
    });
  }

  /** The operations of a graph (of one client when given), by client, then in push order. */
  async list(graph: string, client?: string): Promise<RegisteredOperation[]> {
    checkNames(graph, client);
    const registry = await this.readRegistry(graph);
    const rows: RegisteredOperation[] = [];
    for (const [name, registered] of Object.entries(registry.clients)) {
      if (client !== undefined && name !== client) continue;
      for (const [id, entry] of Object.entries(registered.operations)) {
        rows.push({ graph, client: name, id, name: entry.name, type: entry.type, aliases: entry.aliases, firstPushedAt: entry.firstPushedAt });
      }
    }
    // Stable sort: operations pushed together keep the order they were pushed in.
    return rows.sort((a, b) => a.client.localeCompare(b.client) || a.firstPushedAt.localeCompare(b.firstPushedAt));
  }

  /** The client names registered for a graph. */
  async clients(graph: string): Promise<string[]> {
    return Object.keys((await this.readRegistry(graph)).clients).sort();
  }

  /**
   * Finds a client's operation by SHA-256 id, alias, or normalized id; undefined when there is none.
   * A name or key no push could have stored (see `keyProblem`) is answered without reading the storage.
   */
  async lookup(graph: string, client: string, key: string, signal?: AbortSignal): Promise<ResolvedOperation | undefined> {
    if (nameProblem('graph', graph) || nameProblem('client', client) || keyProblem(key)) return undefined;
    const path = operationPath(graph, client, isSha256Hex(key) ? key.toLowerCase() : key);
    const text = await this.storage.read(path, signal);
    if (text === undefined) return undefined;
    return parseOperationFile(text, `${this.location}/${path}`);
  }

  /**
   * Reads the graph's manifest unless it still has `knownTag`: `<graph>/manifest.json`, or when that is
   * absent Cosmo's `<graph>/operations/manifest.json`. Throws when the provider cannot be read.
   */
  async readManifest(graph: string, knownTag?: string, signal?: AbortSignal): Promise<ManifestRead> {
    // A tag of Cosmo's path carries a prefix, so the next poll asks the right file with it.
    const cosmoTag = knownTag?.startsWith(COSMO_PATH_TAG) ? knownTag.slice(COSMO_PATH_TAG.length) : undefined;
    let read = await this.storage.readIfChanged(manifestPath(graph), cosmoTag === undefined ? knownTag : undefined, signal);
    let prefix = '';
    if (read.status === 'missing') {
      read = await this.storage.readIfChanged(cosmoManifestPath(graph), cosmoTag, signal);
      prefix = COSMO_PATH_TAG;
    }
    if (read.status !== 'found') return read;
    let manifest: OperationsManifest;
    try {
      manifest = await parseManifestInSlices(read.text, yieldToEventLoop);
    } catch (error) {
      // Without a tag from the provider, the bad file's digest names this version, so it is reported once.
      if (error instanceof ManifestFormatError) return { status: 'invalid', reason: error.message, tag: prefix + (read.tag ?? `"sha256-${sha256Hex(read.text)}"`) };
      throw error;
    }
    const tag = read.tag ?? revisionTag(manifest.revision);
    return { status: 'found', manifest, tag: tag === undefined ? undefined : prefix + tag };
  }

  /** Closes the provider. */
  close(): Promise<void> {
    return this.storage.close();
  }

  private checkWritable(): void {
    if (!this.storage.writable) throw new ReadOnlyStoreError(this.location);
  }

  private async readRegistry(graph: string): Promise<Registry> {
    const path = registryPath(graph);
    const text = await this.storage.read(path);
    return text === undefined ? emptyRegistry() : parseRegistry(text, `${this.location}/${path}`);
  }

  private async readCurrentManifest(graph: string): Promise<OperationsManifest | undefined> {
    const text = await this.storage.read(manifestPath(graph));
    if (text === undefined) return undefined;
    try {
      return parseManifest(text);
    } catch (error) {
      // The manifest is derived from the registry and the operation files: a damaged one is rebuilt.
      if (error instanceof ManifestFormatError) return undefined;
      throw error;
    }
  }

  /** Files to write and remove so the store matches `next`, in phases: new lookup keys, then the registry, then the manifest, then removals. */
  private async changes(
    graph: string,
    client: string,
    before: RegistryClient | undefined,
    after: RegistryClient,
    registry: Registry,
    next: Registry,
    manifest: OperationsManifest | undefined,
    bodies: ReadonlyMap<string, string>,
    stamp: string,
  ): Promise<StorageChange[][]> {
    const bodyOf = async (id: string): Promise<string> => {
      const pushed = bodies.get(id);
      if (pushed !== undefined) return pushed;
      // A manifest's id need not be the SHA-256 of its text (Cosmo's client-supplied ids): only a text that hashes to the id is taken.
      const listed = manifest && Object.hasOwn(manifest.operations, id) ? manifest.operations[id] : undefined;
      if (listed !== undefined && sha256Hex(listed) === id) return listed;
      for (const [name, registered] of Object.entries(registry.clients)) {
        if (!registered.operations[id]) continue;
        const found = await this.lookup(graph, name, id);
        if (found) return found.body;
      }
      throw new OperationsStoreError(`the store at ${this.location} has no text for operation ${id} of graph "${graph}"; push it again`);
    };
    const oldKeys = keyOwners(before);
    const newKeys = keyOwners(after);
    const writes: StorageChange[] = [];
    const removals: StorageChange[] = [];
    for (const [key, id] of newKeys) {
      if (oldKeys.get(key) !== id) writes.push({ path: operationPath(graph, client, key), text: serializeOperationFile(id, await bodyOf(id)) });
    }
    for (const key of oldKeys.keys()) if (!newKeys.has(key)) removals.push({ path: operationPath(graph, client, key), text: null });
    const operations: Record<string, string> = {};
    const aliases: Record<string, string> = Object.create(null) as Record<string, string>;
    for (const registered of Object.values(next.clients)) {
      for (const [id, entry] of Object.entries(registered.operations)) {
        operations[id] ??= await bodyOf(id);
        for (const alias of entry.aliases) if (!Object.hasOwn(aliases, alias)) aliases[alias] = id;
      }
    }
    const nextManifest: OperationsManifest = { version: 1, revision: next.revision, generatedAt: stamp, operations, aliases };
    return [
      writes,
      [{ path: registryPath(graph), text: serializeRegistry(next) }],
      // The manifest last: a router that sees the new revision finds every file it names.
      [{ path: manifestPath(graph), text: serializeManifest(nextManifest) }],
      removals,
    ];
  }
}

/**
 * The revision as an entity tag (`"<revision>"`), when every character may stand in one (RFC 9110: visible
 * ASCII but `"`); undefined otherwise, since a revision is any string and a header value cannot carry every
 * character (non-Latin-1 text, line breaks).
 */
function revisionTag(revision: string): string | undefined {
  return /^[\x21\x23-\x7e]+$/.test(revision) ? `"${revision}"` : undefined;
}

function checkNames(graph: string, client: string | undefined): void {
  const problem = nameProblem('graph', graph) ?? (client === undefined ? undefined : nameProblem('client', client));
  if (problem) throw new OperationsStoreError(problem);
}

/** Refuses aliases the store could not look up (too long, control characters). */
function checkKeys(inputs: readonly OperationInput[]): void {
  for (const input of inputs) {
    for (const alias of input.aliases ?? []) {
      const problem = keyProblem(alias);
      if (problem) throw new OperationsStoreError(`alias "${alias.slice(0, 80)}" of operation ${input.id}: ${problem.replace(/^the id/, 'the alias')}`);
    }
  }
}

/** The id an id, alias or normalized id names within one client, if any. */
function findId(client: RegistryClient, key: string): string | undefined {
  const wanted = isSha256Hex(key) ? key.toLowerCase() : key;
  if (Object.hasOwn(client.operations, wanted)) return wanted;
  // An alias is stored as requests read it (`canonicalAlias`); one pushed before that may still be spelled otherwise.
  const alias = canonicalAlias(key);
  for (const [id, entry] of Object.entries(client.operations)) if (entry.aliases.includes(alias) || entry.aliases.includes(key)) return id;
  return undefined;
}

/** Who holds a lookup key (an id or an alias) in a graph. */
interface KeyClaim {
  /** The operation it names. */
  readonly id: string;
  readonly name: string | null;
  readonly client: string;
  /** How it names it: as the operation's id, or as an alias. */
  readonly as: 'id' | 'alias';
  /** Claimed by the push being checked, not by the store. */
  readonly pushed: boolean;
}

/**
 * Refuses a push that would make one key name two operations: every key the push adds for `clientName`
 * (a new operation's id, a new alias) must not already name another operation, in any client of the graph
 * (manifest mode serves all clients' ids and aliases from one manifest, whatever client a request names)
 * or earlier in the same push. Keys a client already had are not checked again.
 */
function checkClaims(graph: string, clientName: string, registry: Registry, before: RegistryClient | undefined, after: RegistryClient): void {
  const claims = new Map<string, KeyClaim>();
  const claim = (key: string, value: KeyClaim) => {
    if (!claims.has(key)) claims.set(key, value);
  };
  const stored = Object.entries(registry.clients);
  // Ids first: a request's id finds an operation before an alias does.
  for (const [client, registered] of stored) {
    for (const [id, entry] of Object.entries(registered.operations)) claim(id, { id, name: entry.name, client, as: 'id', pushed: false });
  }
  for (const [client, registered] of stored) {
    for (const [id, entry] of Object.entries(registered.operations)) {
      for (const alias of entry.aliases) claim(alias, { id, name: entry.name, client, as: 'alias', pushed: false });
    }
  }
  for (const [id, entry] of Object.entries(after.operations)) {
    const had = before && Object.hasOwn(before.operations, id) ? before.operations[id] : undefined;
    const added: Array<[string, 'id' | 'alias']> = had ? [] : [[id, 'id']];
    for (const alias of entry.aliases) if (!had?.aliases.includes(alias)) added.push([alias, 'alias']);
    for (const [key, as] of added) {
      const holder = claims.get(key);
      if (holder !== undefined && holder.id !== id)
        throw new OperationsStoreError(claimConflict(graph, key, { id, name: entry.name, client: clientName, as, pushed: true }, holder));
      claims.set(key, { id, name: entry.name, client: clientName, as, pushed: true });
    }
  }
}

function claimConflict(graph: string, key: string, wanted: KeyClaim, holder: KeyClaim): string {
  const operation = (claim: KeyClaim) => `operation ${claim.id}${claim.name === null ? '' : ` (${claim.name})`}`;
  const what = (claim: KeyClaim) => (claim.as === 'id' ? 'the id of' : 'an alias of');
  const where = holder.pushed ? 'earlier in this push' : `of client "${holder.client}"`;
  const remedy = holder.pushed
    ? 'give one of the queries another id'
    : `delete ${holder.as === 'id' ? 'that operation' : 'it'} first (switchyard operations delete ${graph} -c ${holder.client} ${holder.id}) or give the query another id`;
  return (
    `"${key}" cannot be ${what(wanted)} ${operation(wanted)} for client "${wanted.client}": it is already ${what(holder)} ${operation(holder)} ${where}, ` +
    `and an id or alias names one operation in graph "${graph}"; ${remedy}`
  );
}

/** Lookup key -> id for a client: ids and aliases first; a normalized id goes to the first operation that has it. */
function keyOwners(client: RegistryClient | undefined): Map<string, string> {
  const owners = new Map<string, string>();
  if (!client) return owners;
  const entries = Object.entries(client.operations).sort(([a, x], [b, y]) => x.firstPushedAt.localeCompare(y.firstPushedAt) || a.localeCompare(b));
  for (const [id, entry] of entries) {
    owners.set(id, id);
    for (const alias of entry.aliases) owners.set(alias, id);
  }
  for (const [id, entry] of entries) {
    if (entry.normalizedId !== undefined && !owners.has(entry.normalizedId)) owners.set(entry.normalizedId, id);
  }
  return owners;
}

function serializeOperationFile(id: string, body: string): string {
  return `${JSON.stringify({ version: 1, id, body })}\n`;
}

/** Reads `{"version":1,"id","body"}` and checks the id against the text. */
function parseOperationFile(text: string, where: string): ResolvedOperation {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new OperationsStoreError(`${where} is not valid JSON`);
  }
  if (!isRecord(raw) || typeof raw.body !== 'string') throw new OperationsStoreError(`${where} is not an operation file ({"version":1,"id","body"})`);
  const id = sha256Hex(raw.body);
  if (typeof raw.id === 'string' && raw.id.toLowerCase() !== id) throw new OperationsStoreError(`${where}: the id is not the SHA-256 of the text`);
  return { id, body: raw.body };
}
