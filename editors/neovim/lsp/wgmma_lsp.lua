-- wgmma-lsp server configuration for Neovim 0.11+ (`vim.lsp.config` / `vim.lsp.enable`).
--
-- Copy this file to `~/.config/nvim/lsp/wgmma_lsp.lua` (any `lsp/` directory on 'runtimepath'
-- works, nvim-lspconfig >= 2 uses the same format), then add to init.lua:
--
--     vim.lsp.enable('wgmma_lsp')
--
-- wgmma-lsp runs next to your usual Python server (pyright, basedpyright, pylsp, ruff, ...):
-- it only reports Pallas Mosaic GPU kernel errors, it does not replace them.
-- If `wgmma-lsp` is not on $PATH (e.g. it lives in a project venv), change `cmd`, for example
-- `cmd = { '/path/to/venv/bin/wgmma-lsp' }` or `{ '/path/to/venv/bin/python', '-P', '-m', 'wgmma_lsp' }`.
return {
  cmd = { 'wgmma-lsp' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' },
  -- Sent to the server through `workspace/configuration` (section "wgmmaLsp").
  settings = {
    wgmmaLsp = {
      -- rules = { ignore = { 'WG003' }, severity = { WG002 = 'warning' } },
      inlayHints = { enabled = true },
      trace = { enabled = false },
      logLevel = 'info',
    },
  },
}
