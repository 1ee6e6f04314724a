"""Contexts for library code (entry/config_contexts.py): a kernel function nothing in its file
calls, taking a config class, runs with the configs its module picks — what a
`get_heuristics_config`-style function returns, and the class's defaults — each a context of its
own. A finding proven in a context is JAX's error for that config (checked against real JAX
tracing the kernel with it), named by the context; a config Python would reject is no context.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from jax_oracle import trace_file

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.model import Severity

LIBRARY = textwrap.dedent('''\
    """A kernel library module: nothing here calls `matmul`; its op picks the config."""
    import dataclasses

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    TRANSFORMS = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


    @dataclasses.dataclass(frozen=True)
    class Config:
      tile_m: int = 128
      tile_n: int = 64
    POST_INIT

    def get_heuristics_config(ba) -> Config:
      del ba
      return Config(tile_m=64, tile_n=64)


    def matmul(a, b, *, config: Config):
      def kernel(a_ref, b_ref, o_ref):
        def body(acc_ref):
          plgpu.wgmma(acc_ref, a_ref, b_ref)
          if config.tile_m > config.tile_n:
            acc_ref[...] = acc_ref[...].T  # the transposed tile: wrong unless square
          STORE
          o_ref[...] = acc_ref[...]

        pl.run_scoped(body, plgpu.ACC((config.tile_m, config.tile_n), jnp.float32))

      def body(a_gmem, b_gmem, o_gmem, a_smem, b_smem, o_smem, barrier):
        plgpu.copy_gmem_to_smem(a_gmem, a_smem, barrier)
        plgpu.copy_gmem_to_smem(b_gmem, b_smem, barrier)
        plgpu.barrier_wait(barrier)
        kernel(a_smem, b_smem, o_smem)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(o_smem, o_gmem)
        plgpu.wait_smem_to_gmem(0)

      out_shape = (config.tile_m, config.tile_n)
      return plgpu.kernel(  # a, b copied into tiled, swizzled SMEM (how WGMMA reads them)
          body,
          out_type=jax.ShapeDtypeStruct(out_shape, jnp.float32),
          scratch_types=[
              plgpu.SMEM(a.shape, a.dtype, transforms=TRANSFORMS),
              plgpu.SMEM(b.shape, b.dtype, transforms=TRANSFORMS),
              plgpu.SMEM(out_shape, jnp.float32),
              plgpu.Barrier(num_arrivals=2),
          ],
      )(a, b)
    ''')

#: The calls the library's op would make, for JAX: each config with operands that fit it.
JAX_CALLS = {
    "heuristics": "(lambda a, b: matmul(a, b, config=get_heuristics_config(None)))(bf16[64,64], bf16[64,64])",
    "defaults": "(lambda a, b: matmul(a, b, config=Config()))(bf16[128,64], bf16[64,64])",
}


def library(tmp_path: Path, store: str = "pass", post_init: str = "") -> tuple[Path, str]:
    source = LIBRARY.replace("STORE", store).replace("POST_INIT", textwrap.indent(post_init, "  "))
    path = tmp_path / "lib.py"
    path.write_text(source)
    return path, source


def line_of(source: str, text: str) -> int:
    (line,) = [i for i, t in enumerate(source.splitlines(), 1) if text in t]
    return line


def reported(path: Path, source: str) -> list[tuple[int, str, Severity, str]]:
    analysis = analyze(source, str(path))
    return sorted((d.span.line + 1, d.code, d.severity, d.message) for d in diagnostics(analysis)
                  if d.severity in (Severity.ERROR, Severity.WARNING))


def jax_verdicts(tmp_path: Path, source: str, calls: dict[str, str] | None = None
                 ) -> dict[str, set[tuple[int | None, str]]]:
    """What JAX raises, and where, for each config the library picks (`calls`: for other
    calls of the library's, by name)."""
    out = {}
    for name, call in (JAX_CALLS if calls is None else calls).items():
        traced = tmp_path / f"traced_{name}.py"
        traced.write_text(source + f"\n# wgmma-lsp: trace {call}\n")
        out[name] = {(v.line, v.message) for v in trace_file(traced) if v.message is not None}
    return out


def test_a_finding_in_one_config_is_jaxs_error_named_by_that_config(tmp_path: Path) -> None:
    """The defaults (128x64) store a transposed tile, the heuristics' config (64x64) does not:
    an error, as JAX raises it for the defaults at that line, naming the defaults' context."""
    path, source = library(tmp_path)
    line = line_of(source, "acc_ref[...] = acc_ref[...].T")
    got = reported(path, source)
    assert [(ln, code, sev) for ln, code, sev, _ in got] == [(line, "WG002", Severity.ERROR)]
    message = got[0][3]
    assert message.endswith(f"(with tile_m=128, tile_n=64, from matmul(config=Config()) at line "
                            f"{line_of(source, 'def matmul')})")
    jax = jax_verdicts(tmp_path, source)
    assert jax["heuristics"] == set()
    assert jax["defaults"] == {(line, message[:message.index(" (with")])}


def test_a_finding_in_every_config_is_an_error_with_no_context_named(tmp_path: Path) -> None:
    path, source = library(tmp_path, store="acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)")
    source = source.replace("acc_ref[...] = acc_ref[...].T", "pass")
    path.write_text(source)
    line = line_of(source, "astype(jnp.bfloat16)")
    got = [g for g in reported(path, source) if g[0] == line]
    assert [(code, sev) for _, code, sev, _ in got] == [("WG001", Severity.ERROR)]
    assert " (with " not in got[0][3] and " from " not in got[0][3]
    jax = jax_verdicts(tmp_path, source)
    assert (line, got[0][3]) in jax["heuristics"] and (line, got[0][3]) in jax["defaults"]


def test_hover_names_the_config_context(tmp_path: Path) -> None:
    path, source = library(tmp_path)
    analysis = analyze(source, str(path))
    line = line_of(source, "o_ref[...] = acc_ref[...]") - 1
    col = source.splitlines()[line].index("acc_ref")
    shown = hover(analysis, line, col)
    assert shown is not None
    assert "Accumulator{float32[64,64]}" in shown.markdown
    assert "from matmul(config=get_heuristics_config(...)) at line" in shown.markdown


def test_defaults_python_rejects_are_no_context(tmp_path: Path) -> None:
    """`Config()` raises in `__post_init__` (tokamax's SM100 attention config does, for its own
    defaults): no context is made of it, so the defaults' WG002 is not claimed."""
    post_init = ("\ndef __post_init__(self):\n  if self.tile_m > self.tile_n:\n"
                 "    raise ValueError('tile_m must not exceed tile_n')\n")
    path, source = library(tmp_path, post_init=post_init)
    assert reported(path, source) == []


def test_without_a_config_the_kernel_is_analysed_with_nothing_known(tmp_path: Path) -> None:
    """No provider, no defaults (a field without one): as before, nothing known about the config,
    the transposed store a warning that names the condition."""
    path, source = library(tmp_path)
    source = source.replace("tile_m: int = 128", "tile_m: int").replace("-> Config:", ":")
    path.write_text(source)
    got = [g for g in reported(path, source) if g[1] == "WG002"]
    assert [(code, sev) for _, code, sev, _ in got] == [("WG002", Severity.WARNING)]


def test_each_config_a_heuristic_returns_is_a_context(tmp_path: Path) -> None:
    """A heuristic that picks by its arguments returns one config per branch: each is a context
    (a join of them would know no size). The class has no defaults here: the 128x64 config the
    heuristic returns for big inputs is the one JAX rejects."""
    path, source = library(tmp_path)
    source = source.replace("tile_m: int = 128\n  tile_n: int = 64", "tile_m: int\n  tile_n: int") \
        .replace("  del ba\n  return Config(tile_m=64, tile_n=64)",
                 "  if ba.m >= 1024:\n    return Config(tile_m=128, tile_n=64)\n"
                 "  return Config(tile_m=64, tile_n=64)")
    path.write_text(source)
    line = line_of(source, "acc_ref[...] = acc_ref[...].T")
    got = reported(path, source)
    assert [(ln, code, sev) for ln, code, sev, _ in got] == [(line, "WG002", Severity.ERROR)]
    assert got[0][3].endswith("(with tile_m=128, tile_n=64, from matmul(config=get_heuristics_config(...)) "
                              f"at line {line_of(source, 'def get_heuristics_config')})")
    traced = tmp_path / "traced_big.py"
    traced.write_text(source + "\n# wgmma-lsp: trace (lambda a, b: matmul(a, b, config=Config(128, 64)))"
                      "(bf16[128,64], bf16[64,64])\n")
    message = got[0][3][:got[0][3].index(" (with")]
    assert {(v.line, v.message) for v in trace_file(traced) if v.message is not None} == {(line, message)}


def test_configs_beyond_the_budget_are_said_in_a_note(tmp_path: Path) -> None:
    """Configs share the step budget of sweeps and test parameter sets (sweep_budget.py): in the
    editor's budget mode the first always runs and the others while the budget lasts, and the
    ones left out are said as a WG903 note at the function, never dropped silently; `wgmma-lsp
    check`'s mode ("all") runs each, up to MAX_CONFIG_CONTEXTS."""
    from wgmma_lsp.entry.config_contexts import MAX_CONFIG_CONTEXTS
    from wgmma_lsp.interpret.sweep_budget import sweep_mode

    branches = "".join(f"  if ba.m == {i}:\n    return Config(tile_m=64, tile_n={64 * (i + 1)})\n"
                       for i in range(MAX_CONFIG_CONTEXTS + 1))
    path, source = library(tmp_path)
    source = source.replace("  del ba\n  return Config(tile_m=64, tile_n=64)", branches + "  raise ValueError")
    path.write_text(source)
    total = MAX_CONFIG_CONTEXTS + 2  # the heuristic's returns and the defaults
    note = re.compile(rf"checked (\d+) of {total} configs `matmul` is given here; the analysis budget "
                      "left out the others")
    for mode in ("budget", "all"):
        with sweep_mode(mode):
            analysis = analyze(source, str(path))
        notes = [(d.span.line + 1, note.fullmatch(d.message)) for d in diagnostics(analysis) if d.code == "WG903"]
        assert [ln for ln, m in notes] == [line_of(source, "def matmul")] and all(notes[0]), (mode, notes)
        ran = int(notes[0][1].group(1))
        assert (1 <= ran < MAX_CONFIG_CONTEXTS) if mode == "budget" else ran == MAX_CONFIG_CONTEXTS, (mode, ran)
