#!/usr/bin/env bash
# `npm run test:reliability`: the suite in test/reliability, slow parts included (jest.reliability.config.js, one
# worker), then the table of what it tried (test/reliability/summary.mjs). Arguments go to jest (e.g. a test file's
# path, or `--json --outputFile=F`, which .ci/run passes to count the tests).
set -uo pipefail
cd "$(dirname "$0")/.."
npx tsc -b || { echo "test:reliability: the build failed" >&2; exit 1; }
DRMAS_SLOW_TESTS=1 node --no-warnings=ExperimentalWarning --experimental-vm-modules node_modules/jest/bin/jest.js \
  -c jest.reliability.config.js --maxWorkers=1 "$@"
status=$?
node test/reliability/summary.mjs || status=1
exit "$status"
