"""The rule table (docs/rules.md) and docs/coverage.md are generated from the rule modules: stale copies fail."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wgmma_lsp.rules.catalog import load_catalog
from wgmma_lsp.rules.registry import RULES

ROOT = Path(__file__).resolve().parent.parent


def test_generated_tables_are_current() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_rule_table.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_catalog_has_every_row_once() -> None:
    rows = [r.row for r in load_catalog()]
    assert rows == list(range(1, 110))


def test_catalog_rows_name_real_rows() -> None:
    known = {r.row for r in load_catalog()}
    for rule in RULES.values():
        assert set(rule.catalog_rows) <= known, rule.code
        assert rule.semantics == () or rule.stage == "lower", rule.code
        assert set(rule.semantics) <= {"lane", "warpgroup"}, rule.code
