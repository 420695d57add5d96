// Prints each run's files, tests and wall time, then "N passed, N failed[, N skipped]"
// summed from the test runners' JSON reports.
import { existsSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.error(`no test report at ${file}`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  passed += report.numPassedTests ?? 0;
  failed += (report.numFailedTests ?? 0) + (report.numRuntimeErrorTestSuites ?? 0);
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // Where the time goes, for whoever keeps the suite within CI's budget.
  const ended = Math.max(report.startTime ?? 0, ...(report.testResults ?? []).map((result) => result.endTime ?? 0));
  const seconds = report.startTime ? Math.round((ended - report.startTime) / 1000) : 0;
  console.log(`${basename(file, '.json')}: ${(report.testResults ?? []).length} files, ${report.numTotalTests ?? 0} tests, ${seconds} s`);
}
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
process.exit(failed > 0 ? 1 : 0);
