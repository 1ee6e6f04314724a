#!/usr/bin/env bash
# Prints the path of a Python interpreter of the given minor version (e.g. 3.12), or fails.
# Looks at $PYTHON<major><minor> (e.g. PYTHON312), `python3.12` on PATH, then pyenv's versions.
set -euo pipefail
want="${1:?usage: find-python.sh 3.12}"
var="PYTHON${want/./}"
if [[ -n "${!var:-}" ]]; then echo "${!var}"; exit 0; fi
# a pyenv shim on PATH answers only when that version is active: try it
if command -v "python$want" >/dev/null 2>&1 && "python$want" -c '' >/dev/null 2>&1; then
  command -v "python$want"; exit 0
fi
if command -v pyenv >/dev/null 2>&1; then
  root="$(pyenv root)"
  for d in $(ls -d "$root/versions/$want".* 2>/dev/null | sort -V -r); do
    if [[ -x "$d/bin/python$want" ]]; then echo "$d/bin/python$want"; exit 0; fi
  done
fi
echo "find-python: no Python $want found (set $var)" >&2
exit 1
