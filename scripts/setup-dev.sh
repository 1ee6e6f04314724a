#!/usr/bin/env bash
# One command to set up everything the tests need, from scratch, on a fresh Debian machine:
#   .venv with wgmma-lsp and its test extra (jax included), then the editors the
#   end-to-end tests drive (neovim, VS Code via code-server + Chromium).
# Idempotent: re-running only installs what is missing.
# Usage: scripts/setup-dev.sh [--no-editors]
#   VENV=.venv312 PYTHON=python3.12 scripts/setup-dev.sh --no-editors   # another Python/JAX
#   VENV=.venv313 PYTHON=python3.13 JAX_PIN=0.12.1 scripts/setup-dev.sh --no-editors   # a given JAX
#   (scripts/test-all.sh does that for every supported JAX and runs the suite in each)
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "setup-dev: creating $VENV with $($PYTHON --version)"
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip
# (the JAX the suite is checked against: scripts/jax-tested.txt, or JAX_PIN)
if [[ -n "${JAX_PIN:-}" ]]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e '.[test]' "jax==$JAX_PIN" "jaxlib==$JAX_PIN"
else
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check -c scripts/jax-tested.txt -e '.[test]'
fi
echo "setup-dev: $("$VENV/bin/python" -c 'from importlib.metadata import version as v; print("jax", v("jax"), "pygls", v("pygls"), "jedi", v("jedi"))')"
# tokamax (the test extra installs it, with its dependencies, where its Python allows: >= 3.12)
"$VENV/bin/python" -c 'import importlib.metadata as m
try: print("setup-dev: tokamax", m.version("tokamax"))
except m.PackageNotFoundError: print("setup-dev: no tokamax for this Python (it needs >= 3.12): its tests skip")'

if [[ "${1:-}" == "--no-editors" ]]; then
  exit 0
fi
for s in scripts/setup-neovim.sh scripts/setup-emacs.sh scripts/setup-vscode.sh; do
  if [[ -f "$s" ]]; then
    echo "setup-dev: running $s"
    bash "$s" "$VENV"
  fi
done
