from wgmma_lsp.cli import main

raise SystemExit(main())
