import * as cp from "child_process";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
  TransportKind,
} from "vscode-languageclient/node";
import {
  installCommand,
  interpreterMissingMessage,
  notInstalledMessage,
  PROBE_SCRIPT,
  withProjectPython,
  resolveServerCommand,
  RESTART_KEYS,
  ruleCodesAt,
  serverPathMessage,
  ServerCommand,
} from "./serverCommand";
import { gateSettings } from "./trust";

const SECTION = "wgmmaLsp";
const EXPLAIN_COMMAND = "wgmma-lsp.explain";
const PYTHON_EXTENSION = "ms-python.python";
const PROBE_TIMEOUT_MS = 30_000;

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
let traceOutput: vscode.OutputChannel;
let status: vscode.StatusBarItem;
let starting: Promise<void> = Promise.resolve();
let lastCommand: ServerCommand | undefined;
let lastError: string | undefined;

/** What the extension exports (used by the end-to-end test and by other extensions). */
export interface WgmmaLspApi {
  /** Resolves once the current (re)start attempt is over. */
  ready(): Promise<void>;
  client(): LanguageClient | undefined;
  serverCommand(): ServerCommand | undefined;
  /** The last start-up error shown to the user (undefined once the server runs). */
  lastError(): string | undefined;
  restart(): Promise<void>;
}

export async function activate(context: vscode.ExtensionContext): Promise<WgmmaLspApi> {
  output = vscode.window.createOutputChannel("wgmma-lsp");
  traceOutput = vscode.window.createOutputChannel("wgmma-lsp (LSP trace)");
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 0);
  status.command = "wgmmaLsp.showOutput";
  context.subscriptions.push(output, traceOutput, status);

  context.subscriptions.push(
    vscode.commands.registerCommand("wgmmaLsp.restartServer", () => restart(context)),
    vscode.commands.registerCommand("wgmmaLsp.showOutput", () => output.show(true)),
    vscode.commands.registerCommand("wgmmaLsp.explainRule", (code?: string) => explainRule(code)),
    vscode.workspace.onDidChangeConfiguration((e) => onConfigurationChanged(context, e)),
    // Trust granted: the server re-reads its settings, and trace mode may now start.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      const c = client;
      if (c && c.state === State.Running) {
        void c.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
      }
    }),
  );
  await watchPythonExtension(context);

  restart(context);
  return {
    ready: () => starting,
    client: () => client,
    serverCommand: () => lastCommand,
    lastError: () => lastError,
    restart: () => restart(context),
  };
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

// -- starting and stopping ------------------------------------------------------------------

function restart(context: vscode.ExtensionContext): Promise<void> {
  starting = starting.catch(() => undefined).then(async () => {
    await stopClient();
    await startClient(context);
  });
  return starting;
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop(5000);
    } catch (err) {
      output.appendLine(`[client] stopping the server failed: ${err}`);
    }
  }
}

function launchSettings() {
  const cfg = vscode.workspace.getConfiguration(SECTION);
  return {
    interpreter: cfg.get<string>("interpreter", ""),
    serverPath: cfg.get<string>("serverPath", ""),
    serverArgs: cfg.get<string[]>("serverArgs", []),
  };
}

/** The Python extension's interpreter: the project's environment, whose JAX the analysis follows. */
let projectInterpreter: string | undefined;

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  projectInterpreter = await pythonExtensionInterpreter();
  const cmd = resolveServerCommand(launchSettings(), projectInterpreter);
  lastCommand = cmd;
  lastError = undefined;
  output.appendLine(`[client] server command: ${cmd.command} ${cmd.args.join(" ")} (${cmd.source})`);
  setStatus("$(sync~spin) wgmma-lsp", "wgmma-lsp is starting");

  if (cmd.interpreter) {
    const probe = await probeInterpreter(cmd.interpreter);
    if (!probe.ok) {
      output.appendLine(`[client] ${probe.detail}`);
      setStatus("$(error) wgmma-lsp", "wgmma-lsp is not running: click for the log");
      void showNotInstalled(cmd, probe.detail, probe.missing);
      return;
    }
    output.appendLine(`[client] wgmma-lsp ${probe.version} found in ${cmd.interpreter}`);
  }

  const serverOptions: ServerOptions = {
    command: cmd.command,
    args: cmd.args,
    transport: TransportKind.stdio,
    options: { env: { ...process.env, PYTHONUNBUFFERED: "1", PYTHONSAFEPATH: "1" } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
    ],
    outputChannel: output,
    traceOutputChannel: traceOutput,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    initializationOptions: { settings: currentSettings() },
    // Settings are read by the server through workspace/configuration; we only nudge it on change.
    // Trace mode runs user code: in an untrusted workspace it stays off, whatever the settings say.
    middleware: {
      workspace: {
        configuration: async (params, token, next) => {
          const result = await next(params, token);
          if (!Array.isArray(result)) {
            return result;
          }
          return result.map((value, i) =>
            params.items[i]?.section === SECTION
              ? withProjectPython(gateSettings(value, vscode.workspace.isTrusted), projectInterpreter) : value);
        },
      },
    },
  };
  const c = new LanguageClient(SECTION, "wgmma-lsp", serverOptions, clientOptions);
  c.onDidChangeState((e) => {
    if (e.newState === State.Running) {
      setStatus("$(check) wgmma-lsp", `wgmma-lsp running (${cmd.command})`);
    } else if (e.newState === State.Stopped) {
      setStatus("$(circle-slash) wgmma-lsp", "wgmma-lsp stopped: click for the log");
    }
  });
  client = c;
  try {
    await c.start();
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    output.appendLine(`[client] the server failed to start: ${detail}`);
    client = undefined;
    setStatus("$(error) wgmma-lsp", "wgmma-lsp failed to start: click for the log");
    const msg = cmd.interpreter ? `wgmma-lsp failed to start with ${cmd.interpreter}: ${detail}` : serverPathMessage(cmd, detail);
    lastError = msg;
    const choice = await vscode.window.showErrorMessage(msg, "Show Output", "Open Settings");
    if (choice === "Show Output") {
      output.show(true);
    } else if (choice === "Open Settings") {
      void vscode.commands.executeCommand("workbench.action.openSettings", SECTION);
    }
  }
}

function setStatus(text: string, tooltip: string) {
  status.text = text;
  status.tooltip = tooltip;
  status.show();
}

/** The `wgmmaLsp` section as plain JSON (what workspace/configuration also returns). */
function currentSettings(): unknown {
  return withProjectPython(
    gateSettings(JSON.parse(JSON.stringify(vscode.workspace.getConfiguration(SECTION))), vscode.workspace.isTrusted),
    projectInterpreter);
}

interface Probe {
  ok: boolean;
  version?: string;
  detail: string;
  missing?: boolean;
}

function probeInterpreter(interpreter: string): Promise<Probe> {
  return new Promise((resolve) => {
    cp.execFile(interpreter, ["-P", "-c", PROBE_SCRIPT], { timeout: PROBE_TIMEOUT_MS, windowsHide: true },
      (err, stdout, stderr) => {
        if (!err) {
          resolve({ ok: true, version: stdout.trim(), detail: "" });
          return;
        }
        const e = err as NodeJS.ErrnoException & { killed?: boolean };
        let detail: string;
        if (e.code === "ENOENT") {
          resolve({ ok: false, missing: true, detail: `interpreter not found: ${interpreter}` });
          return;
        } else if (e.killed) {
          detail = `checking ${interpreter} timed out after ${PROBE_TIMEOUT_MS / 1000}s`;
        } else {
          const last = stderr.trim().split(/\r?\n/).pop() ?? "";
          detail = last || e.message;
        }
        resolve({ ok: false, detail });
      });
  });
}

async function showNotInstalled(cmd: ServerCommand, detail: string, missing = false): Promise<void> {
  const interp = cmd.interpreter ?? cmd.command;
  const install = installCommand(interp);
  const actions = ["Install in Terminal", "Copy Install Command", "Open Settings"];
  if (vscode.extensions.getExtension(PYTHON_EXTENSION)) {
    actions.splice(2, 0, "Select Interpreter");
  }
  lastError = missing ? interpreterMissingMessage(cmd) : notInstalledMessage(cmd, detail);
  if (missing) {
    actions.splice(0, 2); // nothing to install into
  }
  const choice = await vscode.window.showErrorMessage(lastError, ...actions);
  switch (choice) {
    case "Install in Terminal": {
      const term = vscode.window.createTerminal("wgmma-lsp install");
      term.show();
      term.sendText(install);
      break;
    }
    case "Copy Install Command":
      await vscode.env.clipboard.writeText(install);
      break;
    case "Select Interpreter":
      await vscode.commands.executeCommand("python.setInterpreter");
      break;
    case "Open Settings":
      await vscode.commands.executeCommand("workbench.action.openSettings", `${SECTION}.interpreter`);
      break;
  }
}

// -- configuration ----------------------------------------------------------------------------

function onConfigurationChanged(context: vscode.ExtensionContext, e: vscode.ConfigurationChangeEvent) {
  if (!e.affectsConfiguration(SECTION)) {
    return;
  }
  if (RESTART_KEYS.some((k) => e.affectsConfiguration(`${SECTION}.${k}`))) {
    output.appendLine("[client] server location changed: restarting");
    void restart(context);
    return;
  }
  // Applied live: the server re-reads the section through workspace/configuration.
  const c = client;
  if (c && c.state === State.Running) {
    void c.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
  }
}

// -- the Python extension ---------------------------------------------------------------------

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails(resource?: vscode.Uri): { execCommand: string[] | undefined };
    onDidChangeExecutionDetails: vscode.Event<unknown>;
  };
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch (err) {
    output.appendLine(`[client] the Python extension failed to activate: ${err}`);
    return undefined;
  }
}

function workspaceResource(): vscode.Uri | undefined {
  return vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
}

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const api = await pythonApi();
  if (!api) {
    return undefined;
  }
  try {
    if (api.environments) {
      const envPath = api.environments.getActiveEnvironmentPath(workspaceResource());
      const env = await api.environments.resolveEnvironment(envPath);
      const p = env?.executable.uri?.fsPath;
      if (p) {
        return p;
      }
    }
    const exec = api.settings?.getExecutionDetails(workspaceResource()).execCommand;
    return exec && exec.length === 1 ? exec[0] : undefined;
  } catch (err) {
    output.appendLine(`[client] could not read the interpreter from the Python extension: ${err}`);
    return undefined;
  }
}

async function watchPythonExtension(context: vscode.ExtensionContext): Promise<void> {
  const api = await pythonApi();
  const onChange = () => {
    const s = launchSettings();
    if (s.serverPath.trim() || s.interpreter.trim()) {
      return; // an explicit setting wins; the selection does not matter
    }
    output.appendLine("[client] the selected Python interpreter changed: restarting");
    void restart(context);
  };
  if (api?.environments) {
    context.subscriptions.push(api.environments.onDidChangeActiveEnvironmentPath(onChange));
  } else if (api?.settings) {
    context.subscriptions.push(api.settings.onDidChangeExecutionDetails(onChange));
  }
}

// -- explain ----------------------------------------------------------------------------------

interface Explanation {
  code?: string;
  name?: string;
  markdown?: string;
  error?: string;
}

async function explainRule(code?: string): Promise<Explanation | undefined> {
  if (!code) {
    code = await ruleUnderCursor();
  }
  if (!code) {
    return undefined;
  }
  const c = client;
  if (!c || c.state !== State.Running) {
    void vscode.window.showWarningMessage("wgmma-lsp is not running.", "Show Output").then((x) => {
      if (x) {
        output.show(true);
      }
    });
    return undefined;
  }
  let result: Explanation | null;
  try {
    result = (await c.sendRequest(ExecuteCommandRequest.type, {
      command: EXPLAIN_COMMAND,
      arguments: [code],
    })) as Explanation | null;
  } catch (err) {
    result = { code, error: `${EXPLAIN_COMMAND} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!result || result.error || !result.markdown) {
    void vscode.window.showWarningMessage(`wgmma-lsp: ${result?.error ?? `no explanation for ${code}`}`);
    return result ?? undefined;
  }
  await showMarkdown(`${result.code}${result.name ? ` (${result.name})` : ""}`, result.markdown);
  return result;
}

async function ruleUnderCursor(): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  const diags = editor ? vscode.languages.getDiagnostics(editor.document.uri) : [];
  const codes = editor ? ruleCodesAt(diags, editor.selection.active) : [];
  if (codes.length === 1) {
    return codes[0];
  }
  if (codes.length > 1) {
    return vscode.window.showQuickPick(codes, { placeHolder: "Which rule?" });
  }
  return vscode.window.showInputBox({
    prompt: "No wgmma-lsp diagnostic under the cursor. Rule code to explain:",
    placeHolder: "WG001",
  });
}

async function showMarkdown(title: string, markdown: string): Promise<void> {
  let html: string | undefined;
  try {
    html = await vscode.commands.executeCommand<string>("markdown.api.render", markdown);
  } catch {
    html = undefined;
  }
  if (typeof html === "string") {
    const panel = vscode.window.createWebviewPanel("wgmmaLsp.explain", `wgmma-lsp: ${title}`,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, { enableScripts: false });
    panel.webview.html = `<!DOCTYPE html><html><head><meta charset="utf-8">` +
      `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';">` +
      `<style>body{font-family:var(--vscode-font-family);line-height:1.5;padding:0 1em}` +
      `code,pre{font-family:var(--vscode-editor-font-family)}</style></head><body>${html}</body></html>`;
    return;
  }
  const doc = await vscode.workspace.openTextDocument({ language: "markdown", content: markdown });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}
