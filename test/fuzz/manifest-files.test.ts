import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usePersistedOperations } from '../../plugins/persisted-operations/index.js';
import { ManifestFormatError, openOperationsStore, parseManifest, serializeManifest, sha256Hex, type OperationsManifest } from '../../src/operations/index.js';
import { startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { graphqlInput, tempDir } from '../operations/support/operations.js';
import { byHash, collectingLogger, prices, startProducts, topProducts, topProductsData, type LogLine } from '../plugins/persisted-operations/fixtures.js';
import { expectPrototypeUntouched, pollutingKeys } from './prototype.js';

const GOOD: OperationsManifest = {
  version: 1,
  revision: 'r1',
  generatedAt: '2025-01-01T00:00:00.000Z',
  operations: { [sha256Hex(topProducts)]: topProducts },
};
const GOOD_TEXT = serializeManifest(GOOD);

/**
 * Texts near the good manifest: cut, bytes changed, keys injected. None of
 * them is a valid manifest without the good one's operation.
 */
const nearManifest: fc.Arbitrary<string> = fc.oneof(
  fc.nat({ max: GOOD_TEXT.length - 1 }).map((end) => GOOD_TEXT.slice(0, end)),
  fc
    .tuple(fc.nat({ max: GOOD_TEXT.length - 1 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 3 }))
    .map(([at, text]) => GOOD_TEXT.slice(0, at) + text + GOOD_TEXT.slice(at + text.length)),
  fc.tuple(pollutingKeys, fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('top', 'operations', 'aliases')).map(([key, value, where]) => {
    const raw = JSON.parse(GOOD_TEXT) as Record<string, unknown>;
    const injected = `{${JSON.stringify(key)}: ${JSON.stringify(value)}, `;
    if (where === 'top') return GOOD_TEXT.replace('{', injected);
    if (where === 'operations') return GOOD_TEXT.replace('"operations": {', `"operations": ${injected}`);
    return JSON.stringify({ ...raw, aliases: JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(sha256Hex(topProducts))}}`) as unknown });
  }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)),
  fc.string({ unit: 'binary', maxLength: 200 }),
);

/** Manifest texts from near a valid one to far from it, including well-formed ones with other fields and operations. */
const manifestText: fc.Arbitrary<string> = fc.oneof(
  nearManifest,
  fc
    .record(
      {
        version: fc.jsonValue({ maxDepth: 1 }),
        revision: fc.jsonValue({ maxDepth: 1 }),
        generatedAt: fc.jsonValue({ maxDepth: 1 }),
        operations: fc.jsonValue({ maxDepth: 2 }),
        aliases: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    )
    .map((value) => JSON.stringify(value)),
);

describe('fuzzing manifest files', () => {
  it('parses a manifest whole or refuses it with a ManifestFormatError, and keeps only ids the input has, each with its text', () => {
    fc.assert(
      fc.property(manifestText, (text) => {
        let parsed: OperationsManifest | undefined;
        try {
          parsed = parseManifest(text);
        } catch (error) {
          expect(error).toBeInstanceOf(ManifestFormatError);
        }
        // Ids may be client-chosen (Cosmo's manifests): each kept one is a key of the input (64-hex ids lower-cased) with a text.
        const input = parsed ? (JSON.parse(text) as { operations: Record<string, unknown> }).operations : {};
        const inputIds = new Set(Object.keys(input).map((id) => (/^[0-9a-f]{64}$/i.test(id) ? id.toLowerCase() : id)));
        for (const [id, body] of Object.entries(parsed?.operations ?? {})) {
          expect(inputIds.has(id)).toBe(true);
          expect(typeof body).toBe('string');
        }
        for (const id of Object.values(parsed?.aliases ?? {})) expect(Object.hasOwn(parsed!.operations, id)).toBe(true);
        expectPrototypeUntouched();
      }),
      { numRuns: 1000 },
    );
  });

  describe('polled by a running router', () => {
    let products: TestSubgraph;
    let dir: Awaited<ReturnType<typeof tempDir>>;
    let router: TestRouter;
    let lines: LogLine[];

    beforeAll(async () => {
      [products, dir] = await Promise.all([startProducts(), tempDir()]);
      await (await openOperationsStore({ provider: 'file', path: dir.path })).push('default', 'web', [graphqlInput(topProducts)]);
      await writeFile(join(dir.path, 'default', 'manifest.json'), GOOD_TEXT);
      const logs = collectingLogger();
      lines = logs.lines;
      router = await startTestRouter({
        subgraphs: [products],
        logger: logs.logger,
        plugins: [usePersistedOperations({ enabled: true, storage: { provider: 'file', path: dir.path }, manifest: { enabled: true, poll_interval: '20ms', poll_jitter: '0ms' } })],
      });
    });

    afterAll(async () => {
      await router?.close();
      await Promise.all([products?.close(), dir?.remove()]);
    });

    it('keeps serving the operation it had through any file content, and still loads a good manifest afterwards', async () => {
      const path = join(dir.path, 'default', 'manifest.json');
      await fc.assert(
        fc.asyncProperty(nearManifest, async (text) => {
          await writeFile(path, text);
          await new Promise((resolve) => setTimeout(resolve, 50));
          const response = await router.query({ extensions: byHash(sha256Hex(topProducts)) });
          expect(response.body).toEqual({ data: topProductsData });
          expectPrototypeUntouched();
        }),
        { numRuns: 40 },
      );
      const next = serializeManifest({ ...GOOD, revision: 'after-fuzz', operations: { ...GOOD.operations, [sha256Hex(prices)]: prices } });
      await writeFile(path, next);
      await expect
        .poll(async () => (await router.query({ extensions: byHash(sha256Hex(prices)) })).body, { timeout: 5000 })
        .toEqual({ data: { topProducts: [{ price: 899 }, { price: 1299 }] } });
      expect(lines.filter((line) => line.level === 'fatal')).toEqual([]);
    });
  });
});
