/**
 * In-flight sharing (builtins/single-flight.ts) hands every shared call one
 * router-wide abort signal, and each call in flight listens on it until it
 * ends. Many concurrent calls are normal load, not a leak: Node must not warn
 * about them on stderr (MaxListenersExceededWarning past 10 listeners).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSubgraph, startTestRouter, type TestSubgraph } from '../../../src/testing/index.js';
import { librarySubgraph } from '../library-subgraphs.js';

let library: TestSubgraph;
beforeAll(async () => {
  // Slow enough that all the calls below are in flight at once.
  library = await startSubgraph({ ...librarySubgraph(), delayMs: 50 });
});
afterAll(async () => {
  await library?.close();
});

describe('single flight', () => {
  it('runs 30 distinct subgraph calls at once without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning);
    process.on('warning', onWarning);
    const router = await startTestRouter({ subgraphs: [library] });
    try {
      // Distinct aliases: distinct subgraph queries, none shared with another.
      const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => router.query(`{ books { b${i}: id } }`)));
      expect(responses.map((r) => r.status)).toEqual(Array(30).fill(200));
      expect(library.calls).toHaveLength(30);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
      await router.close();
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });
});
