import os
import sys
import tempfile

os.environ.setdefault("JAX_PLATFORMS", "cpu")
# The analysed JAX is the one running the tests (wgmma_lsp/environment.py would otherwise prefer
# the project's .venv to, e.g., .venv312's own JAX in the CLI and the server started by tests).
if sys.prefix != sys.base_prefix:
    os.environ["VIRTUAL_ENV"] = sys.prefix
# Tests never read or write the user's cache of JAX facts (interpret/jax_facts_cache.py).
os.environ.setdefault("WGMMA_LSP_CACHE_DIR", os.path.join(tempfile.gettempdir(),
                                                          f"wgmma-lsp-test-cache-{os.getuid()}"))

# Strict mode (wgmma_lsp/interpret/incomplete.py): an exception in the interpreter or a model
# propagates instead of becoming a WG904 note, so a crash fails the test that met it. The CLI and
# servers the tests start inherit it.
os.environ.setdefault("WGMMA_LSP_STRICT", "1")

# Fixture kernels are data for the differential tests, not tests: a fixture package's own
# `test_*.py` (its parametrized tests are entry points the analyzer reads) is never collected.
collect_ignore_glob = ["fixtures/*"]
