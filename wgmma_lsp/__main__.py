from wgmma_lsp.cli import main

if __name__ == "__main__":  # not when a worker process re-imports the main module
    raise SystemExit(main())
