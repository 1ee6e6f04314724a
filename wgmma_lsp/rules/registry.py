"""Finds every rule module in this package: adding a rule is adding a module (and its .md)."""

from __future__ import annotations

import importlib

from wgmma_lsp import rules as _pkg
from wgmma_lsp.rules.base import Rule
from wgmma_lsp.rules.tool_codes import TOOL_RULES
from wgmma_lsp.submodules import module_names

_SKIP = {"base", "registry", "fixes_common", "tool_codes"}


def _load() -> dict[str, Rule]:
    found: dict[str, Rule] = {}
    for name in module_names(_pkg.__path__):
        if name in _SKIP or name.startswith("_"):
            continue
        mod = importlib.import_module(f"{_pkg.__name__}.{name}")
        rule = getattr(mod, "RULE", None)
        if not isinstance(rule, Rule):
            continue
        if rule.code in found:
            raise RuntimeError(f"duplicate rule code {rule.code} in {name}")
        found[rule.code] = rule
    return dict(sorted(found.items()))


RULES: dict[str, Rule] = _load()
#: Every code wgmma-lsp reports: the rules, and the checker's own codes (WG900…).
ALL_CODES: dict[str, Rule] = {**RULES, **TOOL_RULES}
_BY_NAME = {r.name: r for r in ALL_CODES.values()}


def find_rule(code_or_name: str) -> Rule | None:
    key = code_or_name.strip()
    return ALL_CODES.get(key.upper()) or _BY_NAME.get(key.lower())


def is_known_selector(selector: str) -> bool:
    """A code (`WG001`), a rule name (`accumulator-dtype`) or a code prefix (`WG0`) that
    matches at least one code: what `select`/`ignore` accept."""
    s = selector.strip()
    if find_rule(s) is not None:
        return True
    codes = [*ALL_CODES, *_trace_codes()]
    return s in _trace_codes().values() or (bool(s) and s.upper() == s and any(c.startswith(s) for c in codes))


def _trace_codes() -> dict[str, str]:
    """Trace mode's own codes (TRACE001…), by code: the name."""
    from wgmma_lsp.rules import trace_codes

    return {v[0]: v[1] for v in vars(trace_codes).values()
            if isinstance(v, tuple) and len(v) == 2 and isinstance(v[0], str) and v[0].startswith("TRACE")}
