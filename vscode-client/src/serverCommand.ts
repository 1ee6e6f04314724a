// Pure logic (no `vscode` import) so that it can be unit-tested with `node --test`.

/** The settings that decide how the server process is started. */
export interface LaunchSettings {
  interpreter: string;
  serverPath: string;
  serverArgs: string[];
}

/** Where the interpreter came from, for messages. */
export type InterpreterSource = "serverPath" | "setting" | "python-extension" | "default";

export interface ServerCommand {
  command: string;
  args: string[];
  /** The Python interpreter (undefined when `serverPath` runs an executable directly). */
  interpreter?: string;
  source: InterpreterSource;
}

export const DEFAULT_INTERPRETER = process.platform === "win32" ? "python" : "python3";

/**
 * Decide how to start the server. Precedence: an explicit `wgmmaLsp.serverPath`, then an explicit
 * `wgmmaLsp.interpreter`, then the Python extension's selected interpreter, then `python3`.
 */
export function resolveServerCommand(settings: LaunchSettings, pythonExtensionInterpreter?: string): ServerCommand {
  const extra = (settings.serverArgs ?? []).filter((a) => typeof a === "string");
  const serverPath = (settings.serverPath ?? "").trim();
  if (serverPath) {
    return { command: serverPath, args: extra, source: "serverPath" };
  }
  const setting = (settings.interpreter ?? "").trim();
  if (setting) {
    return { command: setting, args: ["-P", "-m", "wgmma_lsp", ...extra], interpreter: setting, source: "setting" };
  }
  const fromExt = (pythonExtensionInterpreter ?? "").trim();
  if (fromExt) {
    return { command: fromExt, args: ["-P", "-m", "wgmma_lsp", ...extra], interpreter: fromExt, source: "python-extension" };
  }
  return {
    command: DEFAULT_INTERPRETER,
    args: ["-P", "-m", "wgmma_lsp", ...extra],
    interpreter: DEFAULT_INTERPRETER,
    source: "default",
  };
}

/** The settings sent to the server, with `python` (the analysed environment) defaulting to the
 * Python extension's interpreter when the user set none. */
export function withProjectPython(settings: unknown, interpreter: string | undefined): unknown {
  if (!interpreter || settings === null || typeof settings !== "object") {
    return settings;
  }
  const s = settings as Record<string, unknown>;
  if (typeof s.python === "string" && s.python.trim()) {
    return settings;
  }
  return { ...s, python: interpreter };
}

/** Quote one shell word (POSIX sh, or cmd.exe-ish double quotes on Windows). */
export function shellQuote(word: string, platform: NodeJS.Platform = process.platform): string {
  if (/^[A-Za-z0-9_\-.,:/@=+]+$/.test(word)) {
    return word;
  }
  if (platform === "win32") {
    return `"${word.replace(/"/g, '""')}"`;
  }
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The command that installs wgmma-lsp into `interpreter`. */
export function installCommand(interpreter: string, platform: NodeJS.Platform = process.platform): string {
  return `${shellQuote(interpreter, platform)} -m pip install wgmma-lsp`;
}

/** The message shown when the interpreter cannot import `wgmma_lsp`. */
export function notInstalledMessage(cmd: ServerCommand, detail?: string): string {
  const interp = cmd.interpreter ?? cmd.command;
  const where = describeSource(cmd.source);
  let msg = `wgmma-lsp is not installed in the Python interpreter ${interp} (${where}). ` +
    `Install it with: ${installCommand(interp)}`;
  if (detail) {
    msg += ` (${detail})`;
  }
  return msg;
}

/** The message shown when the interpreter itself does not exist. */
export function interpreterMissingMessage(cmd: ServerCommand): string {
  const interp = cmd.interpreter ?? cmd.command;
  return `The Python interpreter ${interp} (${describeSource(cmd.source)}) was not found. ` +
    `Select or set an interpreter that has wgmma-lsp (install it with: <python> -m pip install wgmma-lsp).`;
}

/** The message shown when `wgmmaLsp.serverPath` does not start. */
export function serverPathMessage(cmd: ServerCommand, detail?: string): string {
  return `wgmma-lsp could not be started from wgmmaLsp.serverPath = ${cmd.command}` +
    (detail ? ` (${detail})` : "") +
    `. Install it with: python3 -m pip install wgmma-lsp, or clear the setting to use a Python interpreter.`;
}

export function describeSource(source: InterpreterSource): string {
  switch (source) {
    case "serverPath":
      return "from the wgmmaLsp.serverPath setting";
    case "setting":
      return "from the wgmmaLsp.interpreter setting";
    case "python-extension":
      return "selected in the Python extension";
    default:
      return "the default; select an interpreter or set wgmmaLsp.interpreter";
  }
}

/** Python snippet run before starting the server: prints the version or fails with ImportError. */
export const PROBE_SCRIPT = "import wgmma_lsp, sys; sys.stdout.write(getattr(wgmma_lsp, '__version__', '?'))";

/** A position/range shape shared with vscode's types, so the picker below stays pure. */
export interface Pos {
  line: number;
  character: number;
}
export interface RangeLike {
  start: Pos;
  end: Pos;
}
export interface DiagLike {
  range: RangeLike;
  source?: string;
  code?: string | number | { value: string | number };
}

function before(a: Pos, b: Pos): boolean {
  return a.line < b.line || (a.line === b.line && a.character < b.character);
}

export function rangeContains(r: RangeLike, p: Pos): boolean {
  return !before(p, r.start) && !before(r.end, p);
}

export function codeOf(d: DiagLike): string | undefined {
  const c = d.code;
  if (c === undefined || c === null) {
    return undefined;
  }
  if (typeof c === "object") {
    return String(c.value);
  }
  return String(c);
}

/**
 * The rule codes of wgmma-lsp diagnostics under the cursor (deduplicated, in order). If none
 * contains the cursor, those on the cursor's line.
 */
export function ruleCodesAt(diags: readonly DiagLike[], pos: Pos, source = "wgmma-lsp"): string[] {
  const ours = diags.filter((d) => d.source === source && codeOf(d) !== undefined);
  let hits = ours.filter((d) => rangeContains(d.range, pos));
  if (hits.length === 0) {
    hits = ours.filter((d) => d.range.start.line <= pos.line && pos.line <= d.range.end.line);
  }
  return [...new Set(hits.map((d) => codeOf(d) as string))];
}

/** Keys under `wgmmaLsp.` whose change needs a server restart (the rest are sent live). */
export const RESTART_KEYS = ["interpreter", "serverPath", "serverArgs"];
