#!/usr/bin/env bash
# Installs Emacs with Eglot for the Emacs end-to-end test (idempotent; apt, needs root).
set -euo pipefail
if emacs --batch --eval "(require 'eglot)" >/dev/null 2>&1; then
  echo "setup-emacs: emacs with eglot already installed"
  exit 0
fi
SUDO=""
if [[ "$(id -u)" != 0 ]]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends emacs-nox elpa-eglot >/dev/null
echo "setup-emacs: $(emacs --version | head -n1)"
