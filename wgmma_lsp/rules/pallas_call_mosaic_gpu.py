"""WG093 pallas-call-mosaic-gpu: `pl.pallas_call(..., compiler_params=plgpu.CompilerParams(...))`
in a JAX that has no pallas_call lowering for Mosaic GPU params (0.12: Mosaic GPU kernels go
through `plgpu.kernel`). JAX fails while lowering with a bare `assert rule is not None`."""

from __future__ import annotations

import ast

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.interpret import jax_source
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import parse_call, text_of

MESSAGE = ("AssertionError: this JAX registers no lowering for pl.pallas_call with Mosaic GPU "
           "compiler params (`assert rule is not None` in jax/_src/pallas/pallas_call.py); "
           "Mosaic GPU kernels go through plgpu.kernel")

#: pallas_call keyword -> plgpu.kernel keyword (None: dropped, when the refs are the same).
_KEYWORDS = {"kernel": None, "out_shape": "out_type", "scratch_shapes": "scratch_types",
             "compiler_params": "compiler_params", "in_specs": None, "out_specs": None,
             "interpret": "interpret", "cost_estimate": "cost_estimate", "debug": "debug"}


def to_kernel(finding: Finding, source: str) -> list[Fix]:
    """`pl.pallas_call(k, out_shape=o, in_specs=…, out_specs=…, scratch_shapes=s,
    compiler_params=p)` -> `plgpu.kernel(k, out_type=o, scratch_types=s, compiler_params=p)`.
    Offered only where the two give the kernel the same refs: no grid, and every in/out spec
    keeps its array in GMEM (`plgpu.GMEM` / `pl.ANY`), as `plgpu.kernel` does; SMEM specs need
    copies written into the kernel (see the rule's documentation)."""
    d = finding.data
    span, module = d.get("pallas_call_span"), d.get("plgpu_alias")
    if span is None or not module or not d.get("gmem_specs"):
        return []
    parsed = parse_call(text_of(source, span))
    if parsed is None:
        return []
    node, text = parsed
    sig = jax_source.signature("plgpu.kernel")
    if sig is None:
        return []
    takes = {p.name for p in sig.params}
    parts: list[str] = []
    args = list(node.args)
    if not args or len(args) > 2:
        return []
    parts.append(ast.get_source_segment(text, args[0]) or "")
    if len(args) == 2:
        parts.append(f"out_type={ast.get_source_segment(text, args[1])}")
    for k in node.keywords:
        if k.arg is None or k.arg not in _KEYWORDS:
            return []
        new = _KEYWORDS[k.arg]
        if new is None:
            if k.arg == "kernel":
                parts.insert(0, ast.get_source_segment(text, k.value) or "")
            continue
        if new not in takes:
            return []
        parts.append(f"{new}={ast.get_source_segment(text, k.value)}")
    new_text = f"{module}.kernel({', '.join(parts)})"
    return [Fix(f"Write it with plgpu.kernel: `{new_text}`", (TextEdit(span, new_text),), True)]


RULE = Rule(
    code="WG093",
    name="pallas-call-mosaic-gpu",
    apis=("pl.pallas_call",),
    summary="This JAX (0.12+) lowers no pl.pallas_call with Mosaic GPU compiler params: use plgpu.kernel.",
    template="assert rule is not None",  # JAX's bare assert; MESSAGE explains it
    table_message="bare `AssertionError` (`assert rule is not None` in `pallas_call.py`), JAX 0.12",
    fix_summary="`plgpu.kernel(...)` (GMEM specs)",
    exception="AssertionError",
    jax_source="jax/_src/pallas/pallas_call.py: gpu_lowering; jax/_src/pallas/mosaic_gpu/pallas_call_registration.py",
    stage="lower",
    doc_file=doc_path(__file__),
    fixes=to_kernel,
)
