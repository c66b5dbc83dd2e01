#!/usr/bin/env bash
# System packages some tests use (Debian). Tests that need one skip, naming this script, where it is missing.
# Run as root: `bash scripts/install-test-deps.sh [redis] [chromium] [torch] [vulkan]` (no argument: redis and chromium). Quiet, idempotent (a
# package already installed is left as it is) and tolerant: a package that fails to install is reported and skipped,
# so CI goes on (its tests then skip).
#   redis     redis-server, for the rollout workers' tests (plugins/rollout-bullmq), which start a throwaway server
#             on loopback; the default test suite uses it, so .ci/run installs it.
#   chromium  Debian's chromium, for the report's browser test (plugins/report/test/browser.test.ts, a slow test,
#             through puppeteer-core, which downloads no browser); about 300 MB, so .ci/run leaves it out.
#   torch     Debian's python3-torch (CPU), for the DPO losses' PyTorch reference
#             (plugins/backend-tfjs/test/dpoTorchReference.test.ts, run by /usr/bin/python3); python3-torch, libtorch1.13
#             and libtorch-test alone are about 230 MB installed (numpy, sympy and the rest come on top), so .ci/run
#             leaves it out. With it, libopenblas0-pthread: Debian's torch calls BLAS through libblas.so.3, the
#             reference BLAS unless an OpenBLAS is installed (bench/README.md).
#   vulkan    libvulkan1 and Mesa's Vulkan drivers, whose lavapipe is a software Vulkan device on the CPU: onnxruntime's
#             WebGPU execution provider (Dawn) runs on it, so the slow tests of `provider: webgpu`
#             (plugins/backend-onnx/test/webgpuProvider.test.ts) compare its graphs with the CPU's without a GPU. Dawn
#             needs a newer lavapipe than Debian 12's Mesa 22.3: on bookworm it comes from bookworm-backports (Mesa 25),
#             a Debian suite this adds to apt's sources. About 100 MB, so .ci/run leaves it out.
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
  apt_install "$2"
}
apt_install() {
  if [ "$apt_updated" = 0 ]; then $SUDO apt-get update -qq >/dev/null 2>&1 || true; apt_updated=1; fi
  if $SUDO apt-get install -y -qq --no-install-recommends "$1" >/dev/null 2>&1; then
    echo "install-test-deps: installed $1"
  else
    echo "install-test-deps: could not install $1 (the tests that need it will skip)"
  fi
}
wanted="${*:-redis chromium}"
for name in $wanted; do
  case "$name" in
    redis) install redis-server redis-server ;;
    chromium) install chromium chromium ;;
    torch)
      if /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then echo "install-test-deps: python3-torch is installed"
      else apt_install python3-torch; fi
      # torch calls BLAS through libblas.so.3: without OpenBLAS that is the reference BLAS (npm run bench's PyTorch).
      if dpkg -s libopenblas0-pthread >/dev/null 2>&1; then echo "install-test-deps: libopenblas0-pthread is installed"
      else apt_install libopenblas0-pthread; fi ;;
    vulkan)
      if dpkg -s libvulkan1 >/dev/null 2>&1; then echo "install-test-deps: libvulkan1 is installed"
      else apt_install libvulkan1; fi
      mesa=$(dpkg-query -W -f '${Version}' mesa-vulkan-drivers 2>/dev/null || true)
      if [ -n "$mesa" ] && dpkg --compare-versions "$mesa" ge 24; then echo "install-test-deps: mesa-vulkan-drivers $mesa is installed"
      elif grep -qs 'VERSION_CODENAME=bookworm' /etc/os-release; then
        echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/drmas-bookworm-backports.list >/dev/null
        $SUDO apt-get update -qq >/dev/null 2>&1 || true
        if $SUDO apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers >/dev/null 2>&1; then
          echo "install-test-deps: installed mesa-vulkan-drivers from bookworm-backports"
        else echo "install-test-deps: could not install mesa-vulkan-drivers (the tests that need it will skip)"; fi
      else apt_install mesa-vulkan-drivers; fi ;;
    *) echo "install-test-deps: unknown package group \"$name\" (known: redis, chromium, torch, vulkan)"; exit 2 ;;
  esac
done
