"""WG030 run-scoped-collective: run_scoped allocations whose collective_axes do not match the
kernel's thread axis."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

NOT_THREAD_MESSAGE = "Only thread-collective allocations are supported in run_scoped."

RULE = Rule(
    code="WG030",
    name="run-scoped-collective",
    apis=("pl.run_scoped",),
    summary="run_scoped's collective_axes must be the kernel's thread axis (and are required for "
            "SMEM and barriers in multi-threaded kernels).",
    template="Only thread-collective allocations are supported in run_scoped. / Only thread-collective "
             "allocations are supported in multithreaded kernels. Hint: add collective_axes=… …",
    exception="ValueError / NotImplementedError",
    jax_source="jax/_src/pallas/mosaic_gpu/lowering.py: _run_scoped_lowering_rule",
    stage="lower",
    doc_file=doc_path(__file__),
    catalog_rows=(38, 39),
    semantics=("lane", "warpgroup"),
)
