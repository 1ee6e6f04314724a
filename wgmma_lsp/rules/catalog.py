"""The catalog of Mosaic GPU errors JAX raises (docs/mosaic-gpu-errors.tsv, one row per error,
numbered as in the team's error catalog) and what wgmma-lsp does about each.

A rule names the rows it catches in `Rule.catalog_rows`; a row no rule catches may say why here
(`NOT_CLAIMED`). `scripts/gen_rule_table.py` turns both into docs/coverage.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CATALOG_TSV = Path(__file__).resolve().parents[2] / "docs" / "mosaic-gpu-errors.tsv"

GROUPS = {
    "A": "WGMMA API wrappers and the accumulator ref (trace time)",
    "B": "WGMMA operand refs, transforms and accumulator allocation (Lane lowering)",
    "C": "WGMMA hardware rules: dtypes, accumulator dtypes, M/N/K, major-ness, lhs in registers",
    "D": "WGMMA under Warpgroup lowering semantics",
    "E": "Allocation scopes: run_scoped / run_state / multi-warpgroup kernels",
    "F": "TMEM allocation and tcgen05 API (trace time) + TMEM access",
    "G": "tcgen05 lowering / Blackwell hardware rules",
    "H": "GMEM<->SMEM copies (TMA), barriers, SMEM capacity",
    "I": "Ref stores and indexing",
    "J": "Transforms (tiling / swizzle / transpose / reshape) and loads through them",
    "K": "pallas_call / kernel / pipeline level",
}

# Rows no rule claims, with the reason (shown in docs/coverage.md). Rows absent from here and
# from every rule's catalog_rows are listed as "not covered yet".
NOT_CLAIMED: dict[int, str] = {
    33: "register layouts other than splat, strided loads and WGMMA are not tracked; with JAX 0.10 a "
        "WGMMA_TRANSPOSED lhs made by layout_cast of a load fails earlier, in the load (#100's message)",
}


@dataclass(frozen=True)
class CatalogRow:
    row: int
    group: str
    template: str
    exception: str
    stage: str
    static: str
    warpgroup: str


def load_catalog(path: Path = CATALOG_TSV) -> list[CatalogRow]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        row, group, template, exc, stage, static, wg = line.split("\t")
        rows.append(CatalogRow(int(row), group, template, exc, stage, static, wg))
    return sorted(rows, key=lambda r: r.row)
