-- wgmma-lsp for Neovim 0.11+: paste into init.lua (or drop into ~/.config/nvim/plugin/).
-- Alternative: copy lsp/wgmma_lsp.lua from this directory into ~/.config/nvim/lsp/ and keep only
-- the `vim.lsp.enable` line.
vim.lsp.config('wgmma_lsp', {
  cmd = { 'wgmma-lsp' }, -- or { '/path/to/venv/bin/python', '-P', '-m', 'wgmma_lsp' }
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' },
  settings = {
    wgmmaLsp = {
      -- rules = { ignore = { 'WG003' }, severity = { WG002 = 'warning' } },
      inlayHints = { enabled = true },
      trace = { enabled = false },
    },
  },
})
vim.lsp.enable('wgmma_lsp')

-- Optional: show wgmma-lsp's inlay hints (accumulator shapes/dtypes) in Python buffers.
-- vim.api.nvim_create_autocmd('LspAttach', {
--   callback = function(args)
--     local client = vim.lsp.get_client_by_id(args.data.client_id)
--     if client and client.name == 'wgmma_lsp' then
--       vim.lsp.inlay_hint.enable(true, { bufnr = args.buf })
--     end
--   end,
-- })
