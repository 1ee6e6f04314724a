"""Each text parsed once per process in `wgmma-lsp check`: a file analysed as a document and
imported as a module by another document shares one syntax tree (wgmma_lsp/kept_trees.py); the
language server keeps only the modules' trees (a document is a new text at each keystroke)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wgmma_lsp import kept_trees
from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.program import Program

HELPER = textwrap.dedent("""\
    import jax.numpy as jnp
    from jax.experimental.pallas import mosaic_gpu as plgpu

    def acc(m, n):
        return plgpu.ACC((m, n), jnp.float32)
    """)

KERNEL = textwrap.dedent("""\
    from helper import acc

    ACC = acc(64, 128)
    """)


@pytest.fixture
def parses(monkeypatch):
    """Texts parsed through kept_trees (each parse counted), with its state restored after."""
    seen: list[str] = []
    real = kept_trees.parse

    def counting(text: str):
        seen.append(text)
        return real(text)

    monkeypatch.setattr(kept_trees, "parse", counting)
    monkeypatch.setattr(kept_trees, "keep_documents", False)
    monkeypatch.setattr(kept_trees, "MAX_TREES", kept_trees.MAX_TREES)
    kept_trees.clear()
    yield seen
    kept_trees.clear()


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "kernel.py").write_text(KERNEL)
    return tmp_path / "helper.py", tmp_path / "kernel.py"


def test_check_parses_a_document_that_is_also_imported_once(tmp_path, parses):
    helper, kernel = _workspace(tmp_path)
    program = Program(roots=(str(tmp_path),))
    with kept_trees.documents_kept():
        first = analyze(HELPER, str(helper), program=program)
        second = analyze(KERNEL, str(kernel), program=program)
    assert not kept_trees.keep_documents  # (the run's setting only)
    assert parses.count(HELPER) == 1  # analysed, then imported: one parse
    assert parses.count(KERNEL) == 1
    # the same answers as without shared trees
    kept_trees.clear()
    assert diagnostics(analyze(HELPER, str(helper), program=Program(roots=(str(tmp_path),)))) \
        == diagnostics(first)
    assert diagnostics(analyze(KERNEL, str(kernel), program=Program(roots=(str(tmp_path),)))) \
        == diagnostics(second)


def test_the_server_does_not_keep_documents(tmp_path, parses):
    helper, _ = _workspace(tmp_path)
    program = Program(roots=(str(tmp_path),))
    analyze(HELPER, str(helper), program=program)
    analyze(HELPER, str(helper), program=program)
    assert parses.count(HELPER) == 2  # each version typed is parsed; none pushes modules out


def test_a_tree_with_syntax_errors_is_not_kept(tmp_path, parses):
    broken = HELPER + "def half(:\n"
    with kept_trees.documents_kept():
        analyze(broken, str(tmp_path / "helper.py"), program=Program(roots=(str(tmp_path),)))
        analyze(broken, str(tmp_path / "helper.py"), program=Program(roots=(str(tmp_path),)))
    assert parses.count(broken) == 2
