// One line after `npm run test:interop`: which external systems were skipped and why, read from jest's JSON report
// (a skipped interop suite carries `<system> [skipped: <reason>]` as its title: test/support/interopSuite.ts).
import { existsSync, readFileSync } from 'node:fs';

const SKIPPED_TITLE = /^(.+) \[skipped: (.+)\]$/;
const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.log(`interop: no jest report at ${file}: jest did not run`);
  process.exit(0);
}
const report = JSON.parse(readFileSync(file, 'utf8'));
const skipped = new Map();
for (const result of report.testResults ?? []) {
  for (const assertion of result.assertionResults ?? []) {
    for (const title of assertion.ancestorTitles ?? []) {
      const match = SKIPPED_TITLE.exec(title);
      if (match) skipped.set(match[1], match[2]);
    }
  }
}
const ran = `${report.numPassedTests} passed, ${report.numFailedTests} failed`;
console.log(
  skipped.size
    ? `interop: ${ran}; skipped ${[...skipped].map(([system, why]) => `${system} (${why})`).join('; ')}`
    : `interop: ${ran}; no system skipped`,
);
