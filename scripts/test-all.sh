#!/usr/bin/env bash
# The whole test suite on every supported JAX, each checked against its own JAX:
#   .venv    Python 3.11 + jax 0.10.x (what pip serves there), with the editor end-to-end tests
#   .venv312 Python 3.12 + the newest jax pip serves (0.12.x today); the editor tests run once
# Sets both up first (scripts/setup-dev.sh; idempotent). Exit status: non-zero if either fails.
# Usage: scripts/test-all.sh [--no-editors] [extra pytest args...]
set -uo pipefail
cd "$(dirname "$0")/.."
setup_args=()
if [[ "${1:-}" == "--no-editors" ]]; then setup_args=(--no-editors); shift; fi
start=$(date +%s)
bash scripts/setup-dev.sh "${setup_args[@]}" || exit 1
py312="$(bash scripts/find-python.sh 3.12)" || exit 1
VENV=.venv312 PYTHON="$py312" bash scripts/setup-dev.sh --no-editors || exit 1
# the newest JAX the registry serves for this Python (a venv made earlier may hold an older one)
.venv312/bin/python -m pip install -q --disable-pip-version-check --upgrade jax jaxlib || exit 1
echo "test-all: setup took $(( $(date +%s) - start ))s"

status=0
t=$(date +%s)
echo "test-all: Python 3.11 / $(.venv/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')"
.venv/bin/python -m pytest -q -p no:cacheprovider "$@" || status=1
echo "test-all: 3.11 suite took $(( $(date +%s) - t ))s"
t=$(date +%s)
echo "test-all: Python 3.12 / $(.venv312/bin/python -c 'from importlib.metadata import version as v; print("jax", v("jax"))')"
.venv312/bin/python -m pytest -q -p no:cacheprovider --ignore=tests/editors "$@" || status=1
echo "test-all: 3.12 suite took $(( $(date +%s) - t ))s"
echo "test-all: total $(( $(date +%s) - start ))s, $([[ $status == 0 ]] && echo passed || echo FAILED)"
exit $status
