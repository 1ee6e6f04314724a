// Test-only extension: runs the wgmma-lsp end-to-end checks through the VS Code API from inside
// the extension host, and writes WGMMA_E2E_DIR/result.json. Inert unless WGMMA_E2E_DIR is set.
//
// Protocol with the outer driver (tests/editors/test_vscode_e2e.py -> test/e2e/drive.js):
//   status.json {phase: "screenshot"}  the editor shows the squiggle and the hover: take the picture
//   screenshot.ack                     the driver took it; continue
//   result.json                        the final report (always written, even on failure)
"use strict";

const fs = require("fs");
const path = require("path");
const vscode = require("vscode");

const DIR = process.env.WGMMA_E2E_DIR;
const KERNEL = process.env.WGMMA_E2E_KERNEL;
const STEP_MS = Number(process.env.WGMMA_E2E_STEP_MS || 120000);

const EXPECTED = [
  { code: "WG001", line: 23, text: "half", after: "acc_ref[...] = ",
    message: "Accumulator dtype float32 does not match value dtype bfloat16" },
  { code: "WG002", line: 35, text: "acc_ref[...].T", after: "acc_ref[...] = ",
    message: "Accumulator shape (64, 128) does not match value shape (128, 64)" },
  { code: "WG003", line: 43, text: "acc_ref", after: "plgpu.wgmma(",
    message: "Expected WGMMAAbstractAccumulatorRef got Ref<smem>{float32[64,128]}" },
];
const HOVER_TEXT = "Accumulator{float32[64,128]}";
const FIX_TITLE = "Cast to the accumulator dtype (float32)";
const FIX_TEXT = "half.astype(jnp.float32)";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(what, fn, timeoutMs = STEP_MS, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = undefined;
    }
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

function codeOf(d) {
  const code = typeof d.code === "object" && d.code !== null ? d.code.value : d.code;
  return code === undefined ? undefined : String(code);
}

function plainDiag(d, doc) {
  const code = codeOf(d);
  return {
    code: code === undefined ? null : String(code),
    message: d.message,
    source: d.source,
    severity: ["Error", "Warning", "Information", "Hint"][d.severity],
    start: [d.range.start.line + 1, d.range.start.character],
    end: [d.range.end.line + 1, d.range.end.character],
    text: doc.getText(d.range),
  };
}

function hoverText(hovers) {
  const parts = [];
  for (const h of hovers || []) {
    for (const c of h.contents) {
      parts.push(typeof c === "string" ? c : c.value);
    }
  }
  return parts.join("\n---\n");
}

function activate(context) {
  if (!DIR) return;
  // Run after activation returns, so the workbench finishes starting.
  setTimeout(() => {
    run().catch((err) => log(`harness crashed: ${err && err.stack || err}`));
  }, 500);
}

const report = { ok: false, checks: [], log: [], diagnostics: [], timings: {} };
const t0 = Date.now();

function log(line) {
  report.log.push(`${((Date.now() - t0) / 1000).toFixed(1)}s ${line}`);
  flush("running");
}

function check(name, ok, detail) {
  report.checks.push({ name, ok: !!ok, detail: detail === undefined ? null : detail });
  log(`${ok ? "PASS" : "FAIL"} ${name}${detail !== undefined ? `: ${JSON.stringify(detail)}` : ""}`);
  return !!ok;
}

function flush(phase) {
  try {
    fs.writeFileSync(path.join(DIR, "progress.json"), JSON.stringify({ phase, ...report }, null, 2));
  } catch (_) { /* the directory may be gone at teardown */ }
}

function writeJson(name, obj) {
  const tmp = path.join(DIR, `${name}.tmp`);
  fs.writeFileSync(tmp, JSON.stringify(obj, null, 2));
  fs.renameSync(tmp, path.join(DIR, name));
}

function ours(uri) {
  return vscode.languages.getDiagnostics(uri).filter((d) => d.source === "wgmma-lsp");
}

async function run() {
  try {
    await steps();
  } catch (err) {
    check("harness completed", false, String(err && err.stack || err));
  } finally {
    report.ok = report.checks.length > 0 && report.checks.every((c) => c.ok);
    report.timings.total_s = (Date.now() - t0) / 1000;
    writeJson("result.json", report);
  }
}

async function steps() {
  log(`vscode ${vscode.version}, kernel ${KERNEL}`);
  const main = vscode.extensions.getExtension("wgmma-lsp.wgmma-lsp");
  if (!check("wgmma-lsp extension installed", !!main)) return;

  const uri = vscode.Uri.file(KERNEL);
  const doc = await vscode.workspace.openTextDocument(uri);
  const editor = await vscode.window.showTextDocument(doc, { preview: false });
  check("kernel opened as python", doc.languageId === "python", doc.languageId);

  const api = await main.activate();
  await api.ready();
  const client = api.client();
  const cmd = api.serverCommand();
  check("language server running", client && client.isRunning(), cmd);
  if (!client || !client.isRunning()) return;
  const python = process.env.WGMMA_E2E_PYTHON;
  if (python) {
    check("interpreter from the Python extension", cmd.source === "python-extension" && cmd.command === python, cmd);
  }
  check("server offers pull diagnostics to VS Code (which pulls)",
    !!(client.initializeResult && client.initializeResult.capabilities.diagnosticProvider),
    client.initializeResult && client.initializeResult.capabilities.diagnosticProvider);

  // 1. Diagnostics: the three seed errors, each exactly once, with the right ranges and messages.
  const tDiag = Date.now();
  await waitFor("the three seed diagnostics",
    () => EXPECTED.every((e) => ours(uri).some((d) => codeOf(d) === e.code)));
  report.timings.first_diagnostics_s = (Date.now() - tDiag) / 1000;
  await sleep(3000); // any duplicate (pushed + pulled) would arrive meanwhile
  const all = vscode.languages.getDiagnostics(uri).map((d) => plainDiag(d, doc));
  report.diagnostics = all;
  for (const e of EXPECTED) {
    const same = all.filter((d) => d.code === e.code);
    check(`${e.code} appears exactly once`, same.length === 1, same.length);
    const sameMsg = all.filter((d) => d.message === e.message);
    check(`${e.code} message appears exactly once`, sameMsg.length === 1, sameMsg.length);
    const d = same[0];
    if (!d) continue;
    const lineText = doc.lineAt(e.line - 1).text;
    const col = lineText.indexOf(e.after + e.text) + e.after.length;
    check(`${e.code} message`, d.message === e.message, d.message);
    check(`${e.code} range`, d.start[0] === e.line && d.start[1] === col && d.end[0] === e.line &&
      d.end[1] === col + e.text.length && d.text === e.text, { start: d.start, end: d.end, text: d.text });
    check(`${e.code} severity and source`, d.severity === "Error" && d.source === "wgmma-lsp",
      { severity: d.severity, source: d.source });
  }

  // 2. Hover on the accumulator shows its aval.
  const accLine = 22; // 0-based: `acc_ref[...] = half`
  const accCol = doc.lineAt(accLine).text.indexOf("acc_ref") + 2;
  const hoverPos = new vscode.Position(accLine, accCol);
  const hover = await waitFor("a hover on acc_ref", async () => {
    const h = hoverText(await vscode.commands.executeCommand("vscode.executeHoverProvider", uri, hoverPos));
    return h.includes(HOVER_TEXT) ? h : undefined;
  }, 30000).catch(async () => hoverText(await vscode.commands.executeCommand("vscode.executeHoverProvider", uri, hoverPos)));
  report.hover = hover;
  check("hover on acc_ref shows the accumulator aval", hover.includes(HOVER_TEXT), hover);

  // 3. Screenshot: the squiggle and the hover, in the real workbench.
  editor.selection = new vscode.Selection(hoverPos, hoverPos);
  editor.revealRange(new vscode.Range(accLine - 8, 0, accLine + 8, 0), vscode.TextEditorRevealType.InCenter);
  await vscode.commands.executeCommand("workbench.action.closePanel");
  await vscode.commands.executeCommand("workbench.action.closeAuxiliaryBar").then(undefined, () => undefined);
  await vscode.commands.executeCommand("notifications.clearAll");
  await vscode.commands.executeCommand("workbench.action.focusActiveEditorGroup");
  await sleep(500);
  await vscode.commands.executeCommand("editor.action.showHover");
  await sleep(1500);
  writeJson("status.json", { phase: "screenshot" });
  log("waiting for the screenshot");
  const ack = await waitFor("the driver's screenshot ack", () => fs.existsSync(path.join(DIR, "screenshot.ack")), 60000)
    .catch(() => false);
  check("screenshot taken", ack);
  await vscode.commands.executeCommand("editor.action.hideHover").then(undefined, () => undefined);

  // 4. Explain the rule (the command the server provides through workspace/executeCommand).
  const wg001 = ours(uri).find((d) => codeOf(d) === "WG001");
  editor.selection = new vscode.Selection(wg001.range.start, wg001.range.start);
  const explained = await vscode.commands.executeCommand("wgmmaLsp.explainRule").then((x) => x, (e) => ({ error: String(e) }));
  check("explain the rule under the cursor", explained && explained.code === "WG001" && !!explained.markdown,
    explained && { code: explained.code, name: explained.name, error: explained.error });
  await vscode.window.showTextDocument(doc, { preview: false, viewColumn: editor.viewColumn });

  // 5. Settings are applied live: WG002 -> warning through workspace/configuration.
  const cfg = vscode.workspace.getConfiguration("wgmmaLsp");
  await cfg.update("rules.severity", { WG002: "warning" }, vscode.ConfigurationTarget.Global);
  const warned = await waitFor("WG002 to become a warning", () => {
    const d = ours(uri).filter((x) => codeOf(x) === "WG002");
    return d.length === 1 && d[0].severity === vscode.DiagnosticSeverity.Warning;
  }, 30000).catch(() => false);
  check("a severity setting is applied live", warned,
    ours(uri).filter((x) => codeOf(x) === "WG002").map((d) => plainDiag(d, doc)));
  await cfg.update("rules.severity", undefined, vscode.ConfigurationTarget.Global);

  // Inlay hints on/off, live.
  const whole = new vscode.Range(0, 0, doc.lineCount, 0);
  const hints = async () => (await vscode.commands.executeCommand("vscode.executeInlayHintProvider", uri, whole) || []).length;
  const before = await waitFor("inlay hints", hints, 15000).catch(() => 0);
  await cfg.update("inlayHints.enabled", false, vscode.ConfigurationTarget.Global);
  const off = await waitFor("inlay hints to go", async () => (await hints()) === 0, 30000).catch(() => false);
  await cfg.update("inlayHints.enabled", undefined, vscode.ConfigurationTarget.Global);
  const on = await waitFor("inlay hints to come back", hints, 30000).catch(() => 0);
  check("inlay hints can be switched off and on, live", before > 0 && off && on > 0, { before, off, after: on });

  // 6. The preferred quick fix for WG001 applies and clears the diagnostic.
  const target = ours(uri).find((d) => codeOf(d) === "WG001");
  const actions = await vscode.commands.executeCommand("vscode.executeCodeActionProvider", uri, target.range,
    vscode.CodeActionKind.QuickFix.value) || [];
  report.code_actions = actions.map((a) => ({ title: a.title, isPreferred: !!a.isPreferred, kind: a.kind && a.kind.value }));
  const preferred = actions.filter((a) => a.isPreferred);
  check("exactly one preferred quick fix", preferred.length === 1, report.code_actions);
  const fix = preferred[0];
  if (!fix) return;
  check("preferred quick fix title", fix.title === FIX_TITLE, fix.title);
  const applied = fix.edit ? await vscode.workspace.applyEdit(fix.edit) : false;
  if (fix.command) await vscode.commands.executeCommand(fix.command.command, ...(fix.command.arguments || []));
  const fixedLine = doc.lineAt(22).text;
  check("quick fix rewrites the value", applied && fixedLine.includes(`acc_ref[...] = ${FIX_TEXT}`), fixedLine);
  const cleared = await waitFor("WG001 to disappear", () => !ours(uri).some((d) => codeOf(d) === "WG001"), 60000)
    .catch(() => false);
  check("the quick fix clears WG001", cleared, ours(uri).map((d) => plainDiag(d, doc)));
  const rest = ours(uri).map((d) => codeOf(d)).sort();
  check("the other diagnostics stay, once each", JSON.stringify(rest) === JSON.stringify(["WG002", "WG003"]), rest);
  report.final_diagnostics = vscode.languages.getDiagnostics(uri).map((d) => plainDiag(d, doc));
  await vscode.commands.executeCommand("workbench.action.files.revert");
  await waitFor("WG001 to come back after the revert", () => ours(uri).some((d) => codeOf(d) === "WG001"), 60000)
    .catch(() => false);

  // 7. An interpreter without wgmma-lsp: a clear message with the install command; then back.
  //    First through the (fake) Python extension's selection, then through the setting.
  const bare = process.env.WGMMA_E2E_BARE_PYTHON;
  const pyExt = vscode.extensions.getExtension("ms-python.python");
  if (bare && python && pyExt) {
    const py = await pyExt.activate();
    py._select(bare);
    const msg = await waitFor("the not-installed message", () => api.lastError(), 60000).catch(() => undefined);
    check("selection change restarts; not installed: clear message with the install command",
      msg && msg.includes(`not installed in the Python interpreter ${bare} (selected in the Python extension)`) &&
      msg.includes(`Install it with: ${bare} -m pip install wgmma-lsp`), msg);
    py._select(python);
    const running = await waitFor("the server to run again", () => api.client() && api.client().isRunning(), 60000)
      .catch(() => false);
    check("selecting an interpreter with wgmma-lsp restarts the server", running, api.serverCommand());
    await vscode.commands.executeCommand("notifications.clearAll");
  }
  if (bare) {
    const cfgWs = vscode.workspace.getConfiguration("wgmmaLsp");
    await cfgWs.update("interpreter", bare, vscode.ConfigurationTarget.Workspace);
    const msg = await waitFor("the not-installed message", () => api.lastError(), 60000).catch(() => undefined);
    check("not installed: clear message with the install command",
      msg && msg.includes(`not installed in the Python interpreter ${bare}`) &&
      msg.includes(`Install it with: ${bare} -m pip install wgmma-lsp`), msg);
    await cfgWs.update("interpreter", undefined, vscode.ConfigurationTarget.Workspace);
    await vscode.commands.executeCommand("notifications.clearAll");
  }

  // 8. Restart: the server comes back and the diagnostics are still there exactly once.
  await vscode.commands.executeCommand("wgmmaLsp.restartServer");
  await api.ready();
  const back = await waitFor("diagnostics after a restart",
    () => EXPECTED.every((e) => ours(uri).some((d) => codeOf(d) === e.code)), 60000).catch(() => false);
  await sleep(2000);
  const after = vscode.languages.getDiagnostics(uri).map((d) => codeOf(d)).sort();
  check("restart: server running, diagnostics once each",
    back && api.client() && api.client().isRunning() && JSON.stringify(after) === JSON.stringify(["WG001", "WG002", "WG003"]),
    { running: !!(api.client() && api.client().isRunning()), codes: after, command: api.serverCommand() });
}

function deactivate() {}

module.exports = { activate, deactivate };
