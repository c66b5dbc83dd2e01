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
# A line `# python: 3.12` in a requirements file makes its environment with that Python (python3.12 on PATH or
# pyenv's). After a line `# --no-deps` the packages are installed without their requirements (a package pinning a
# build no registry here serves, whose requirements the lines before it satisfy).
#
# Exits 0 when every named environment is ready, 1 when one failed (the others are still made); pip's output goes to
# <env>.log beside the environment. Concurrent calls for one environment wait for each other (flock).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
reqdir="$here/python"
home="${DRMAS_PYTHON_HOME:-${XDG_CACHE_HOME:-$HOME/.cache}/drmas/python}"
python="${DRMAS_PYTHON:-python3}"

env_path() { echo "$home/$1-$(sha256sum "$reqdir/$1.txt" | cut -c1-12)"; }

# The Python an environment is made with: $DRMAS_PYTHON (default python3), or the version a `# python: X.Y` line of
# the requirements file names (python3.X.Y on PATH, else pyenv's), for a package that runs on no other.
env_python() {
  local version; version="$(sed -n 's/^# python: *\([0-9.]*\).*/\1/p' "$1" | head -1)"
  if [ -z "$version" ]; then echo "$python"; return 0; fi
  local candidate
  for candidate in "python$version" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$version"*/bin/"python$version"; do
    if "$candidate" --version >/dev/null 2>&1; then echo "$candidate"; return 0; fi
  done
  echo "it needs Python $version (python$version), which is not installed"
  return 1
}

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
    local interpreter; interpreter="$(env_python "$req")" || { echo "python-env: $name: $interpreter" >&2; exit 1; }
    if "$interpreter" -m venv "$dir" >"$dir.log" 2>&1 \
      && "$dir/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip >>"$dir.log" 2>&1 \
      && "$dir/bin/python" -m pip install --disable-pip-version-check --progress-bar off -r <(sed '/^# --no-deps/,$d' "$req") >>"$dir.log" 2>&1 \
      && { ! grep -q '^# --no-deps' "$req" \
        || "$dir/bin/python" -m pip install --disable-pip-version-check --progress-bar off --no-deps -r <(sed -n '/^# --no-deps/,$p' "$req") >>"$dir.log" 2>&1; }; then
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
  "" | -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
