/**
 * Workspace trust: trace mode runs the user's code (in a separate, limited process), so it is
 * only ever enabled in a trusted workspace, whatever the settings say.
 */

/** The `wgmmaLsp` settings as the server may see them in a workspace of the given trust. */
export function gateSettings(settings: unknown, trusted: boolean): unknown {
  if (trusted || settings === null || typeof settings !== "object") {
    return settings;
  }
  const copy = JSON.parse(JSON.stringify(settings)) as Record<string, unknown>;
  const trace = (copy.trace && typeof copy.trace === "object" ? copy.trace : {}) as Record<string, unknown>;
  copy.trace = { ...trace, enabled: false };
  return copy;
}
