import { carriesUploads, type AfterStageEvent, type AfterStageHook, type JsonObject, type Logger, type StageEvent, type StageHook } from '../../src/index.js';
import { CACHE_TAGS } from '../cache-tags/index.js';
import { carriesAuthorization, decideCaching, type CachePolicy } from './cache-control.js';
import { type CacheKeys, ROOT_TYPE, representationsVariableOf } from './cache-key.js';
import type { CacheMetrics } from './cache-metrics.js';
import { combineParts, UNCACHEABLE, type AnswerPart } from './client-cache-control.js';
import type { Degradation } from './degraded.js';
import type { FetchEpoch, FetchEpochs } from './fetch-epochs.js';
import type { HitMemo } from './hit-memo.js';
import { indexesOf } from './index-ids.js';
import type { IndexSwitches } from './options.js';
import type { ShadowMode } from './shadow.js';
import { rebuildEntities } from './partial-batch.js';
import { lookupEntityParts } from './entity-parts.js';
import { privateKey, type PrivateEntries } from './private-entries.js';
import type { CacheSavings } from './cache-savings.js';
import { recordOf, type FetchCacheStatus, type ResponseCacheRecord } from './request-record.js';
import type { CacheStore, EntryWrite, StoredEntry } from './store/cache-store.js';
import { answeredFromMemory } from './store/tiered-store.js';

/** What the fetch hook works with. */
export interface FetchHookContext {
  /** Where entries live (memory or Redis). */
  readonly store: CacheStore;
  /** Builds the keys of root and entity entries. */
  readonly keys: CacheKeys;
  /** Keys and hit answers remembered between requests. */
  readonly memo: HitMemo;
  /** Hit, miss and store counters. */
  readonly metrics: CacheMetrics;
  /** Reports store failures (sampled warning). */
  readonly degradation: Degradation;
  /** Set when `guard_concurrent_writes` is on. */
  readonly epochs: FetchEpochs | undefined;
  /** Which indexes entries are listed under. */
  readonly switches: IndexSwitches;
  /** `fallback_ttl` in ms. */
  readonly fallbackTtlMs: number;
  /** `fetch_missing_entities_only`. */
  readonly fetchMissingEntitiesOnly: boolean;
  /** The plugin's logger. */
  readonly log: Logger;
  /** Set with `shadow_mode`: hits are compared with the subgraph's answer, never served. */
  readonly shadow?: ShadowMode;
  /** Set with `private_entries`: `private` answers are stored per user. */
  readonly privateEntries?: PrivateEntries;
  /** Subgraph calls and time saved. */
  readonly savings: CacheSavings;
}

/** Entries found for a fetch's keys, and which of them are a user's private entries. */
interface Found {
  readonly entries: Array<StoredEntry | undefined>;
  /** Per key: served from the user's private entry (undefined: none was). */
  readonly privateAt: boolean[] | undefined;
}

type FetchEvent = StageEvent<'fetch'>;
type FetchAfter = AfterStageHook<'fetch'>;

/**
 * The cache at the fetch stage: answers hits with `respondWith`, sends only
 * the missing entities of a partial hit, and stores what subgraphs answer
 * (after the cache-tags plugin has read the answer's tags).
 */
export function createFetchHook(context: FetchHookContext): StageHook<'fetch'> {
  let mergedSkipLogged = false;
  return function responseCacheFetch(event) {
    const request = event.input;
    const record = recordOf(event.state);
    const status: FetchCacheStatus = { subgraph: request.subgraph, kind: request.kind, status: 'skip' };
    record.fetches.push(status);
    // Uploaded files are written as null in keys: a call carrying files is never cached (a look at the top-level values only).
    if (request.operationType !== 'query' || request.subscription || carriesUploads(request.variables)) {
      record.parts.push(UNCACHEABLE);
      return;
    }
    if (request.merged) {
      if (!mergedSkipLogged) {
        mergedSkipLogged = true;
        context.log.debug({ subgraph: request.subgraph }, 'Response cache skips merged entity fetches (engine.enable_multi_fetch)');
      }
      return recordAnswerPart(record, context.fallbackTtlMs);
    }
    // A batched call: each aliased part is looked up as the entity fetch it would have been alone.
    if (request.parts) return context.shadow ? recordAnswerPart(record, context.fallbackTtlMs) : lookupEntityParts(context, event, record, status, request.parts);
    if (context.shadow) return shadowLookup(context, context.shadow, event, record, status);
    return request.kind === 'root' ? lookupRoot(context, event, record, status) : lookupEntities(context, event, record, status);
  };
}

async function lookupRoot(context: FetchHookContext, event: FetchEvent, record: ResponseCacheRecord, status: FetchCacheStatus): Promise<FetchAfter | void> {
  const request = event.input;
  const key = context.keys.root(request);
  const user = context.privateEntries?.userOf(event.state, record);
  // The latency shape of a root fetch is its entry: the same operation and variables.
  const shape = key;
  const found = record.refresh ? { entries: [undefined], privateAt: undefined } : await readEntries(context, [key], user);
  if (!found) return recordAnswerPart(record, context.fallbackTtlMs, user);
  const entry = found.entries[0];
  if (entry) {
    status.status = 'hit';
    context.metrics.hits(request.subgraph, [ROOT_TYPE]);
    noteSaved(status, 1, 0, context.savings.avoided(request.subgraph, shape, [ROOT_TYPE]));
    record.parts.push(found.privateAt?.[0] ? UNCACHEABLE : entryPart(entry));
    event.respondWith(context.memo.rootAnswer(entry.value));
    return;
  }
  status.status = 'miss';
  noteSaved(status, 0, 1, undefined);
  context.metrics.misses(request.subgraph, [ROOT_TYPE]);
  const claim = await claimEpoch(context, event);
  const startedAt = performance.now();
  return async function storeRootAnswer(after) {
    claim?.end();
    measure(context, after, shape, startedAt);
    const policy = policyOf(after, context.fallbackTtlMs, user);
    record.parts.push(partOf(policy));
    const data = after.output.data;
    const since = writeEpoch(after, claim);
    if (!policy.store || since === false || !isObject(data)) return;
    const tags = after.state.get(CACHE_TAGS)?.of(after.input);
    const indexes = indexesOf(context.switches, request.subgraph, undefined, tags?.kind === 'root' ? tags.tags : undefined);
    const entry = { key: keyFor(policy, key, user), value: data, ttlMs: policy.ttlMs, isPublic: policy.isPublic, indexes };
    await write(context, request.subgraph, [entry], [ROOT_TYPE], since);
  };
}

async function lookupEntities(context: FetchHookContext, event: FetchEvent, record: ResponseCacheRecord, status: FetchCacheStatus): Promise<FetchAfter | void> {
  const request = event.input;
  const representations = request.representations ?? [];
  const user = context.privateEntries?.userOf(event.state, record);
  if (representations.length === 0) return recordAnswerPart(record, context.fallbackTtlMs, user);
  const lookup = context.memo.entityLookup(request, representations);
  const { keys, types } = lookup;
  const shape = entityShape(request.subgraph, lookup.fetchHash);
  // Read before the store: a change while reading makes the next request read again.
  const version = context.store.version?.();
  // The memo holds answers built from shared entries only (never a user's private ones).
  const reused = record.refresh ? undefined : context.memo.reusableHit(lookup, version);
  if (reused) {
    status.status = 'hit';
    context.metrics.hits(request.subgraph, types);
    noteSaved(status, types.length, 0, context.savings.avoided(request.subgraph, shape, types));
    record.parts.push({ cacheable: true, ttlMs: reused.ttlMs, isPublic: reused.isPublic });
    event.respondWith(reused.answer);
    return;
  }
  // A refresh (client `no-cache`) reads nothing: every entity is fetched and written again.
  const lookedUp = record.refresh ? { entries: keys.map(() => undefined), privateAt: undefined } : await readEntries(context, keys, user);
  if (!lookedUp) return recordAnswerPart(record, context.fallbackTtlMs, user);
  const found = lookedUp.entries;
  const privateAt = lookedUp.privateAt;
  const missing: number[] = [];
  found.forEach((entry, i) => {
    if (!entry) missing.push(i);
  });
  if (missing.length === 0) {
    status.status = 'hit';
    context.metrics.hits(request.subgraph, types);
    noteSaved(status, types.length, 0, context.savings.avoided(request.subgraph, shape, types));
    const part = combineParts(found.map((entry, i) => (privateAt?.[i] ? UNCACHEABLE : entryPart(entry!))));
    record.parts.push(part);
    const values = found.map((entry) => entry!.value);
    if (privateAt?.includes(true)) {
      event.respondWith({ data: { _entities: values } });
      return;
    }
    const expiresAt = found.reduce((earliest, entry) => Math.min(earliest, entry!.expiresAt), Number.POSITIVE_INFINITY);
    const facts = { version, expiresAt, isPublic: part.cacheable && part.isPublic };
    event.respondWith(context.memo.entityAnswer(lookup, values, facts));
    return;
  }
  const partial = missing.length < representations.length && context.fetchMissingEntitiesOnly;
  let sent = representations.map((_, i) => i);
  if (partial) {
    sent = missing;
    const missingRepresentations = missing.map((i) => representations[i]!);
    const variables = { ...request.variables, [representationsVariableOf(request)]: missingRepresentations };
    event.setInput({ ...request, representations: missingRepresentations, variables });
    status.status = 'partial_hit';
    const served = types.filter((_, i) => found[i] !== undefined);
    context.metrics.hits(request.subgraph, served);
    context.metrics.misses(
      request.subgraph,
      missing.map((i) => types[i]!),
    );
    context.savings.partialHit(request.subgraph, served);
    noteSaved(status, served.length, missing.length, undefined);
  } else {
    status.status = 'miss';
    context.metrics.misses(request.subgraph, types);
    noteSaved(status, 0, types.length, undefined);
  }
  const claim = await claimEpoch(context, event);
  const startedAt = performance.now();
  return async function storeEntities(after) {
    claim?.end();
    // Only whole fetches say how long the shape takes (a partial one sends fewer entities).
    if (!partial) measure(context, after, shape, startedAt);
    const fetched = after.output;
    const policy = policyOf(after, context.fallbackTtlMs, user);
    if (partial) {
      after.setOutput(
        rebuildEntities(
          fetched,
          found.map((entry) => entry?.value),
          missing,
          request.subgraph,
        ),
      );
      const servedParts = found.flatMap((entry, i) => (entry ? [privateAt?.[i] ? UNCACHEABLE : entryPart(entry)] : []));
      record.parts.push(combineParts([partOf(policy), ...servedParts]));
    } else {
      record.parts.push(partOf(policy));
    }
    const entities = fetched.data?._entities;
    const since = writeEpoch(after, claim, fetched);
    if (!policy.store || since === false || !Array.isArray(entities) || entities.length !== sent.length) return;
    const tags = after.state.get(CACHE_TAGS)?.of(after.input);
    const entityTags = tags?.kind === 'entity' ? tags.entities : undefined;
    const writes: EntryWrite[] = [];
    const written: string[] = [];
    sent.forEach((position, i) => {
      const value: unknown = entities[i];
      if (!isObject(value)) return;
      const type = types[position]!;
      const indexes = indexesOf(context.switches, request.subgraph, type, entityTags?.[i]);
      writes.push({ key: keyFor(policy, keys[position]!, user), value, ttlMs: policy.ttlMs, isPublic: policy.isPublic, indexes });
      written.push(type);
    });
    await write(context, request.subgraph, writes, written, since);
  };
}

/**
 * Shadow mode: the lookup a normal fetch makes (hits and misses counted as
 * usual, the debug status as the cache would have had it), but the whole
 * fetch always goes to the subgraph. Misses are written as usual; each hit
 * is compared with the fresh answer and left as it is, so a stale entry
 * keeps being counted as the clients would have kept getting it.
 */
async function shadowLookup(context: FetchHookContext, shadow: ShadowMode, event: FetchEvent, record: ResponseCacheRecord, status: FetchCacheStatus): Promise<FetchAfter | void> {
  const request = event.input;
  const representations = request.representations ?? [];
  const user = context.privateEntries?.userOf(event.state, record);
  if (request.kind === 'entity' && representations.length === 0) return recordAnswerPart(record, context.fallbackTtlMs, user);
  const lookup = request.kind === 'entity' ? context.memo.entityLookup(request, representations) : undefined;
  const keys = lookup ? lookup.keys : [context.keys.root(request)];
  const types = lookup ? lookup.types : [ROOT_TYPE];
  const shape = lookup ? entityShape(request.subgraph, lookup.fetchHash) : keys[0]!;
  const lookedUp = record.refresh ? { entries: keys.map(() => undefined) } : await readEntries(context, keys, user);
  if (!lookedUp) return recordAnswerPart(record, context.fallbackTtlMs, user);
  const found = lookedUp.entries;
  const hits = found.flatMap((entry, i) => (entry ? [i] : []));
  const missing = found.flatMap((entry, i) => (entry ? [] : [i]));
  status.status = missing.length === 0 ? 'hit' : hits.length === 0 ? 'miss' : 'partial_hit';
  context.metrics.hits(
    request.subgraph,
    hits.map((i) => types[i]!),
  );
  context.metrics.misses(
    request.subgraph,
    missing.map((i) => types[i]!),
  );
  if (status.status === 'partial_hit')
    context.savings.partialHit(
      request.subgraph,
      hits.map((i) => types[i]!),
    );
  noteSaved(status, hits.length, missing.length, undefined);
  const claim = missing.length > 0 ? await claimEpoch(context, event) : undefined;
  const startedAt = performance.now();
  return async function compareShadow(after) {
    claim?.end();
    // The call was made anyway: a would-be hit saved (would have saved) exactly its own time.
    const elapsed = performance.now() - startedAt;
    if (missing.length === 0) noteSaved(status, hits.length, 0, context.savings.avoided(request.subgraph, shape, types, elapsed));
    else if (hits.length === 0) measure(context, after, shape, startedAt);
    const policy = policyOf(after, context.fallbackTtlMs, user);
    record.parts.push(partOf(policy));
    const response = after.output;
    if (after.shortCircuitedBy !== undefined || (response.errors?.length ?? 0) > 0) return;
    const fresh: unknown[] | undefined = lookup ? (Array.isArray(response.data?._entities) ? response.data._entities : undefined) : [response.data];
    if (!fresh || fresh.length !== keys.length) return;
    for (const i of hits) shadow.compare(request.subgraph, types[i]!, keys[i]!, found[i]!.value, fresh[i]);
    const since = writeEpoch(after, claim);
    if (missing.length === 0 || !policy.store || since === false) return;
    const tags = after.state.get(CACHE_TAGS)?.of(after.input);
    const writes: EntryWrite[] = [];
    const written: string[] = [];
    for (const i of missing) {
      const value = fresh[i];
      if (!isObject(value)) continue;
      const tagList = lookup ? (tags?.kind === 'entity' ? tags.entities[i] : undefined) : tags?.kind === 'root' ? tags.tags : undefined;
      const indexes = indexesOf(context.switches, request.subgraph, lookup ? types[i] : undefined, tagList);
      writes.push({ key: keyFor(policy, keys[i]!, user), value, ttlMs: policy.ttlMs, isPublic: policy.isPublic, indexes });
      written.push(types[i]!);
    }
    await write(context, request.subgraph, writes, written, since);
  };
}

/** After-hook of a fetch the cache did not answer and will not store: records how cacheable its answer is. */
export function recordAnswerPart(record: ResponseCacheRecord, fallbackTtlMs: number, user?: string): FetchAfter {
  return function recordCacheability(after) {
    record.parts.push(partOf(policyOf(after, fallbackTtlMs, user)));
  };
}

/**
 * Reads a fetch's entries; with a known user, the keys the shared entries
 * miss are then looked up among the user's private entries (a second read,
 * only on a shared miss: shared hits, and the memory tier, cost no more).
 */
export async function readEntries(context: FetchHookContext, keys: readonly string[], user: string | undefined): Promise<Found | undefined> {
  const entries = await read(context, keys);
  if (!entries || user === undefined) return entries && { entries, privateAt: undefined };
  const missing = keys.flatMap((_, i) => (entries[i] ? [] : [i]));
  if (missing.length === 0) return { entries, privateAt: undefined };
  const mine = await read(
    context,
    missing.map((i) => privateKey(keys[i]!, user)),
  );
  if (!mine) return { entries, privateAt: undefined };
  const privateAt = keys.map(() => false);
  missing.forEach((position, i) => {
    const entry = mine[i];
    if (!entry) return;
    entries[position] = entry;
    privateAt[position] = true;
  });
  return { entries, privateAt };
}

/** Where an answer is written: the user's private key for a `private` answer, else the shared key. */
export function keyFor(policy: CachePolicy, key: string, user: string | undefined): string {
  return policy.store && policy.isPrivate && user !== undefined ? privateKey(key, user) : key;
}

/** The latency shape of an entity fetch: its subgraph and fetch hash (selection set, arguments). */
function entityShape(subgraph: string, fetchHash: string): string {
  return `entity\0${subgraph}\0${fetchHash}`;
}

/** Records a whole fetch's latency when the subgraph answered it without errors. */
function measure(context: FetchHookContext, after: AfterStageEvent<'fetch'>, shape: string, startedAt: number): void {
  if (after.shortCircuitedBy !== undefined || (after.output.errors?.length ?? 0) > 0) return;
  context.savings.measured(shape, performance.now() - startedAt);
}

/** The per-fetch counts of the debug extension's `detail` form. */
export function noteSaved(status: FetchCacheStatus, hits: number, misses: number, savedMs: number | undefined): void {
  status.hits = hits;
  status.misses = misses;
  if (savedMs !== undefined) status.savedMs = Math.round(savedMs * 100) / 100;
}

/** Reads entries; undefined when the store failed (the fetch goes to the subgraph, uncached). */
async function read(context: FetchHookContext, keys: readonly string[]): Promise<Array<StoredEntry | undefined> | undefined> {
  try {
    const entries = await context.store.getMany(keys);
    // A memory-tier answer says nothing about Redis: it must not log "reachable again".
    if (!answeredFromMemory(entries)) context.degradation.succeeded();
    return entries;
  } catch (error) {
    context.degradation.report(error, 'read');
    return undefined;
  }
}

/** With the write guard: a fetch's claim on the epoch its answer is checked against. */
export interface WriteClaim {
  /** The epoch read before the fetch was sent (`FetchEpochs`). */
  readonly epoch: number;
  /** This request's own subgraph call was made (its wrapper ran), rather than it receiving another request's answer. */
  called: boolean;
  /** The answer arrived. */
  end(): void;
}

/**
 * The epoch read before the call that produced an answer, by answer object.
 * A request that shares another's in-flight call (the router's single
 * flight) receives that call's very answer object; it must be written
 * against the epoch read before that call began, not the sharer's own later
 * one, or an invalidation between the two would not drop it. The requests
 * cannot tell that they share a call by comparing themselves: single flight
 * ignores what differs per request (trace context), and a user's private
 * entry has its own key.
 */
const callEpochs = new WeakMap<object, number>();

/**
 * With the write guard: the epoch before the subgraph is asked, and a
 * wrapper around the call that dates its answer with it. Null when the
 * store failed (then nothing is written); undefined without the guard.
 */
export async function claimEpoch(context: FetchHookContext, event: FetchEvent): Promise<WriteClaim | null | undefined> {
  if (!context.epochs) return undefined;
  let begun: FetchEpoch;
  try {
    begun = await context.epochs.begin(event.input);
  } catch (error) {
    context.degradation.report(error, 'read');
    return null;
  }
  const claim: WriteClaim = { epoch: begun.epoch, called: false, end: begun.end };
  // A fetch that fails runs no after-hook: its claim (which holds the call's variables) ends with the stage either way.
  event.whenSettled(begun.end);
  // Registered after the router's own wrappers, so inside single flight's: it runs only for the request that makes the call.
  event.aroundStage(async function dateAnswer(input, perform) {
    claim.called = true;
    const answer = await perform(input);
    const dated = callEpochs.get(answer);
    if (dated === undefined || claim.epoch < dated) callEpochs.set(answer, claim.epoch);
    return answer;
  });
  return claim;
}

/**
 * The epoch an answer is written against (undefined: no write guard), or
 * false when it may not be written: it did not come from the subgraph, the
 * epoch claim failed, or it came from a call that no claim dated. An answer
 * shared by several requests is checked against the earliest epoch read
 * before its call.
 */
export function writeEpoch(after: AfterStageEvent<'fetch'>, claim: WriteClaim | null | undefined, answer: object = after.output): number | undefined | false {
  if (after.shortCircuitedBy !== undefined || claim === null) return false;
  if (claim === undefined) return undefined;
  const dated = callEpochs.get(answer);
  if (dated !== undefined) return Math.min(dated, claim.epoch);
  return claim.called ? claim.epoch : false;
}

export async function write(context: FetchHookContext, subgraph: string, entries: readonly EntryWrite[], types: readonly string[], since: number | undefined): Promise<void> {
  if (entries.length === 0) return;
  try {
    const kept = await context.store.write(entries, since);
    context.degradation.succeeded();
    if (kept.length === entries.length) {
      context.metrics.stores(subgraph, types);
      return;
    }
    const keptKeys = new Set(kept.map((entry) => entry.key));
    context.metrics.stores(
      subgraph,
      types.filter((_, i) => keptKeys.has(entries[i]!.key)),
    );
    context.log.debug({ subgraph, dropped: entries.length - kept.length }, 'Response cache dropped entries invalidated while they were fetched');
  } catch (error) {
    context.degradation.report(error, 'write');
  }
}

/**
 * The Cache-Control rules applied to what the subgraph answered, the request
 * it answered included: one sent with `Authorization` is stored only when
 * the answer allows a shared cache to (docs/response-cache.md).
 */
export function policyOf(after: AfterStageEvent<'fetch'>, fallbackTtlMs: number, user: string | undefined): CachePolicy {
  const response = after.output;
  const hasErrors = (response.errors?.length ?? 0) > 0;
  return decideCaching(response.headers?.['cache-control'], hasErrors, fallbackTtlMs, carriesAuthorization(after.input.headers), user !== undefined);
}

/** The client-facing part of a subgraph answer; a `private` one makes the client's answer `no-store` (no shared cache may keep it). */
export function partOf(policy: CachePolicy): AnswerPart {
  return policy.store && !policy.isPrivate ? { cacheable: true, ttlMs: policy.ttlMs, isPublic: policy.isPublic } : UNCACHEABLE;
}

export function entryPart(entry: StoredEntry): AnswerPart {
  return { cacheable: true, ttlMs: Math.max(0, entry.expiresAt - Date.now()), isPublic: entry.isPublic };
}

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
