-- wgmma-lsp for Neovim 0.8 - 0.10 (also works on 0.11+): paste into init.lua (or drop into
-- ~/.config/nvim/plugin/). Starts (or reuses) one wgmma-lsp per project root for Python buffers.
local root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', '.git' }

vim.api.nvim_create_autocmd('FileType', {
  group = vim.api.nvim_create_augroup('wgmma_lsp', { clear = true }),
  pattern = 'python',
  callback = function(args)
    local fname = vim.api.nvim_buf_get_name(args.buf)
    if fname == '' or vim.bo[args.buf].buftype ~= '' then
      return -- scratch/special buffers: nothing to analyse
    end
    local marker = vim.fs.find(root_markers, { upward = true, path = vim.fs.dirname(fname) })[1]
    vim.lsp.start({
      name = 'wgmma_lsp',
      cmd = { 'wgmma-lsp' }, -- or { '/path/to/venv/bin/python', '-P', '-m', 'wgmma_lsp' }
      root_dir = marker and vim.fs.dirname(marker) or vim.fn.getcwd(),
      settings = {
        wgmmaLsp = {
          -- rules = { ignore = { 'WG003' }, severity = { WG002 = 'warning' } },
          inlayHints = { enabled = true },
          trace = { enabled = false },
        },
      },
    }, { bufnr = args.buf })
  end,
})
