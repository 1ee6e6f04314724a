"""Rule modules named by `from wgmma_lsp.rules import <rule>` are imported at their first use
(rules/__init__.py): the same module, the same `RULE` object, whichever way it is reached."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = r"""
import sys
from wgmma_lsp.rules import wgmma_shapes, base
assert type(base).__name__ == "module"  # not a rule module (no .md): imported at once
lazy_before = "wgmma_lsp.rules.wgmma_shapes" not in sys.modules
rule = wgmma_shapes.RULE
import wgmma_lsp.rules.wgmma_shapes as real
from wgmma_lsp.rules.registry import RULES
assert rule is real.RULE is RULES[rule.code] and wgmma_shapes.module() is real
from wgmma_lsp.rules import wgmma_shapes as again  # imported now: the module itself
assert again is real
print(lazy_before, rule.code)
"""


def test_a_rule_module_is_imported_at_its_first_use() -> None:
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "WG005"]


def test_an_unknown_name_is_an_import_error() -> None:
    with pytest.raises(ImportError):
        from wgmma_lsp.rules import no_such_rule  # noqa: F401


def test_setting_an_attribute_sets_it_on_the_module(monkeypatch: pytest.MonkeyPatch) -> None:
    from wgmma_lsp.rules import LazyRuleModule, wgmma_mixed_dtypes

    proxy = LazyRuleModule("wgmma_mixed_dtypes")
    monkeypatch.setattr(proxy, "RULE", "replaced")
    assert wgmma_mixed_dtypes.RULE == "replaced" == sys.modules["wgmma_lsp.rules.wgmma_mixed_dtypes"].RULE
