import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import {
  DEFAULT_INTERPRETER,
  interpreterMissingMessage,
  installCommand,
  notInstalledMessage,
  resolveServerCommand,
  ruleCodesAt,
  shellQuote,
  withProjectPython,
} from "../../src/serverCommand";

const none = { interpreter: "", serverPath: "", serverArgs: [] as string[] };

test("serverPath wins over everything", () => {
  const cmd = resolveServerCommand({ interpreter: "/x/python", serverPath: "/bin/wgmma-lsp", serverArgs: ["-v"] }, "/y/python");
  assert.deepEqual(cmd, { command: "/bin/wgmma-lsp", args: ["-v"], source: "serverPath" });
});

test("the interpreter setting wins over the Python extension", () => {
  const cmd = resolveServerCommand({ ...none, interpreter: " /x/python " }, "/y/python");
  assert.equal(cmd.command, "/x/python");
  assert.deepEqual(cmd.args, ["-P", "-m", "wgmma_lsp"]);
  assert.equal(cmd.source, "setting");
});

test("the Python extension's interpreter is used when nothing is set", () => {
  const cmd = resolveServerCommand(none, "/venv/bin/python");
  assert.equal(cmd.command, "/venv/bin/python");
  assert.equal(cmd.interpreter, "/venv/bin/python");
  assert.equal(cmd.source, "python-extension");
});

test("python3 by default", () => {
  const cmd = resolveServerCommand(none, undefined);
  assert.equal(cmd.command, DEFAULT_INTERPRETER);
  assert.equal(cmd.source, "default");
});

test("the install command quotes the interpreter", () => {
  assert.equal(installCommand("/venv/bin/python", "linux"), "/venv/bin/python -m pip install wgmma-lsp");
  assert.equal(installCommand("/my env/python", "linux"), "'/my env/python' -m pip install wgmma-lsp");
  assert.equal(installCommand("C:\\Py 3\\python.exe", "win32"), '"C:\\Py 3\\python.exe" -m pip install wgmma-lsp');
  assert.equal(shellQuote("it's", "linux"), `'it'\\''s'`);
});

test("the not-installed message names the interpreter and the install command", () => {
  const cmd = resolveServerCommand({ ...none, interpreter: "/venv/bin/python" });
  const msg = notInstalledMessage(cmd, "ModuleNotFoundError: No module named 'wgmma_lsp'");
  assert.match(msg, /not installed in the Python interpreter \/venv\/bin\/python/);
  assert.match(msg, /Install it with: \/venv\/bin\/python -m pip install wgmma-lsp/);
});

const d = (l0: number, c0: number, l1: number, c1: number, code: string, source = "wgmma-lsp") => ({
  range: { start: { line: l0, character: c0 }, end: { line: l1, character: c1 } },
  code,
  source,
});

test("rule under the cursor", () => {
  const diags = [d(22, 19, 22, 23, "WG001"), d(34, 19, 34, 33, "WG002"), d(22, 0, 22, 5, "X1", "other")];
  assert.deepEqual(ruleCodesAt(diags, { line: 22, character: 20 }), ["WG001"]);
  assert.deepEqual(ruleCodesAt(diags, { line: 22, character: 23 }), ["WG001"]); // end is inclusive
  assert.deepEqual(ruleCodesAt(diags, { line: 22, character: 2 }), ["WG001"]); // same line
  assert.deepEqual(ruleCodesAt(diags, { line: 10, character: 0 }), []);
  assert.deepEqual(ruleCodesAt([{ ...diags[0], code: { value: "WG001" } as never }], { line: 22, character: 20 }), ["WG001"]);
});

test("package.json contributes every setting the server reads", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "..", "package.json"), "utf8"));
  const props = Object.keys(pkg.contributes.configuration.properties);
  for (const key of ["rules.select", "rules.ignore", "rules.severity", "inlayHints.enabled", "trace.enabled",
    "logLevel", "docsBaseUrl", "interpreter", "serverPath"]) {
    assert.ok(props.includes(`wgmmaLsp.${key}`), `missing wgmmaLsp.${key}`);
  }
  const commands = pkg.contributes.commands.map((c: { command: string }) => c.command);
  assert.deepEqual(commands.sort(), ["wgmmaLsp.explainRule", "wgmmaLsp.restartServer", "wgmmaLsp.showOutput"]);
});

test("a missing interpreter is named, with where it came from", () => {
  const msg = interpreterMissingMessage(resolveServerCommand(none, "/gone/python"));
  assert.match(msg, /The Python interpreter \/gone\/python \(selected in the Python extension\) was not found/);
});

test("the analysed environment defaults to the Python extension's interpreter", () => {
  assert.deepEqual(withProjectPython({ logLevel: "info" }, "/proj/.venv/bin/python"),
    { logLevel: "info", python: "/proj/.venv/bin/python" });
  assert.deepEqual(withProjectPython({ python: "/explicit/python" }, "/proj/.venv/bin/python"),
    { python: "/explicit/python" });
  assert.deepEqual(withProjectPython({ python: "" }, undefined), { python: "" });
});
