"""Hover contexts from a library's autotuning configs (entry/tuning_contexts.py): code behind a
config field that every config the module picks shares — the `else:` of `if config.layout ==
Layout.ROWS:` — hovers with the values of one of the module's autotuning configs, labelled with
it, and reports nothing: an autotuner tries configs JAX rejects (here one JAX refuses, checked
against real JAX) and skips them.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from test_config_contexts import jax_verdicts, line_of

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover import hover
from wgmma_lsp.ide.model import Severity

LIBRARY = textwrap.dedent('''\
    """A kernel library module: its op picks the config, its autotuner tries the others."""
    import dataclasses
    import enum

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    TRANSFORMS = (plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128))


    class Layout(enum.Enum):
      ROWS = 1
      COLS = 2


    @dataclasses.dataclass(frozen=True)
    class Config:
      tile_m: int = 64
      tile_n: int = 64
      layout: Layout = Layout.ROWS


    def get_heuristics_config(ba) -> Config:
      del ba
      return Config()


    def get_autotuning_configs(ba) -> set[Config]:
      del ba
      configs = set()
      for tile_m in (64, 128):
        for layout in Layout:
          configs.add(Config(tile_m=tile_m, layout=layout))
      return configs


    def matmul(a, b, *, config: Config):
      def kernel(a_ref, b_ref, o_ref):
        def body(acc_ref):
          if config.layout == Layout.ROWS:
            plgpu.wgmma(acc_ref, a_ref, b_ref)
          else:
            tile = max(config.tile_m, config.tile_n)  # (no symbolic value: nothing known, no hover)

            def cols_body(cols_smem):
              cols_smem[...] = jnp.zeros((tile, config.tile_n), jnp.float32)
              plgpu.wgmma(acc_ref, a_ref, b_ref)

            pl.run_scoped(cols_body, plgpu.SMEM((tile, config.tile_n), jnp.float32))
          if config.tile_m > config.tile_n:
            acc_ref[...] = acc_ref[...].T  # a transposed 128x64 tile: JAX rejects this config
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


def _line(source: str, text: str) -> int:
    """0-based line of the one line holding `text`."""
    return line_of(source, text) - 1


def test_a_branch_no_picked_config_takes_hovers_with_an_autotuning_config(tmp_path: Path) -> None:
    path = tmp_path / "lib.py"
    path.write_text(LIBRARY)
    analysis = analyze(LIBRARY, str(path))
    line = _line(LIBRARY, "def cols_body(cols_smem)")
    shown = hover(analysis, line, LIBRARY.splitlines()[line].index("cols_smem"))
    assert shown is not None
    # the autotuning config setting the most fields to values no picked config had: 128, COLS
    assert "`Ref<smem>{float32[128,64]}` (with tile_m=128, layout=Layout.COLS, from " \
           "matmul(config=one of get_autotuning_configs(...)) at line" in shown.markdown, shown.markdown
    # code the picked configs reach keeps their values
    line = _line(LIBRARY, "o_ref[...] = acc_ref[...]")
    shown = hover(analysis, line, LIBRARY.splitlines()[line].index("acc_ref"))
    assert shown is not None and "Accumulator{float32[64,64]}" in shown.markdown
    assert "get_autotuning_configs" not in shown.markdown


def test_an_autotuning_config_jax_rejects_is_not_reported(tmp_path: Path) -> None:
    path = tmp_path / "lib.py"
    path.write_text(LIBRARY)
    analysis = analyze(LIBRARY, str(path))
    line = _line(LIBRARY, "def cols_body(cols_smem)")
    assert hover(analysis, line, LIBRARY.splitlines()[line].index("cols_smem")) is not None  # (hover pass ran)
    assert [d for d in diagnostics(analysis) if d.severity in (Severity.ERROR, Severity.WARNING)] == []
    # JAX: the picked config traces; the autotuning config the hover used is rejected
    calls = {
        "picked": "(lambda a, b: matmul(a, b, config=get_heuristics_config(None)))(bf16[64,64], bf16[64,64])",
        "tuning": "(lambda a, b: matmul(a, b, config=Config(tile_m=128, layout=Layout.COLS)))"
                  "(bf16[128,64], bf16[64,64])",
    }
    verdicts = jax_verdicts(tmp_path, LIBRARY, calls)
    assert verdicts["picked"] == set()
    assert [ln for ln, _ in verdicts["tuning"]] == [_line(LIBRARY, "acc_ref[...].T") + 1], verdicts
