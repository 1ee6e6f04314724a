"""`plgpu.emit_pipeline(...)`: the checks JAX makes when the pipeline is built (the pipeline's
body and blocks are modelled in models/pipelines.py).

Mirrors (jax 0.10.2) jax/_src/pallas/mosaic_gpu/pipeline.py `emit_pipeline`: the grid must be
positive, input BlockSpecs may not be collective, outputs neither; then `max_concurrent_steps`
must exceed the smallest `delay_release` of the inputs (the message says "all").
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import ArrayVal, BlockSpecVal, Const, TupleVal, as_int
from wgmma_lsp.rules import pipeline_delay_release
from wgmma_lsp.spans import Span


def span_on_line(call: Call, span: Span | None) -> Span | None:
    """The span to show a finding at: `span` when it is on the line JAX blames, else the call."""
    if span is not None and span.line == call.line:
        return span
    return call.span


def _specs(call: Call, name: str) -> list[BlockSpecVal] | None:
    v = call.kwargs.get(name, TupleVal(()))
    if not isinstance(v, TupleVal):
        return None
    if not all(isinstance(s, BlockSpecVal) and s.collective_axes is False for s in v.items):
        return None
    return list(v.items)  # type: ignore[arg-type]


def _steps_edit_spans(call: Call) -> dict[str, Span | None]:
    """Where a fix sets `max_concurrent_steps`: its value, or the end of the last argument."""
    given = call.kw_nodes.get("max_concurrent_steps")
    nodes = [*call.arg_nodes, *call.kw_nodes.values()]
    last = max((call.interp.span(n) for n in nodes if n is not None), default=None,
               key=lambda s: (s.end_line, s.end_col))
    return {"steps_span": call.interp.span(given) if given is not None else None, "last_arg_span": last}


def pipeline_ok(call: Call) -> bool:
    """True unless JAX is proven to raise the delay_release error here (then reported)."""
    if not call.complete or len(call.args) > 1:
        return True
    grid = call.kwargs.get("grid")
    if not isinstance(grid, TupleVal) or not all(
            (as_int(g) is not None and as_int(g) > 0) or (isinstance(g, ArrayVal) and g.shape == ())  # type: ignore[operator]
            for g in grid.items):
        return True
    ins, outs = _specs(call, "in_specs"), _specs(call, "out_specs")
    if ins is None or outs is None:
        return True
    steps = as_int(call.kwargs.get("max_concurrent_steps", Const(1)))
    delays = [s.delay_release for s in ins]
    if steps is None or any(d is None for d in delays):
        return True
    levels = sorted(set(delays)) or [0]  # type: ignore[type-var]
    if steps <= levels[0]:  # type: ignore[operator]
        call.interp.report(
            pipeline_delay_release.RULE,
            "max_concurrent_steps must be greater than all delay_release values, but "
            f"max_concurrent_steps={steps} and delay_release_levels={levels}.",
            span_on_line(call, call.span_of(99, "max_concurrent_steps")), call.line,
            data={"levels": levels, "call_span": call.span, **_steps_edit_spans(call)})
        return False
    return True
