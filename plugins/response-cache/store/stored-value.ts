import type { DeserializedData } from 'keyv';
import type { EntryWrite, StoredEntry, StoredValue } from './cache-store.js';

/** The value keyv stores for an entry. */
export function toStoredValue(entry: Pick<EntryWrite, 'value' | 'isPublic' | 'indexes'>, withIndexes = false): StoredValue {
  const value: StoredValue = entry.isPublic ? { d: entry.value, p: 1 } : { d: entry.value };
  return withIndexes ? { ...value, i: entry.indexes } : value;
}

/** A keyv row (`{ value, expires }`) as an entry; undefined for a miss or a row of another shape. */
export function toStoredEntry(row: DeserializedData<StoredValue> | undefined): StoredEntry | undefined {
  if (!row || typeof row.expires !== 'number') return undefined;
  const value = row.value;
  if (!value || typeof value !== 'object' || !value.d || typeof value.d !== 'object') return undefined;
  const indexes = Array.isArray(value.i) && value.i.every((id) => typeof id === 'string') ? value.i : undefined;
  return indexes ? { value: value.d, expiresAt: row.expires, isPublic: value.p === 1, indexes } : { value: value.d, expiresAt: row.expires, isPublic: value.p === 1 };
}
