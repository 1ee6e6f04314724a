"""WG062 pipeline-delay-release: emit_pipeline with max_concurrent_steps <= the inputs' delay_release."""

from __future__ import annotations

from wgmma_lsp.ide_model import Fix, TextEdit
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fix_preview import corrected_call
from wgmma_lsp.spans import Span


def fixes(finding: Finding, source: str) -> list[Fix]:
    """Run one more step concurrently than the largest delay_release: the corrected call is the
    help text. `data` (models/pipeline_checks.py): levels, call_span, steps_span (the value of
    `max_concurrent_steps=`, None when not given), last_arg_span."""
    d = finding.data
    levels, steps, last = d.get("levels"), d.get("steps_span"), d.get("last_arg_span")
    if not levels:
        return []
    n = max(levels) + 1
    if steps is not None:
        edit = TextEdit(steps, str(n))
    elif last is not None:
        edit = TextEdit(Span(last.end_line, last.end_col, last.end_line, last.end_col),
                        f", max_concurrent_steps={n}")
    else:
        return []
    call = corrected_call(source, d.get("call_span"), (edit,))
    shown = f"`{call}`" if call else f"`max_concurrent_steps={n}`"
    return [Fix(f"Keep {n} steps in flight (more than delay_release={max(levels)}): {shown}", (edit,), True)]


RULE = Rule(
    code="WG062",
    name="pipeline-delay-release",
    apis=("plgpu.emit_pipeline",),
    summary="plgpu.emit_pipeline: max_concurrent_steps must exceed the inputs' delay_release.",
    template="max_concurrent_steps must be greater than all delay_release values, but "
             "max_concurrent_steps={max_concurrent_steps} and delay_release_levels={delay_release_levels}.",
    exception="ValueError",
    jax_source="jax/_src/pallas/mosaic_gpu/pipeline.py: emit_pipeline",
    doc_file=doc_path(__file__),
    catalog_rows=(105,),
    fixes=fixes,
    fix_summary="`max_concurrent_steps=` one more than the largest delay_release",
)
