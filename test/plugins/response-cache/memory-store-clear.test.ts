import { describe, expect, it } from 'vitest';
import { MemoryCacheStore } from '../../../plugins/response-cache/store/memory-store.js';

const entry = (key: string) => ({ key, value: { id: key }, ttlMs: 60_000, isPublic: false, indexes: [`subgraph:${key}`] });

describe('MemoryCacheStore.clear (a replica that may have missed broadcast invalidations)', () => {
  it('drops every entry, and the write of a fetch that started before the clear', async () => {
    const store = new MemoryCacheStore({ maxEntries: 10, markTtlMs: 60_000 });
    await store.write([entry('a'), entry('b')], undefined);
    const startedBefore = await store.epoch();
    expect(store.clear()).toBe(2);
    expect(await store.getMany(['a', 'b'])).toEqual([undefined, undefined]);
    // In flight across the clear: dropped.
    expect(await store.write([entry('c')], startedBefore)).toEqual([]);
    expect(await store.getMany(['c'])).toEqual([undefined]);
    // Started after: kept.
    const startedAfter = await store.epoch();
    expect(await store.write([entry('d')], startedAfter)).toHaveLength(1);
    expect((await store.getMany(['d']))[0]).toBeDefined();
  });
});
