"""Entry points (comments, pyproject.toml, compact specs) and the pure helpers of trace mode."""

from __future__ import annotations

from pathlib import Path

from wgmma_lsp.trace import worker
from wgmma_lsp.trace.entries import all_entry_points, parse_entry_points, pyproject_entry_points
from wgmma_lsp.trace.report import hang_line, template_regex


def test_comment_entry_points_and_compact_specs() -> None:
    src = "x = 1\n# wgmma-lsp: trace matmul(bf16[256,256], jax.ShapeDtypeStruct((2,), jnp.int8))\n"
    [e] = parse_entry_points(src)
    assert e.line == 1 and e.origin == "comment"
    assert e.expression == ("matmul(__wgmma_spec__('bfloat16', (256, 256, )), "
                            "jax.ShapeDtypeStruct((2,), jnp.int8))")
    assert "line 2" in e.label


def test_pyproject_entry_points(tmp_path: Path) -> None:
    (tmp_path / "kernels").mkdir()
    kernel = tmp_path / "kernels" / "mm.py"
    kernel.write_text("# wgmma-lsp: trace mm(f32[64,64])\n")
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.wgmma-lsp]\ntrace = [\n'
        '  "kernels/mm.py:mm(bf16[128,64])",\n'
        '  "kernels/other.py:other(bf16[1])",\n'
        '  "not an entry",\n]\n')
    [e] = pyproject_entry_points(kernel)
    assert (e.call, e.origin, e.line) == ("mm(bf16[128,64])", "pyproject", 5)
    assert e.config_path == str(tmp_path / "pyproject.toml")
    assert [x.call for x in all_entry_points(kernel.read_text(), kernel)] == [
        "mm(f32[64,64])", "mm(bf16[128,64])"]


def test_malformed_pyproject_is_ignored(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.wgmma-lsp\ntrace = ")
    assert pyproject_entry_points(tmp_path / "k.py") == []


def test_template_regex() -> None:
    rx = template_regex("Accumulator dtype {inner.dtype} does not match value dtype {val.dtype}")
    assert rx.match("Accumulator dtype float32 does not match value dtype bfloat16")
    assert not rx.match("Accumulator shape (64, 128) does not match value shape (128, 64)")
    assert template_regex("{x}") is None  # no literal text: would match anything


def test_mlir_message_and_location(tmp_path: Path) -> None:
    path = str(tmp_path / "k.py")
    (tmp_path / "k.py").write_text("")
    text = ('Verification failed:\nerror: "wgmma:"("wgmma"("k.<locals>.body"("' + path +
            '":9:4 to :38))): \'mosaic_gpu.wgmma\' op The accumulator\'s first dimension must be '
            'a multiple of 64, but got 32.\n note: ...')
    assert worker._mlir_message(text) == ("'mosaic_gpu.wgmma' op The accumulator's first "
                                          "dimension must be a multiple of 64, but got 32.")
    assert worker.Blamer(path).mlir_location(text) == [8, 4, 8, 38]
    assert worker.Blamer(str(tmp_path / "other.py")).mlir_location(text) is None


def test_bare_assert_gets_a_message(tmp_path: Path) -> None:
    try:
        raise NotImplementedError
    except NotImplementedError as e:
        err = worker.describe_error(e, worker.Blamer(str(tmp_path / "k.py")))
    assert err["message"].startswith("NotImplementedError with no message, raised at ")
    assert "`raise NotImplementedError`" in err["message"]


def test_hang_line_reads_the_faulthandler_dump() -> None:
    dump = ('noise\nTimeout (0:00:03.500000)!\nThread 0x00007f (most recent call first):\n'
            '  File "/x/lib.py", line 7 in f\n  File "/x/k.py", line 4 in <module>\n'
            '  File "/w/worker.py", line 300 in run_module\n')
    assert hang_line(dump, "/x/k.py") == 3
    assert hang_line("no dump", "/x/k.py") is None
