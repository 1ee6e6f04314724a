"""`python -m wgmma_lsp`: the launcher first takes the working directory off `sys.path` (see launch.py)."""

from wgmma_lsp.launch import main

if __name__ == "__main__":  # not when a worker process re-imports the main module
    raise SystemExit(main())
