"""Tool-level codes: what the checker itself reports about a file (not an error JAX raises)."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

_DOCS = doc_path(__file__).parent

SYNTAX_ERROR = Rule(
    code="WG900",
    name="syntax-error",
    summary="The file does not parse: Python itself rejects it, so nothing in it can run.",
    template="SyntaxError: {msg}",
    exception="SyntaxError",
    jax_source="(Python's parser)",
    stage="tool",
    doc_file=_DOCS / "syntax_error.md",
)

UNREADABLE_FILE = Rule(
    code="WG901",
    name="unreadable-file",
    summary="The file cannot be read, is not text, or is not valid in its declared encoding.",
    template="{reason}",
    exception="OSError",
    jax_source="(the file system)",
    stage="tool",
    doc_file=_DOCS / "unreadable_file.md",
)

UNUSED_SUPPRESSION = Rule(
    code="WG902",
    name="unused-suppression",
    summary="A `# wgmma-lsp: ignore` comment that silences nothing.",
    template="Unused suppression: {what}",
    exception="",
    jax_source="(wgmma-lsp)",
    stage="tool",
    doc_file=_DOCS / "unused_suppression.md",
)

ANALYSIS_BUDGET = Rule(
    code="WG903",
    name="analysis-budget",
    summary="Information: the analysis budget left some combinations of a configuration sweep unchecked.",
    template="checked {n} of {total} combinations of this sweep; the analysis budget left out the others",
    exception="",
    jax_source="(wgmma-lsp)",
    stage="tool",
    doc_file=_DOCS / "analysis_budget.md",
)

ANALYSIS_INCOMPLETE = Rule(
    code="WG904",
    name="analysis-incomplete",
    summary="Information: the analysis stopped short here (a step budget, nesting too deep, a file "
            "too large, an internal error), so the code from here was not fully checked.",
    template="analysis incomplete: {why}",
    exception="",
    jax_source="(wgmma-lsp)",
    stage="tool",
    doc_file=_DOCS / "analysis_incomplete.md",
)

KERNEL_WITHOUT_SHAPES = Rule(
    code="WG906",
    name="kernel-without-shapes",
    summary="Information: a kernel was only checked with nothing known about its arguments (no "
            "`__main__` driver, test or trace comment reaches it); the code action adds a trace comment.",
    template="kernel `{kernel}` was checked without concrete shapes: nothing known about the "
             "arguments of `{entry}`",
    exception="",
    jax_source="(wgmma-lsp)",
    stage="tool",
    doc_file=_DOCS / "kernel_without_shapes.md",
)

TOOL_RULES: dict[str, Rule] = {r.code: r for r in (SYNTAX_ERROR, UNREADABLE_FILE, UNUSED_SUPPRESSION,
                                                   ANALYSIS_BUDGET, ANALYSIS_INCOMPLETE,
                                                   KERNEL_WITHOUT_SHAPES)}
