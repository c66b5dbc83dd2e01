#!/usr/bin/env bash
# Python virtual environments for testing and benchmarking drmas against the real Python systems (drmas itself
# installs from npm alone). One environment per requirements file `scripts/python/<name>.txt` (every package pinned
# with ==), created under a machine-level cache so a clean clone reuses it:
#   ${DRMAS_PYTHON_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/drmas/python}/<name>-<first 12 hex of the file's sha256>/
# A finished environment holds `.drmas-complete`; one without it is removed and made again. Tests find an
# environment with test/support/pythonEnv.ts (the same path rule) and skip, naming this script, where it is absent.
#
#   bash scripts/python-env.sh NAME [NAME ...]   make (or reuse) these environments; prints each one's path
#   bash scripts/python-env.sh --all             every scripts/python/*.txt
#   bash scripts/python-env.sh --list            the names and whether each is installed
#
# Exits 0 when every named environment is ready, 1 when one failed (the others are still made); pip's output goes to
# <env>.log beside the environment. Concurrent calls for one environment wait for each other (flock).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
reqdir="$here/python"
home="${DRMAS_PYTHON_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/drmas/python}"
python="${DRMAS_PYTHON:-python3}"

env_path() { echo "$home/$1-$(sha256sum "$reqdir/$1.txt" | cut -c1-12)"; }

make_env() {
  local name="$1" req="$reqdir/$1.txt"
  if [ ! -f "$req" ]; then
    echo "python-env: no requirements file scripts/python/$name.txt (known: $(ls "$reqdir" | sed 's/\.txt$//' | tr '\n' ' '))" >&2
    return 2
  fi
  local dir; dir="$(env_path "$name")"
  mkdir -p "$home"
  (
    flock 9
    if [ -f "$dir/.drmas-complete" ]; then echo "python-env: $name ready: $dir" >&2; exit 0; fi
    rm -rf "$dir"
    echo "python-env: making $name in $dir (pip log: $dir.log)" >&2
    local start=$SECONDS
    if "$python" -m venv "$dir" >"$dir.log" 2>&1 \
      && "$dir/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip >>"$dir.log" 2>&1 \
      && "$dir/bin/python" -m pip install --disable-pip-version-check --progress-bar off -r "$req" >>"$dir.log" 2>&1; then
      "$dir/bin/python" -m pip freeze >"$dir/.drmas-freeze.txt" 2>/dev/null
      date -u +%FT%TZ >"$dir/.drmas-complete"
      echo "python-env: $name ready in $((SECONDS - start)) s: $dir" >&2
    else
      echo "python-env: could not make $name (the tests that need it will skip); last lines of $dir.log:" >&2
      tail -5 "$dir.log" | sed 's/^/  /' >&2
      rm -rf "$dir"
      exit 1
    fi
  ) 9>"$home/$name.lock"
  local status=$?
  [ "$status" = 0 ] && echo "$dir"
  return "$status"
}

case "${1:-}" in
  "" | -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  --list)
    for req in "$reqdir"/*.txt; do
      name="$(basename "$req" .txt)"; dir="$(env_path "$name")"
      if [ -f "$dir/.drmas-complete" ]; then echo "$name: installed $dir"; else echo "$name: absent ($dir)"; fi
    done
    exit 0 ;;
  --all) set -- $(ls "$reqdir" | sed -n 's/\.txt$//p') ;;
esac
failed=0
for name in "$@"; do make_env "$name" || failed=1; done
exit "$failed"
