"""User settings, as read from `workspace/configuration` (section `wgmmaLsp`) or the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field

from wgmma_lsp.ide_model import Severity

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING,
               "information": Severity.INFORMATION, "info": Severity.INFORMATION,
               "hint": Severity.HINT}


@dataclass
class Settings:
    """The settings that apply to one file."""
    select: list[str] = field(default_factory=list)  # empty: every rule
    ignore: list[str] = field(default_factory=list)
    severity: dict[str, Severity] = field(default_factory=dict)  # code or name -> severity; "off" drops
    off: set[str] = field(default_factory=set)
    inlay_hints: bool = True
    trace_enabled: bool = False
    trace_timeout: float = 60.0
    trace_memory_mb: int = 4096
    trace_interpreter: str | None = None
    trace_concurrency: int | None = None  # traces at once (trace/containment.py); None: the core count
    log_level: str = "info"
    syntax_errors: bool = False  # the server also publishes syntax errors (WG900)
    docs_base_url: str | None = None  # if set, rule links point here (`{base}/{code}`) instead of the bundled docs
    lowering_semantics: str | None = None  # "lane"/"warpgroup" for kernels that do not say (config)
    sweeps: str | None = None  # "budget"/"all" (interpret/sweep_budget.py); None: the tool's default
    python: str | None = None  # the analysed environment's interpreter (environment.py); None: found

    def rule_enabled(self, code: str, name: str) -> bool:
        if code in self.off or name in self.off:
            return False
        if self.select and not any(s in (code, name) or code.startswith(s) for s in self.select):
            return False
        return not any(s in (code, name) or code.startswith(s) for s in self.ignore)

    def severity_for(self, code: str, name: str, default: Severity) -> Severity:
        return self.severity.get(code) or self.severity.get(name) or default

    @classmethod
    def from_dict(cls, raw: Any) -> "Settings":
        """Build from the client's JSON; anything malformed falls back to the default."""
        return cls().apply_editor(raw)

    def apply_editor(self, raw: Any) -> "Settings":
        """The editor's settings (the `wgmmaLsp` section) on top of these (e.g. the project
        configuration's): a non-empty `select` replaces, `ignore` adds, severities override."""
        s = self
        if not isinstance(raw, dict):
            return s
        rules = raw.get("rules") if isinstance(raw.get("rules"), dict) else {}
        if _str_list(rules.get("select")):
            s.select = _str_list(rules.get("select"))
        s.ignore = list(dict.fromkeys([*s.ignore, *_str_list(rules.get("ignore"))]))
        sev = rules.get("severity")
        if isinstance(sev, dict):
            for k, v in sev.items():
                if not isinstance(k, str) or not isinstance(v, str):
                    continue
                if v.lower() == "off":
                    s.off.add(k)
                elif v.lower() in _SEVERITIES:
                    s.severity[k] = _SEVERITIES[v.lower()]
        hints = raw.get("inlayHints")
        if isinstance(hints, dict) and isinstance(hints.get("enabled"), bool):
            s.inlay_hints = hints["enabled"]
        trace = raw.get("trace")
        if isinstance(trace, dict):
            if isinstance(trace.get("enabled"), bool):
                s.trace_enabled = trace["enabled"]
            if isinstance(trace.get("timeout"), (int, float)) and trace["timeout"] > 0:
                s.trace_timeout = float(trace["timeout"])
            if isinstance(trace.get("memoryMb"), int) and trace["memoryMb"] > 0:
                s.trace_memory_mb = trace["memoryMb"]
            if isinstance(trace.get("interpreter"), str) and trace["interpreter"]:
                s.trace_interpreter = trace["interpreter"]
            conc = trace.get("concurrency")
            if isinstance(conc, int) and not isinstance(conc, bool) and conc > 0:
                s.trace_concurrency = conc
        if isinstance(raw.get("syntaxErrors"), bool):
            s.syntax_errors = raw["syntaxErrors"]
        if isinstance(raw.get("logLevel"), str):
            s.log_level = raw["logLevel"].lower()
        if isinstance(raw.get("python"), str) and raw["python"]:
            s.python = raw["python"]
        if isinstance(raw.get("docsBaseUrl"), str) and raw["docsBaseUrl"]:
            s.docs_base_url = raw["docsBaseUrl"].rstrip("/")
        return s


def _str_list(v: Any) -> list[str]:
    return [x for x in v if isinstance(x, str)] if isinstance(v, list) else []
