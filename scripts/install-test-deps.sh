#!/bin/sh
# Installs what the slow tests need beyond npm: Debian's chromium, for the report's browser test
# (plugins/report/test/browser.test.ts, through puppeteer-core, which downloads no browser).
# Idempotent: a package already installed is left as it is. Needs root (or sudo) and apt.
set -eu
if command -v chromium >/dev/null 2>&1; then
  echo "install-test-deps: chromium is installed ($(command -v chromium)); nothing to do"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
echo "install-test-deps: apt-get update"
$SUDO apt-get update
echo "install-test-deps: apt-get install -y chromium"
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y chromium
echo "install-test-deps: chromium installed at $(command -v chromium); the browser test uses it (or DRMAS_CHROMIUM)"
