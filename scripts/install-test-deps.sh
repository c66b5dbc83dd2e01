#!/usr/bin/env bash
# System packages some tests use (Debian). Tests that need one skip, naming this script, where it is missing.
# Run as root: `bash scripts/install-test-deps.sh [redis] [chromium]` (no argument: both). Quiet, idempotent (a
# package already installed is left as it is) and tolerant: a package that fails to install is reported and skipped,
# so CI goes on (its tests then skip).
#   redis     redis-server, for the rollout workers' tests (plugins/rollout-bullmq), which start a throwaway server
#             on loopback; the default test suite uses it, so .ci/run installs it.
#   chromium  Debian's chromium, for the report's browser test (plugins/report/test/browser.test.ts, a slow test,
#             through puppeteer-core, which downloads no browser); about 300 MB, so .ci/run leaves it out.
set -u
export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
apt_updated=0
install() {
  if command -v "$1" >/dev/null 2>&1; then
    echo "install-test-deps: $2 is installed ($(command -v "$1"))"
    return 0
  fi
  if [ "$apt_updated" = 0 ]; then $SUDO apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
  if $SUDO apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1; then
    echo "install-test-deps: installed $2"
  else
    echo "install-test-deps: could not install $2 (the tests that need it will skip)"
  fi
}
wanted="${*:-redis chromium}"
for name in $wanted; do
  case "$name" in
    redis) install redis-server redis-server ;;
    chromium) install chromium chromium ;;
    *) echo "install-test-deps: unknown package group \"$name\" (known: redis, chromium)"; exit 2 ;;
  esac
done
