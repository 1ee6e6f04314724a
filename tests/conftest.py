import os

os.environ.setdefault("JAX_PLATFORMS", "cpu")

# Fixture kernels are data for the differential tests, not tests: a fixture package's own
# `test_*.py` (its parametrized tests are entry points the analyzer reads) is never collected.
collect_ignore_glob = ["fixtures/*"]
