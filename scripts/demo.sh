#!/usr/bin/env bash
# Set up (Python parts only) and run wgmma-lsp on the bundled example kernel with the three
# seed errors. The check exits 1 when it finds errors, as it should here; this script exits 0
# when the check ran and found them.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-dev.sh --no-editors
set +e
.venv/bin/wgmma-lsp check examples/seed_errors.py
rc=$?
set -e
[[ $rc -eq 1 ]] || { echo "demo: expected the check to report errors (exit 1), got exit $rc" >&2; exit 1; }
echo
echo "demo: the same file with the fixes applied:"
.venv/bin/wgmma-lsp check examples/seed_fixed.py && echo "demo: examples/seed_fixed.py is clean"
