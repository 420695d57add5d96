import { type EntityCallPart, type JsonObject, type StageEvent, type AfterStageHook, withEntityParts } from '../../src/index.js';
import { CACHE_TAGS } from '../cache-tags/index.js';
import { combineParts, UNCACHEABLE, type AnswerPart } from './client-cache-control.js';
import { claimEpoch, entryPart, isObject, keyFor, noteSaved, partOf, policyOf, readEntries, recordAnswerPart, write, writeEpoch, type FetchHookContext } from './fetch-hook.js';
import type { EntityLookup } from './hit-memo.js';
import { indexesOf } from './index-ids.js';
import { representationsVariableOf } from './cache-key.js';
import { rebuildEntities } from './partial-batch.js';
import type { FetchCacheStatus, ResponseCacheRecord } from './request-record.js';
import type { EntryWrite, StoredEntry } from './store/cache-store.js';

/** One part of a batched call as the cache sees it: its keys and what the store had. */
interface PartLookup {
  readonly part: EntityCallPart;
  readonly lookup: EntityLookup;
  /** Per representation: the entry found (undefined: a miss). */
  readonly found: Array<StoredEntry | undefined>;
  /** Per representation: served from the user's private entry. */
  readonly privateAt: boolean[] | undefined;
  /** Positions of the misses. */
  readonly missing: number[];
  /** Served whole from the memo (no store read): its entities. */
  readonly reused: { values: readonly JsonObject[]; part: AnswerPart } | undefined;
}

/**
 * The cache for a batched entity call (`SubgraphRequest.parts`): each
 * aliased part has the entries the entity fetch it stands for would have
 * (per entity and selection, keyed by the part's own selection and
 * variables), so a part is served, partly served or fetched on its own. The
 * request sent carries only the parts with misses, each with only its
 * missing representations when `fetch_missing_entities_only` is on; the
 * answer the kernel gets has every part, cached entities included. One
 * store read for all parts; one debug status for the call.
 */
export async function lookupEntityParts(
  context: FetchHookContext,
  event: StageEvent<'fetch'>,
  record: ResponseCacheRecord,
  status: FetchCacheStatus,
  parts: readonly EntityCallPart[],
): Promise<AfterStageHook<'fetch'> | void> {
  const request = event.input;
  const user = context.privateEntries?.userOf(event.state, record);
  const version = context.store.version?.();
  // Each part is keyed as the call it would be alone: its selection, variables and representations variable.
  const lookups = parts.map((part) =>
    context.memo.entityLookup(
      { ...request, selectionSet: part.selectionSet, variables: part.variables, representationsVariable: part.representationsVariable },
      part.representations,
    ),
  );
  const reused = lookups.map((lookup) => (record.refresh ? undefined : context.memo.reusableHit(lookup, version)));
  // One read for every key of the parts the memo could not answer.
  const toRead = lookups.flatMap((lookup, i) => (reused[i] ? [] : lookup.keys));
  const read = record.refresh
    ? { entries: toRead.map(() => undefined), privateAt: undefined }
    : toRead.length === 0
      ? { entries: [], privateAt: undefined }
      : await readEntries(context, toRead, user);
  if (!read) return recordAnswerPart(record, context.fallbackTtlMs, user);
  let offset = 0;
  const looked: PartLookup[] = parts.map((part, i) => {
    const lookup = lookups[i]!;
    const hit = reused[i];
    if (hit) {
      const values = (hit.answer.data?._entities ?? []) as readonly JsonObject[];
      return { part, lookup, found: [], privateAt: undefined, missing: [], reused: { values, part: { cacheable: true, ttlMs: hit.ttlMs, isPublic: hit.isPublic } } };
    }
    const count = lookup.keys.length;
    const found = read.entries.slice(offset, offset + count);
    const privateAt = read.privateAt?.slice(offset, offset + count);
    offset += count;
    const missing = found.flatMap((entry, position) => (entry ? [] : [position]));
    return { part, lookup, found, privateAt, missing, reused: undefined };
  });
  const types = looked.flatMap((l) => l.lookup.types);
  const served = looked.flatMap((l) => (l.reused ? l.lookup.types : l.lookup.types.filter((_, i) => l.found[i] !== undefined)));
  const missed = looked.flatMap((l) => l.missing.map((i) => l.lookup.types[i]!));
  if (missed.length === 0) {
    status.status = 'hit';
    context.metrics.hits(request.subgraph, types);
    noteSaved(status, types.length, 0, undefined);
    context.savings.avoided(request.subgraph, `batch\0${request.subgraph}\0${request.selectionSet}`, types);
    const data: Record<string, unknown> = {};
    const answerParts: AnswerPart[] = [];
    for (const l of looked) {
      data[l.part.alias] = l.reused ? l.reused.values : servedValues(context, l, version, answerParts);
      if (l.reused) answerParts.push(l.reused.part);
    }
    record.parts.push(combineParts(answerParts));
    event.respondWith({ data });
    return;
  }
  // Parts with misses go out: whole, or only their misses.
  const partial = context.fetchMissingEntitiesOnly;
  const sent = looked.flatMap((l) => {
    if (l.missing.length === 0) return [];
    if (!partial || l.missing.length === l.found.length) return [{ l, positions: l.found.map((_, i) => i), part: l.part }];
    const representations = l.missing.map((i) => l.part.representations[i]!);
    return [{ l, positions: l.missing, part: { ...l.part, representations, variables: { ...l.part.variables, [representationsVariableOf(l.part)]: representations } } }];
  });
  event.setInput(
    withEntityParts(
      request,
      sent.map((s) => s.part),
    ),
  );
  context.metrics.misses(request.subgraph, missed);
  if (served.length > 0) {
    status.status = 'partial_hit';
    context.metrics.hits(request.subgraph, served);
    context.savings.partialHit(request.subgraph, served);
  } else {
    status.status = 'miss';
  }
  noteSaved(status, served.length, missed.length, undefined);
  const claim = await claimEpoch(context, event);
  return async function storeEntityParts(after) {
    claim?.end();
    const fetched = after.output;
    const policy = policyOf(after, context.fallbackTtlMs, user);
    // Every part the kernel asked for, cached entities put back at their positions.
    let answer = fetched;
    const servedParts: AnswerPart[] = [];
    for (const l of looked) {
      const s = sent.find((candidate) => candidate.l === l);
      if (s && s.positions.length === l.found.length) continue;
      const cached = l.reused ? l.reused.values : l.found.map((entry) => entry?.value);
      answer = rebuildEntities(answer, cached, s ? s.positions : [], request.subgraph, l.part.alias);
      if (l.reused) servedParts.push(l.reused.part);
      else l.found.forEach((entry, i) => entry && servedParts.push(l.privateAt?.[i] ? UNCACHEABLE : entryPart(entry)));
    }
    if (answer !== fetched) after.setOutput(answer);
    record.parts.push(combineParts([partOf(policy), ...servedParts]));
    const since = writeEpoch(after, claim, fetched);
    if (!policy.store || since === false) return;
    const tags = after.state.get(CACHE_TAGS)?.of(after.input);
    const entityTags = tags?.kind === 'entity' ? tags.entities : undefined;
    const writes: EntryWrite[] = [];
    const written: string[] = [];
    let tagOffset = 0;
    for (const { l, positions, part } of sent) {
      const entities = fetched.data?.[part.alias];
      if (!Array.isArray(entities)) continue;
      // Tags count every part's entities in order (cache-tags' reading): a part whose
      // answer is not stored still moves the later parts' tags on by its length.
      const offset = tagOffset;
      tagOffset += entities.length;
      if (entities.length !== positions.length) continue;
      positions.forEach((position, i) => {
        const value: unknown = entities[i];
        if (!isObject(value)) return;
        const type = l.lookup.types[position]!;
        const indexes = indexesOf(context.switches, request.subgraph, type, entityTags?.[offset + i]);
        writes.push({ key: keyFor(policy, l.lookup.keys[position]!, user), value, ttlMs: policy.ttlMs, isPublic: policy.isPublic, indexes });
        written.push(type);
      });
    }
    await write(context, request.subgraph, writes, written, since);
  };
}

/** A part served whole from the entries read: its entities, remembered for reuse when none is a user's private one. */
function servedValues(context: FetchHookContext, l: PartLookup, version: number | undefined, answerParts: AnswerPart[]): readonly JsonObject[] {
  const values = l.found.map((entry) => entry!.value);
  const part = combineParts(l.found.map((entry, i) => (l.privateAt?.[i] ? UNCACHEABLE : entryPart(entry!))));
  answerParts.push(part);
  if (l.privateAt?.includes(true)) return values;
  const expiresAt = l.found.reduce((earliest, entry) => Math.min(earliest, entry!.expiresAt), Number.POSITIVE_INFINITY);
  const answer = context.memo.entityAnswer(l.lookup, values, { version, expiresAt, isPublic: part.cacheable && part.isPublic });
  return (answer.data?._entities ?? values) as readonly JsonObject[];
}
