"""The bundled examples say what they claim: seed_errors.py has the three seed errors (as JAX
raises them), seed_fixed.py has none."""

from __future__ import annotations

from pathlib import Path

from jax_oracle import trace_file
from wgmma_lsp.analysis import analyze
from wgmma_lsp.cli import main
from wgmma_lsp.ide.diagnostics import diagnostics

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_seed_errors_agree_with_jax() -> None:
    path = EXAMPLES / "seed_errors.py"
    static = {(d.span.line + 1, d.message) for d in diagnostics(analyze(path.read_text(), str(path)))}
    jax_says = {(v.line, v.message) for v in trace_file(path)}
    assert len(static) == 3
    assert static == jax_says


def test_seed_fixed_is_clean() -> None:
    path = EXAMPLES / "seed_fixed.py"
    assert diagnostics(analyze(path.read_text(), str(path))) == []
    # `plgpu.kernel`: lowered with Mosaic GPU by every supported JAX
    verdicts = trace_file(path, lower=True)
    assert verdicts and all(v.message is None for v in verdicts)


def test_cli_check_and_explain(capsys) -> None:
    assert main(["check", str(EXAMPLES / "seed_errors.py")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith(":23:20: WG001 Accumulator dtype float32 does not match value dtype bfloat16")
    assert main(["check", "--format", "json", str(EXAMPLES / "seed_fixed.py")]) == 0
    assert capsys.readouterr().out.strip() == "[]"
    assert main(["explain", "WG002"]) == 0
    assert "WG002 accumulator-shape\n=====" in capsys.readouterr().out
    assert main(["explain", "accumulator-dtype"]) == 0
    assert main(["explain", "WG999"]) == 2


def test_cli_survives_bad_input(tmp_path: Path, capsys) -> None:
    (tmp_path / "latin1.py").write_bytes(b"# caf\xe9\nx = (\n")  # not UTF-8: WG901
    (tmp_path / "empty.py").write_text("")
    assert main(["check", str(tmp_path)]) == 1
    assert "WG901" in capsys.readouterr().out
    assert main(["check", str(tmp_path / "empty.py")]) == 0
    assert main(["check", str(tmp_path / "missing.py")]) == 1


def test_jax_pallas_is_the_same_api(tmp_path: Path) -> None:
    """`from jax import pallas as pl` / `from jax.pallas import mosaic_gpu as plgpu` (JAX 0.12.1's
    preferred paths; `jax.experimental.pallas[.mosaic_gpu]` became their aliases): the same
    findings, and on a JAX that has `jax.pallas`, the same verdicts from JAX."""
    from wgmma_lsp.interpret.jax_version import installed

    source = (EXAMPLES / "seed_errors.py").read_text()
    spelled = (source.replace("from jax.experimental import pallas as pl", "from jax import pallas as pl")
               .replace("from jax.experimental.pallas import mosaic_gpu as plgpu",
                        "from jax.pallas import mosaic_gpu as plgpu"))
    assert spelled != source
    path = tmp_path / "seed_errors_jax_pallas.py"
    path.write_text(spelled)
    ours = {(d.span.line + 1, d.code, d.message) for d in diagnostics(analyze(spelled, str(path)))}
    imports = {f for f in ours if f[1] in ("WG110", "WG111")}
    assert ours - imports == {(d.span.line + 1, d.code, d.message)
                              for d in diagnostics(analyze(source, str(EXAMPLES / "seed_errors.py")))}
    version = installed()
    # Before 0.12.1 the imports themselves fail, as Python says (tests/test_import_errors.py).
    assert {code for _, code, _ in imports} == (set() if version is None or version >= (0, 12, 1)
                                               else {"WG110", "WG111"})
    if version is not None and version >= (0, 12, 1):
        assert {(line, msg) for line, _, msg in ours} == {(v.line, v.message) for v in trace_file(path)}
