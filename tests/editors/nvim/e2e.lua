-- End-to-end harness: a real (headless) Neovim attaches wgmma-lsp to a kernel file and checks
-- diagnostics (vim.diagnostic.get), a hover and a code action. Works on Neovim 0.7 .. 0.12+.
--
-- Driven by tests/editors/test_neovim_e2e.py through environment variables:
--   WGMMA_E2E_FILE     the kernel file to open (a scratch copy: the code action edits it)
--   WGMMA_E2E_OUT      where to write the JSON report
--   WGMMA_E2E_REPO     the repository root (for the editors/neovim snippets)
--   WGMMA_E2E_MODE     how to start the server: auto | start_client (0.7 API) | start
--                      (editors/neovim/init-0.8.lua) | config (editors/neovim/init-0.11.lua)
--   WGMMA_E2E_TIMEOUT  per-step timeout in ms (default 60000)
--   WGMMA_E2E_SETTLE   ms to keep listening after the diagnostics arrived, to catch duplicates
--   WGMMA_E2E_ONLY_DIAGNOSTICS=1  stop after the diagnostics checks (no hover / code action)
-- Every failed check is recorded in report.errors (and printed to stderr); the harness always
-- writes the report and exits (0 if no error, 1 otherwise). Waits are bounded (vim.wait).

local env = function(name, default)
  local v = os.getenv(name)
  if v == nil or v == '' then
    return default
  end
  return v
end

local FILE = assert(env('WGMMA_E2E_FILE'), 'WGMMA_E2E_FILE not set')
local OUT = assert(env('WGMMA_E2E_OUT'), 'WGMMA_E2E_OUT not set')
local REPO = assert(env('WGMMA_E2E_REPO'), 'WGMMA_E2E_REPO not set')
local MODE = env('WGMMA_E2E_MODE', 'auto')
local TIMEOUT = tonumber(env('WGMMA_E2E_TIMEOUT', '60000'))
local SETTLE = tonumber(env('WGMMA_E2E_SETTLE', '1500'))
local SERVER_NAME = 'wgmma_lsp'

local EXPECTED = {
  WG001 = { line = 23, anchor = 'half', message = 'Accumulator dtype float32 does not match value dtype bfloat16' },
  WG002 = { line = 35, message = 'Accumulator shape (64, 128) does not match value shape (128, 64)' },
  WG003 = { line = 43, message = 'Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}' },
}
local HOVER_LINE, HOVER_WORD, HOVER_EXPECT = 23, 'acc_ref', 'Accumulator{float32[64,128]}'
local FIX_TITLE = 'Cast to the accumulator dtype (float32)'
local FIX_TEXT = 'half.astype(jnp.float32)'

local v = vim.version()
local report = {
  nvim_version = string.format('%d.%d.%d', v.major, v.minor, v.patch),
  mode = MODE,
  errors = {},
  timings_ms = {},
  push = { count = 0, nonempty = 0 }, -- textDocument/publishDiagnostics notifications
  pull = { count = 0, nonempty = 0 }, -- textDocument/diagnostic responses
}

local function fail(fmt, ...)
  local msg = string.format(fmt, ...)
  table.insert(report.errors, msg)
  io.stderr:write('[wgmma-lsp nvim e2e] FAIL: ' .. msg .. '\n')
end

local function at_least(major, minor)
  return v.major > major or (v.major == major and v.minor >= minor)
end

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

local function timed(name, start)
  report.timings_ms[name] = math.floor(now_ms() - start)
end

-- JSON-safe copy: drops functions/userdata, turns vim.NIL into nil.
local function plain(x, depth)
  depth = depth or 0
  if depth > 20 then
    return nil
  end
  local t = type(x)
  if t == 'table' then
    local out = {}
    for k, val in pairs(x) do
      out[k] = plain(val, depth + 1)
    end
    return out
  elseif t == 'string' or t == 'number' or t == 'boolean' then
    return x
  end
  return nil
end

local function write_report()
  local ok, encoded = pcall(vim.json.encode, plain(report))
  if not ok then
    encoded = vim.json.encode({ errors = { 'could not encode report: ' .. tostring(encoded) } })
  end
  local fh = assert(io.open(OUT, 'w'))
  fh:write(encoded)
  fh:close()
end

-- Count push and pull deliveries (to check the diagnostics arrive through exactly one channel).
local function wrap_handler(method, counter, items_of)
  local orig = vim.lsp.handlers[method]
  vim.lsp.handlers[method] = function(err, result, ctx, config)
    counter.count = counter.count + 1
    local items = result and items_of(result) or nil
    if type(items) == 'table' and #items > 0 then
      counter.nonempty = counter.nonempty + 1
    end
    if orig then
      return orig(err, result, ctx, config)
    end
  end
end
wrap_handler('textDocument/publishDiagnostics', report.push, function(r)
  return r.diagnostics
end)
wrap_handler('textDocument/diagnostic', report.pull, function(r)
  return r.items
end)

local function buf_clients(bufnr)
  if vim.lsp.get_clients then -- 0.10+
    return vim.lsp.get_clients({ bufnr = bufnr, name = SERVER_NAME })
  end
  local out = {}
  for _, c in pairs(vim.lsp.buf_get_clients(bufnr)) do -- 0.7 .. 0.9
    if c.name == SERVER_NAME then
      table.insert(out, c)
    end
  end
  return out
end

local function line_text(bufnr, lnum1)
  return vim.api.nvim_buf_get_lines(bufnr, lnum1 - 1, lnum1, false)[1] or ''
end

local function summarize(diags)
  local out = {}
  for _, d in ipairs(diags) do
    local code = d.code
    if code == nil and d.user_data and d.user_data.lsp then
      code = d.user_data.lsp.code
    end
    table.insert(out, {
      code = code,
      message = d.message,
      line = d.lnum + 1, -- 1-based, like the expectations
      col = d.col, -- 0-based byte column
      end_line = d.end_lnum and d.end_lnum + 1,
      end_col = d.end_col,
      severity = d.severity,
      source = d.source,
      namespace = d.namespace,
    })
  end
  table.sort(out, function(a, b)
    return a.line < b.line or (a.line == b.line and a.col < b.col)
  end)
  return out
end

local function count_code(diags, code)
  local n = 0
  for _, d in ipairs(diags) do
    n = n + (d.code == code and 1 or 0)
  end
  return n
end

local function hover_text(result)
  if type(result) ~= 'table' then
    return nil
  end
  local c = result.contents
  if type(c) == 'string' then
    return c
  end
  if type(c) == 'table' then
    if c.value then
      return c.value
    end
    local parts = {}
    for _, p in ipairs(c) do
      table.insert(parts, type(p) == 'string' and p or p.value or '')
    end
    return table.concat(parts, '\n')
  end
  return nil
end

local function request(bufnr, method, params)
  local start = now_ms()
  local responses, err = vim.lsp.buf_request_sync(bufnr, method, params, TIMEOUT)
  timed(method, start)
  if not responses then
    fail('%s: no response within %d ms (%s)', method, TIMEOUT, tostring(err))
    return nil
  end
  for _, resp in pairs(responses) do
    if resp.err or resp.error then
      fail('%s: server error %s', method, vim.inspect(resp.err or resp.error))
      return nil
    end
    return resp.result
  end
  fail('%s: empty response set', method)
  return nil
end

local function start_server(bufnr)
  local mode = MODE
  if mode == 'auto' then
    mode = at_least(0, 11) and 'config' or at_least(0, 8) and 'start' or 'start_client'
  end
  report.mode = mode
  if mode == 'start_client' then
    -- Neovim 0.7: no vim.lsp.start; reuse the shipped server table from lsp/wgmma_lsp.lua.
    local cfg = dofile(REPO .. '/editors/neovim/lsp/wgmma_lsp.lua')
    local id = vim.lsp.start_client({
      name = SERVER_NAME,
      cmd = cfg.cmd,
      root_dir = vim.fn.fnamemodify(FILE, ':p:h'),
      settings = cfg.settings,
    })
    if not id then
      fail('vim.lsp.start_client returned nil (cmd %s)', vim.inspect(cfg.cmd))
      return
    end
    vim.lsp.buf_attach_client(bufnr, id)
  elseif mode == 'start' then
    if not at_least(0, 8) then
      fail('mode "start" needs Neovim 0.8+ (this is %s)', report.nvim_version)
      return
    end
    dofile(REPO .. '/editors/neovim/init-0.8.lua')
    vim.api.nvim_exec_autocmds('FileType', { buffer = bufnr, modeline = false })
  elseif mode == 'config' then
    if not at_least(0, 11) then
      fail('mode "config" needs Neovim 0.11+ (this is %s)', report.nvim_version)
      return
    end
    dofile(REPO .. '/editors/neovim/init-0.11.lua')
    -- vim.lsp.enable attaches on FileType; the buffer's FileType already fired before enable().
    vim.api.nvim_exec_autocmds('FileType', { buffer = bufnr, modeline = false })
  else
    fail('unknown WGMMA_E2E_MODE %q', mode)
  end
end

local function main()
  vim.lsp.set_log_level(env('WGMMA_E2E_LSP_LOG_LEVEL', 'warn'))
  report.lsp_log = vim.lsp.get_log_path()
  local caps = vim.lsp.protocol.make_client_capabilities()
  report.client_declares_pull = caps.textDocument ~= nil and caps.textDocument.diagnostic ~= nil

  vim.cmd('filetype on')
  vim.cmd('edit ' .. vim.fn.fnameescape(FILE))
  local bufnr = vim.api.nvim_get_current_buf()
  report.filetype = vim.bo[bufnr].filetype
  local uri = vim.uri_from_bufnr(bufnr)

  -- 1. start + attach
  local t0 = now_ms()
  start_server(bufnr)
  local client
  local attached = vim.wait(TIMEOUT, function()
    client = buf_clients(bufnr)[1]
    return client ~= nil and client.server_capabilities ~= nil and next(client.server_capabilities) ~= nil
  end, 50)
  timed('attach', t0)
  if not attached then
    fail('wgmma-lsp did not attach/initialize within %d ms (see %s)', TIMEOUT, report.lsp_log)
    return
  end
  report.attached_clients = #buf_clients(bufnr)
  if report.attached_clients ~= 1 then
    fail('expected exactly 1 wgmma_lsp client on the buffer, got %d', report.attached_clients)
  end
  report.server_capabilities = {
    diagnosticProvider = client.server_capabilities.diagnosticProvider ~= nil,
    hoverProvider = client.server_capabilities.hoverProvider,
    codeActionProvider = client.server_capabilities.codeActionProvider ~= nil,
  }
  report.offset_encoding = client.offset_encoding

  -- 2. diagnostics: wait for all expected codes, then keep listening to catch duplicates
  t0 = now_ms()
  local got_all = vim.wait(TIMEOUT, function()
    local ds = summarize(vim.diagnostic.get(bufnr))
    for code in pairs(EXPECTED) do
      if count_code(ds, code) == 0 then
        return false
      end
    end
    return true
  end, 50)
  timed('diagnostics', t0)
  vim.wait(SETTLE, function()
    return false
  end, 50)
  local diags = summarize(vim.diagnostic.get(bufnr))
  report.diagnostics = diags
  if not got_all then
    fail('timed out after %d ms waiting for WG001, WG002, WG003; got %d diagnostics: %s',
      TIMEOUT, #diags, vim.inspect(diags))
  end
  for code, exp in pairs(EXPECTED) do
    local n = count_code(diags, code)
    if n ~= 1 then
      fail('%s reported %d times (expected exactly once)', code, n)
    end
    for _, d in ipairs(diags) do
      if d.code == code then
        if d.line ~= exp.line then
          fail('%s on line %d, expected line %d', code, d.line, exp.line)
        end
        if d.message ~= exp.message then
          fail('%s message %q, expected %q', code, d.message, exp.message)
        end
        if d.severity ~= vim.diagnostic.severity.ERROR then
          fail('%s severity %s, expected ERROR (%d)', code, tostring(d.severity), vim.diagnostic.severity.ERROR)
        end
        if d.source ~= 'wgmma-lsp' then
          fail('%s source %q, expected "wgmma-lsp"', code, tostring(d.source))
        end
        if exp.anchor then
          local text = line_text(bufnr, exp.line)
          local s = text:find('= ' .. exp.anchor, 1, true)
          local col = s and (s + 1) or -1 -- 0-based byte column of the anchor word
          if d.col ~= col or d.end_col ~= col + #exp.anchor then
            fail('%s range cols %d-%s, expected %d-%d (the word %q)', code, d.col, tostring(d.end_col),
              col, col + #exp.anchor, exp.anchor)
          end
        end
      end
    end
  end
  if report.push.nonempty > 0 and report.pull.nonempty > 0 then
    fail('diagnostics arrived both pushed (%d) and pulled (%d)', report.push.nonempty, report.pull.nonempty)
  end
  if env('WGMMA_E2E_ONLY_DIAGNOSTICS') == '1' then
    return
  end

  -- 3. hover on acc_ref (line 23)
  local hl = line_text(bufnr, HOVER_LINE)
  local hcol = (hl:find(HOVER_WORD, 1, true) or 1) - 1
  local hover = request(bufnr, 'textDocument/hover', {
    textDocument = { uri = uri },
    position = { line = HOVER_LINE - 1, character = hcol + 1 },
  })
  report.hover = hover_text(hover)
  if not report.hover then
    fail('hover on %q (line %d) returned nothing', HOVER_WORD, HOVER_LINE)
  elseif not report.hover:find(HOVER_EXPECT, 1, true) then
    fail('hover on %q does not contain %q: %q', HOVER_WORD, HOVER_EXPECT, report.hover)
  end

  -- 4. code action on `half` (line 23), apply the preferred fix
  local exp = EXPECTED.WG001
  local l23 = line_text(bufnr, exp.line)
  local s = l23:find('= ' .. exp.anchor, 1, true)
  local acol = s and (s + 1) or 0
  local ctx_diags = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = exp.line - 1 })) do
    local lspd = (d.user_data and d.user_data.lsp) or {}
    table.insert(ctx_diags, {
      range = {
        start = { line = d.lnum, character = d.col },
        ['end'] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
      },
      message = d.message,
      severity = d.severity,
      source = d.source,
      code = d.code or lspd.code,
      data = lspd.data,
    })
  end
  local actions = request(bufnr, 'textDocument/codeAction', {
    textDocument = { uri = uri },
    range = {
      start = { line = exp.line - 1, character = acol },
      ['end'] = { line = exp.line - 1, character = acol + #exp.anchor },
    },
    context = { diagnostics = ctx_diags },
  }) or {}
  report.code_actions = {}
  local chosen
  for _, a in ipairs(actions) do
    table.insert(report.code_actions, { title = a.title, kind = a.kind, isPreferred = a.isPreferred })
    if a.title == FIX_TITLE then
      chosen = a
    end
  end
  if not chosen then
    fail('no code action titled %q among %s', FIX_TITLE, vim.inspect(report.code_actions))
    return
  end
  if chosen.isPreferred ~= true then
    fail('code action %q is not marked preferred', FIX_TITLE)
  end
  if not chosen.edit and chosen.data and client.server_capabilities.codeActionProvider
      and type(client.server_capabilities.codeActionProvider) == 'table'
      and client.server_capabilities.codeActionProvider.resolveProvider then
    chosen = request(bufnr, 'codeAction/resolve', chosen) or chosen
  end
  if not chosen.edit then
    fail('code action %q has no edit', FIX_TITLE)
    return
  end
  vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding or 'utf-16')
  report.line_after_fix = line_text(bufnr, exp.line)
  if not report.line_after_fix:find(FIX_TEXT, 1, true) then
    fail('after the fix line %d is %q, expected it to contain %q', exp.line, report.line_after_fix, FIX_TEXT)
  end

  -- 5. the WG001 diagnostic disappears; the other two stay (exactly once each)
  t0 = now_ms()
  local cleared = vim.wait(TIMEOUT, function()
    local ds = summarize(vim.diagnostic.get(bufnr))
    return count_code(ds, 'WG001') == 0 and count_code(ds, 'WG002') == 1 and count_code(ds, 'WG003') == 1
  end, 50)
  timed('diagnostics_after_fix', t0)
  report.diagnostics_after_fix = summarize(vim.diagnostic.get(bufnr))
  if not cleared then
    fail('after the fix, expected only WG002 and WG003 (once each) within %d ms; got %s',
      TIMEOUT, vim.inspect(report.diagnostics_after_fix))
  end
end

local ok, err = xpcall(main, debug.traceback)
if not ok then
  fail('harness error: %s', tostring(err))
end

-- shut the server down (bounded), then report and quit
pcall(function()
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ name = SERVER_NAME })
    or vim.lsp.get_active_clients()
  for _, c in ipairs(clients) do
    vim.lsp.stop_client(c.id)
  end
  vim.wait(3000, function()
    local left = vim.lsp.get_clients and vim.lsp.get_clients({ name = SERVER_NAME })
      or vim.lsp.get_active_clients()
    return #left == 0
  end, 50)
end)
write_report()
vim.cmd(#report.errors == 0 and 'qall!' or 'cquit! 1')
