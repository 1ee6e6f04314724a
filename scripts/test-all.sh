#!/usr/bin/env bash
# The whole test suite on every supported JAX, each checked against its own JAX:
#   .venv    Python 3.11 + jax 0.10.x (what pip serves there), with the editor end-to-end tests
#   .venv312 Python 3.12 + the newest jax pip serves (0.12.x today); the editor tests run once
# Sets both up first (scripts/setup-dev.sh; idempotent). The editors (neovim, emacs, code-server:
# the slow part of a fresh set-up, code-server compiles native modules) are installed in the
# background while the 3.12 suite runs, which needs none of them; the 3.11 suite, which drives the
# editors, waits for them. Exit status: non-zero if either suite (or a set-up step) fails.
# Usage: scripts/test-all.sh [--no-editors] [extra pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
editors=1
if [[ "${1:-}" == "--no-editors" ]]; then editors=0; shift; fi
start=$(date +%s)
bash scripts/setup-dev.sh --no-editors || exit 1
editors_log=$(mktemp)
editors_pid=""
if [[ $editors == 1 ]]; then
  ( t=$(date +%s)
    for s in scripts/setup-neovim.sh scripts/setup-emacs.sh scripts/setup-vscode.sh; do
      echo "setup-dev: running $s"
      bash "$s" .venv || exit 1
    done
    echo "test-all: editors set up in $(( $(date +%s) - t ))s (in the background)" ) > "$editors_log" 2>&1 &
  editors_pid=$!
fi
py312="$(bash scripts/find-python.sh 3.12)" || exit 1
VENV=.venv312 PYTHON="$py312" bash scripts/setup-dev.sh --no-editors || exit 1
# the newest JAX the registry serves for this Python (a venv made earlier may hold an older one)
.venv312/bin/python -m pip install -q --disable-pip-version-check --upgrade jax jaxlib || exit 1
echo "test-all: setup of both venvs took $(( $(date +%s) - start ))s"

status=0
t=$(date +%s)
echo "test-all: Python 3.12 / $(.venv312/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')"
.venv312/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/editors "$@" || status=1
echo "test-all: 3.12 suite took $(( $(date +%s) - t ))s"
if [[ -n $editors_pid ]]; then
  t=$(date +%s)
  wait "$editors_pid"; editors_status=$?
  cat "$editors_log"
  echo "test-all: waited $(( $(date +%s) - t ))s for the editors"
  if [[ $editors_status != 0 ]]; then echo "test-all: editor set-up FAILED"; rm -f "$editors_log"; exit 1; fi
fi
rm -f "$editors_log"
t=$(date +%s)
echo "test-all: Python 3.11 / $(.venv/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')"
.venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=1
echo "test-all: 3.11 suite took $(( $(date +%s) - t ))s"
echo "test-all: total $(( $(date +%s) - start ))s, $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
