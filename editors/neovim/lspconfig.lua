-- wgmma-lsp as an nvim-lspconfig server (the `require('lspconfig').NAME.setup{}` style).
--
-- wgmma-lsp is not bundled with nvim-lspconfig, so register it once, then set it up like any
-- other server. (With nvim-lspconfig >= 2 on Neovim 0.11+, prefer lsp/wgmma_lsp.lua +
-- `vim.lsp.enable('wgmma_lsp')`.)
local configs = require('lspconfig.configs')
local util = require('lspconfig.util')

if not configs.wgmma_lsp then
  configs.wgmma_lsp = {
    default_config = {
      cmd = { 'wgmma-lsp' },
      filetypes = { 'python' },
      root_dir = util.root_pattern('pyproject.toml', 'setup.py', 'setup.cfg', '.git'),
      single_file_support = true,
      settings = {
        wgmmaLsp = {
          inlayHints = { enabled = true },
          trace = { enabled = false },
        },
      },
    },
    docs = {
      description = [[
A language server that catches Pallas Mosaic GPU (wgmma/tcgen05) kernel errors as you type.
Install with `pip install wgmma-lsp`; runs next to your usual Python language server.
]],
    },
  }
end

require('lspconfig').wgmma_lsp.setup({
  -- settings = { wgmmaLsp = { rules = { ignore = { 'WG003' } } } },
})
