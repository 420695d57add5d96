import type { DeserializedData } from 'keyv';
import type { EntryWrite, StoredEntry, StoredValue } from './cache-store.js';

/**
 * Format of the value stored per key (`StoredValue.v`). Bumped when the
 * value's meaning changes, so a router reads entries of another format
 * (another router version sharing the store during a rolling deploy) as
 * misses and replaces them, never as answers. Format 1 had no `v`.
 */
export const STORED_VALUE_FORMAT = 2;

/** Why a row read from the store is not an entry: written in another format (another router version), or not by a router at all. */
export type UnreadableKind = 'format' | 'shape';

/** Told of each row read as a miss because it is not an entry of this format (`position`: among the rows read). */
export type UnreadableRow = (position: number, kind: UnreadableKind, reason: string) => void;

/** What the shared store's row decoder hands keyv for text that is not a JSON object (kept so the read can report it). */
export class UnparsedRow {
  /** None: keyv passes the row on as it is (no expiry to check). */
  readonly value?: undefined;
  readonly expires?: undefined;
  constructor(readonly reason: string) {}
}

/** The value keyv stores for an entry. */
export function toStoredValue(entry: Pick<EntryWrite, 'value' | 'isPublic' | 'indexes'>, withIndexes = false): StoredValue {
  const value: StoredValue = entry.isPublic ? { v: STORED_VALUE_FORMAT, d: entry.value, p: 1 } : { v: STORED_VALUE_FORMAT, d: entry.value };
  return withIndexes ? { ...value, i: entry.indexes } : value;
}

/**
 * Keyv rows (`{ value, expires }`) as entries, in order. A row of another
 * format or shape reads as a miss (so the next answer from the subgraph
 * replaces it) and is reported to `unreadable`. The check looks at the
 * envelope only: a handful of property reads per row (and one per index id),
 * never a walk of the cached data, which JSON decoding has already read.
 */
export function readRows(rows: ReadonlyArray<DeserializedData<StoredValue> | undefined>, unreadable?: UnreadableRow): Array<StoredEntry | undefined> {
  // Pushed one by one: a holey array would be skipped over by forEach and map.
  const entries: Array<StoredEntry | undefined> = [];
  for (let position = 0; position < rows.length; position++) {
    const row: unknown = rows[position];
    const problem = row === undefined || row === null ? undefined : problemOf(row);
    if (problem === undefined) {
      entries.push(row === undefined || row === null ? undefined : entryOf(row as DeserializedData<StoredValue>));
    } else {
      entries.push(undefined);
      unreadable?.(position, problem.kind, problem.reason);
    }
  }
  return entries;
}

function entryOf(row: DeserializedData<StoredValue>): StoredEntry {
  const value = row.value!;
  const expiresAt = row.expires!;
  return value.i === undefined ? { value: value.d, expiresAt, isPublic: value.p === 1 } : { value: value.d, expiresAt, isPublic: value.p === 1, indexes: value.i };
}

/** What is wrong with a row, or undefined when it is an entry of this format: the checks `toStoredValue` makes true. */
function problemOf(row: unknown): { kind: UnreadableKind; reason: string } | undefined {
  if (row instanceof UnparsedRow) return { kind: 'shape', reason: row.reason };
  if (!isPlainObject(row)) return { kind: 'shape', reason: 'not a JSON object' };
  const value = row.value;
  if (!isPlainObject(value)) return { kind: 'shape', reason: 'value is not an object' };
  const format = value.v;
  if (format !== STORED_VALUE_FORMAT) {
    if (format === undefined) return { kind: 'format', reason: `no format version (format 1); this router reads format ${STORED_VALUE_FORMAT}` };
    if (typeof format === 'number') return { kind: 'format', reason: `format ${format}; this router reads format ${STORED_VALUE_FORMAT}` };
    return { kind: 'shape', reason: 'format version is not a number' };
  }
  const expires = row.expires;
  if (typeof expires !== 'number' || !Number.isFinite(expires)) return { kind: 'shape', reason: 'expiry is not a number' };
  if (!isPlainObject(value.d)) return { kind: 'shape', reason: 'data is not an object' };
  if (value.p !== undefined && value.p !== 1) return { kind: 'shape', reason: 'public flag is not 1' };
  const indexes = value.i;
  if (indexes !== undefined && !(Array.isArray(indexes) && indexes.every((id) => typeof id === 'string'))) return { kind: 'shape', reason: 'index ids are not a list of strings' };
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
