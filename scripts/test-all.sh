#!/usr/bin/env bash
# The whole test suite on every supported JAX, each checked against its own JAX:
#   .venv    Python 3.11 + jax 0.10.x (what pip serves there), with the editor end-to-end tests
#   .venv312 Python 3.12 + jax 0.12.0.1 (scripts/jax-tested.txt)
#   .venv313 Python 3.13 + the newest JAX taken on (jax-tested.txt's `newest` line: 0.12.1)
# The editor tests run once. Sets the venvs up first (scripts/setup-dev.sh; idempotent). The
# editors (neovim, emacs, code-server: the slow part of a fresh set-up, code-server compiles
# native modules) are installed in the background meanwhile. The three suites (all but the editor
# tests) then run at the same time, one process each, on the machine's two cores; the editor
# tests run last, on 3.11, once the editors are in place. Exit status: non-zero if a suite, the
# editor tests or a set-up step fails.
# Usage: scripts/test-all.sh [--no-editors] [extra pytest args, for the suites...]
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
# the JAX the suite is checked against for this Python (scripts/jax-tested.txt; a venv made
# earlier may hold another one)
.venv312/bin/python -m pip install -q --disable-pip-version-check -c scripts/jax-tested.txt jax jaxlib || exit 1
newest="$(sed -n 's/^# newest: jax==//p' scripts/jax-tested.txt)"
[[ -n $newest ]] || { echo "test-all: no '# newest: jax==' line in scripts/jax-tested.txt"; exit 1; }
py313="$(bash scripts/find-python.sh 3.13)" || exit 1
VENV=.venv313 PYTHON="$py313" JAX_PIN="$newest" bash scripts/setup-dev.sh --no-editors || exit 1
echo "test-all: setup of the three venvs took $(( $(date +%s) - start ))s"

# The three suites (all but the editor tests) at once: each is one process, the machine has two
# cores, and code-server's build (a fresh machine) shares them. Each suite's output is printed
# when it ends. Then the editor tests, on 3.11, once the editors are in place.
status=0
t=$(date +%s)
log312=$(mktemp); log311=$(mktemp); log313=$(mktemp)
jax312=$(.venv312/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')
jax313=$(.venv313/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')
jax311=$(.venv/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')
( .venv312/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/editors "$@" > "$log312" 2>&1 ) &
pid312=$!
( .venv313/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/editors "$@" > "$log313" 2>&1 ) &
pid313=$!
( .venv/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/editors "$@" > "$log311" 2>&1 ) &
pid311=$!
wait "$pid312" || status=1
echo "test-all: Python 3.12 / $jax312"
cat "$log312"
echo "test-all: 3.12 ($jax312) suite took $(( $(date +%s) - t ))s"
wait "$pid313" || status=1
echo "test-all: Python 3.13 / $jax313"
cat "$log313"
echo "test-all: 3.13 ($jax313) suite took $(( $(date +%s) - t ))s (at the same time as the others)"
wait "$pid311" || status=1
echo "test-all: Python 3.11 / $jax311"
cat "$log311"
echo "test-all: 3.11 suite took $(( $(date +%s) - t ))s (at the same time as the others)"
rm -f "$log312" "$log311" "$log313"
if [[ -n $editors_pid ]]; then
  t=$(date +%s)
  wait "$editors_pid"; editors_status=$?
  cat "$editors_log"
  echo "test-all: waited $(( $(date +%s) - t ))s for the editors"
  if [[ $editors_status != 0 ]]; then echo "test-all: editor set-up FAILED"; rm -f "$editors_log"; exit 1; fi
fi
rm -f "$editors_log"
t=$(date +%s)
echo "test-all: editor tests, Python 3.11 / $jax311"
.venv/bin/python -m pytest -q -p no:cacheprovider tests/editors || status=1
echo "test-all: editor tests took $(( $(date +%s) - t ))s"
echo "test-all: total $(( $(date +%s) - start ))s, $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
