"""docs/coverage.md's section for the installed JAX is what real JAX and wgmma-lsp do now.

The whole catalog takes ~30 s per JAX (`scripts/gen_coverage.py`, which writes it;
`benchmarks/bench_catalog.py` re-derives all of it and says whether the doc is current); this test
re-derives one row per catalog group and compares it with the doc's rows, and checks the doc's
counts against its own table.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_coverage  # noqa: E402
from catalog_harness import as_kernel, jax_label, triggers  # noqa: E402
from wgmma_lsp.rules.catalog import load_catalog  # noqa: E402

DOC = ROOT / "docs" / "coverage.md"


def _section(text: str, minor: str) -> str | None:
    m = re.search(rf"{re.escape(gen_coverage._begin(minor))}.*?{re.escape(gen_coverage._end(minor))}", text, re.DOTALL)
    return m.group(0) if m else None


def _minor() -> str:
    """The section's key: the release (0.12.0.1 and 0.12.1 each have one)."""
    return jax_label()


def _rows(section: str) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for line in section.splitlines():
        m = re.match(r"\| (\d+) \|", line)
        if m:
            out.setdefault(int(m.group(1)), []).append(line)
    return out


def test_the_installed_jax_has_its_section() -> None:
    section = _section(DOC.read_text(encoding="utf-8"), _minor())
    assert section is not None, f"run scripts/gen_coverage.py with jax {jax_label()}"
    assert f"## Re-derived on JAX {jax_label()}" in section
    assert sorted(_rows(section)) == [r.row for r in load_catalog()]


SAMPLE = sorted({min(r.row for r in load_catalog() if r.group == g) for g in {r.group for r in load_catalog()}})


def test_a_sample_of_rows_is_current() -> None:
    """One row per group, re-derived now, reads as the doc says (a stale doc fails here)."""
    section = _section(DOC.read_text(encoding="utf-8"), _minor())
    assert section is not None
    fresh = _rows(gen_coverage.section(gen_coverage.derive(set(SAMPLE))))
    documented = _rows(section)
    for row in SAMPLE:
        assert fresh[row] == documented[row], f"row {row} changed: run scripts/gen_coverage.py"


def test_the_counts_are_the_table_s() -> None:
    section = _section(DOC.read_text(encoding="utf-8"), _minor())
    assert section is not None
    rows = _rows(section)
    rejected = [n for n, ls in rows.items() if any("| caught |" in ln or "| missed" in ln for ln in ls)]
    caught = [n for n, ls in rows.items() if n in rejected
              and all("| missed" not in ln for ln in ls)]
    m = re.search(r"still rejects.*?\*\*(\d+)\*\*; caught by wgmma-lsp: \*\*(\d+)\*\*", section)
    assert m and (int(m.group(1)), int(m.group(2))) == (len(rejected), len(caught))


def test_each_version_keeps_the_other_s_section() -> None:
    head = "# Coverage\n\nclaims\n"
    ten = "<!-- coverage jax 0.10: begin -->\nten\n<!-- coverage jax 0.10: end -->"
    twelve = "<!-- coverage jax 0.12: begin -->\ntwelve\n<!-- coverage jax 0.12: end -->"
    both = gen_coverage.merged(gen_coverage.merged(head, twelve), ten)
    assert both.startswith(head) and both.index("ten") < both.index("twelve")
    again = gen_coverage.merged(both, twelve.replace("twelve", "twelve again"))
    assert "ten" in again and "twelve again" in again and "\ntwelve\n" not in again


def test_a_pallas_call_trigger_becomes_a_kernel_on_the_same_lines() -> None:
    path = ROOT / "tests" / "fixtures" / "lowering" / "wgmma_k_swizzle_warpgroup.py"
    source = path.read_text()
    converted = as_kernel(source)
    assert converted is not None and "pl.pallas_call" not in converted
    old, new = source.splitlines(), converted.splitlines()
    kernel_end = next(i for i, t in enumerate(old) if t.startswith("def f("))
    assert new[:kernel_end] == old[:kernel_end]  # the kernel body is untouched, line for line
    assert new[len(old) - 1] == old[-1]  # the entry point comment stays on its line
    ast.parse(converted)


@pytest.mark.parametrize("row", [3, 4, 70, 71, 72, 73])
def test_rows_sharing_a_message_have_their_own_trigger(row: int) -> None:
    found = triggers()
    assert len(found[row]) == 1
    others = {t.name for r in (3, 4, 70, 71, 72, 73) if r != row for t in found[r]}
    assert found[row][0].name not in others
