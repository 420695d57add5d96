/**
 * The public surface of `switchyard` and `switchyard/testing`, compared with
 * the reports committed in test/sdk/api/. A change to an export (added,
 * removed, a field or parameter changed) fails here until the report is
 * regenerated on purpose with `npm run api:update`, so it shows in review.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { apiReports } from './api-report.js';

const ENTRIES = [
  { specifier: 'switchyard', source: 'src/index.ts', report: './api/switchyard.api.md' },
  { specifier: 'switchyard/testing', source: 'src/testing/index.ts', report: './api/switchyard-testing.api.md' },
] as const;

describe('the public API', () => {
  let reports: Map<string, string>;
  // One compiler program for both entries: building it is the slow part.
  beforeAll(() => {
    reports = apiReports(ENTRIES);
  }, 180_000);

  for (const entry of ENTRIES) {
    // The name is what a failure shows first, so it says what to do.
    it(`of ${entry.specifier} matches test/sdk/${entry.report.slice(2)} (after a deliberate change: npm run api:update)`, async () => {
      await expect(reports.get(entry.specifier)).toMatchFileSnapshot(entry.report);
    });
  }
});
