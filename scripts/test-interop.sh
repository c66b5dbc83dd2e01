#!/usr/bin/env bash
# `npm run test:interop`: drmas against the real external systems. Makes (or reuses) every pinned Python environment
# of scripts/python/*.txt with scripts/python-env.sh (an environment that cannot be made is reported, and the tests
# that need it skip), builds, runs jest over test/interop/**/*.test.ts (jest.interop.config.js, one worker), and ends
# with one line naming the systems skipped and why. Arguments go to jest (e.g. a test file's path).
# The jest JSON report goes to $DRMAS_INTEROP_REPORT (default .drmas-cache/interop-report.json); .ci/run counts it.
set -uo pipefail
cd "$(dirname "$0")/.."
report="${DRMAS_INTEROP_REPORT:-.drmas-cache/interop-report.json}"
mkdir -p "$(dirname "$report")"
rm -f "$report"
start=$SECONDS
# DRMAS_INTEROP_SKIP (comma-separated environment names) leaves environments out: not made, their suites skipped with
# DRMAS_INTEROP_SKIP_REASON as the reason (.ci/run leaves out those too slow to install and run in CI's time).
skip=",${DRMAS_INTEROP_SKIP:-},"
envs=()
for req in scripts/python/*.txt; do
  name="$(basename "$req" .txt)"
  [[ "$skip" == *",$name,"* ]] || envs+=("$name")
done
bash scripts/python-env.sh "${envs[@]}" >/dev/null || echo "test:interop: some Python environments could not be made (their tests skip); see above" >&2
echo "test:interop: Python environments ready after $((SECONDS - start)) s" >&2
npx tsc -b || { echo "test:interop: the build failed" >&2; exit 1; }
node --no-warnings=ExperimentalWarning --experimental-vm-modules node_modules/jest/bin/jest.js -c jest.interop.config.js \
  --maxWorkers=1 --json --outputFile="$report" "$@"
status=$?
node test/interop/summary.mjs "$report"
echo "test:interop: $((SECONDS - start)) s in all" >&2
exit "$status"
