#!/usr/bin/env bash
# System packages some tests use (Debian). Tests that need one skip, naming this script, where it is missing.
# Run as root: bash scripts/install-test-deps.sh. Quiet, and tolerant: a package that fails to install is reported
# and skipped, so CI goes on (its tests then skip).
set -u
export DEBIAN_FRONTEND=noninteractive
apt_updated=0
install() {
  command -v "$1" >/dev/null 2>&1 && return 0
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
  apt-get install -y -qq --no-install-recommends "$2" >/dev/null 2>&1 || echo "install-test-deps: could not install $2 (the tests that need it will skip)"
}
# Rollout workers (plugins/rollout-bullmq): a throwaway redis-server on loopback, started by the tests themselves.
install redis-server redis-server
