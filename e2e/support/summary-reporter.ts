// Prints the tests' notes (test.info().annotations of type "note") and one
// machine-readable closing line after the list reporter:
//   e2e: N passed, N failed, N skipped
// An error outside any test (global setup or teardown) counts as a failure, so
// the line never reads green for a run that was not.
import type { FullResult, Reporter, TestCase, TestError, TestResult } from '@playwright/test/reporter';

export default class SummaryReporter implements Reporter {
  private outcome = new Map<string, TestResult['status']>();
  private globalErrors = 0;
  private notes: string[] = [];

  printsToStdio() {
    return true;
  }

  onTestEnd(test: TestCase, result: TestResult) {
    this.outcome.set(test.id, result.status); // the last attempt counts
    for (const a of result.annotations) {
      if (a.type === 'note' && a.description) this.notes.push(`${test.title}: ${a.description}`);
    }
  }

  onError(_error: TestError) {
    this.globalErrors++;
  }

  onEnd(result: FullResult) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const status of this.outcome.values()) {
      if (status === 'passed') passed++;
      else if (status === 'skipped') skipped++;
      else failed++;
    }
    failed += this.globalErrors;
    if (result.status !== 'passed' && failed === 0) failed = 1; // e.g. interrupted or timed out as a whole
    for (const n of this.notes) console.log(`note: ${n}`);
    console.log(`e2e: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
