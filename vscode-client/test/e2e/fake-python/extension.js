// Test-only stand-in for ms-python.python's environments API (the subset wgmma-lsp uses).
// The selected interpreter starts as WGMMA_E2E_PYTHON; the harness changes it with _select().
"use strict";

const vscode = require("vscode");

function activate() {
  let active = process.env.WGMMA_E2E_PYTHON || "python3";
  const changed = new vscode.EventEmitter();
  const envPath = () => ({ id: active, path: active });
  return {
    environments: {
      getActiveEnvironmentPath: () => envPath(),
      resolveEnvironment: async (env) => {
        const p = typeof env === "string" ? env : env.path;
        return { id: p, path: p, executable: { uri: vscode.Uri.file(p) } };
      },
      onDidChangeActiveEnvironmentPath: changed.event,
    },
    _select(path) {
      active = path;
      changed.fire({ id: path, path, resource: undefined });
    },
  };
}

module.exports = { activate, deactivate() {} };
