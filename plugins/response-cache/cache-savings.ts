import { LRUCache } from 'lru-cache';
import type { Counter, Metrics } from '../../src/index.js';

/** Weight of the newest measurement in a fetch's average latency. */
const SMOOTHING = 0.2;

/** Fetch shapes whose latency is remembered (least recently used forgotten beyond). */
const MAX_SHAPES = 2000;
/** Heap the remembered shapes may take (their text, counted at two bytes a character). */
const MAX_SHAPE_BYTES = 16 * 1024 * 1024;

/**
 * What the cache saved. A fetch the cache answered whole is a subgraph
 * call avoided; the time it would have taken is the average latency of the
 * same fetch shape (the entry's key for root fetches: subgraph, operation
 * and variables; subgraph and selection set for entity fetches) measured on
 * its recent misses. Until a
 * shape has been measured once, its avoided calls add no time.
 *
 * Counters by subgraph and type: `switchyard_response_cache_partial_hits_total`,
 * `_calls_avoided_total` and `_time_saved_seconds_total`. An avoided call
 * fetching several types is shared among them by their number of entities
 * (so the counts of one subgraph add up to its calls).
 */
export class CacheSavings {
  // Shapes are fetch texts, which can carry a client's literals: bounded by their bytes too.
  private readonly latencyMs = new LRUCache<string, number>({ max: MAX_SHAPES, maxSize: MAX_SHAPE_BYTES, sizeCalculation: (_ms, shape) => 64 + shape.length * 2 });
  private readonly partialCounter: Counter;
  private readonly avoidedCounter: Counter;
  private readonly savedCounter: Counter;
  private readonly enabled: boolean;

  constructor(metrics: Metrics) {
    const labels = ['subgraph', 'type'];
    this.enabled = metrics.enabled;
    this.partialCounter = metrics.counter('response_cache_partial_hits_total', 'Entity fetches answered partly from the response cache (the misses fetched)', labels);
    this.avoidedCounter = metrics.counter('response_cache_calls_avoided_total', 'Subgraph calls the response cache answered whole', labels);
    this.savedCounter = metrics.counter(
      'response_cache_time_saved_seconds_total',
      'Subgraph time the avoided calls would have taken (average of measured misses of the same fetch)',
      labels,
    );
  }

  /** A fetch of `shape` went to the subgraph whole and took `ms`. */
  measured(shape: string, ms: number): void {
    const average = this.latencyMs.get(shape);
    this.latencyMs.set(shape, average === undefined ? ms : average + SMOOTHING * (ms - average));
  }

  /**
   * A fetch of `shape` answered whole from the cache; `types` has one item
   * per entity (`Query` for a root fetch). `ms`: its measured time, when it
   * was made anyway (shadow mode). Returns the time saved (ms), undefined
   * when the shape has not been measured yet.
   */
  avoided(subgraph: string, shape: string, types: readonly string[], ms?: number): number | undefined {
    const saved = ms ?? this.latencyMs.get(shape);
    if (!this.enabled || types.length === 0) return saved;
    for (const [type, count] of countOf(types)) {
      const share = count / types.length;
      this.avoidedCounter.inc({ subgraph, type }, share);
      if (saved !== undefined) this.savedCounter.inc({ subgraph, type }, (saved / 1000) * share);
    }
    return saved;
  }

  /** An entity fetch answered partly from the cache; `types`: those of the entities it served. */
  partialHit(subgraph: string, types: readonly string[]): void {
    if (!this.enabled) return;
    for (const type of countOf(types).keys()) this.partialCounter.inc({ subgraph, type });
  }
}

function countOf(types: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of types) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}
