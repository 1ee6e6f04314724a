"""Folder walks survive symlink loops: each folder is walked once, known by (device, inode).

A folder holding `up -> ..` and `self -> .` used to make `wgmma-lsp check DIR` walk an endless,
exponentially growing tree of names (34,801 folders in 25 s, no output).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from wgmma_lsp.discovery import python_files

WGMMA_LSP = Path(sys.executable).with_name("wgmma-lsp")

ONE_ERROR = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(a_ref, b_ref, o_ref):
  def body(acc_ref):
    plgpu.wgmma(acc_ref, a_ref, b_ref)
    acc_ref[...] = acc_ref[...].astype(jnp.bfloat16)  # the accumulator holds float32
    o_ref[...] = acc_ref[...].astype(o_ref.dtype)

  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))


def matmul(a, b):
  return pl.pallas_call(
      kernel,
      out_shape=jax.ShapeDtypeStruct((64, 128), jnp.bfloat16),
      in_specs=[plgpu.BlockSpec(memory_space=plgpu.SMEM, transforms=(
          plgpu.TilingTransform((8, 64)), plgpu.SwizzleTransform(128)))] * 2,
      out_specs=pl.BlockSpec(memory_space=plgpu.SMEM),
  )(a, b)


# wgmma-lsp: trace matmul(bf16[64,64], bf16[64,128])
'''


def _looped_folder(root: Path) -> Path:
    """root/pkg/kernel.py with pkg/up -> .. and pkg/self -> . (and root/again -> pkg)."""
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "kernel.py").write_text(ONE_ERROR)
    os.symlink("..", pkg / "up")
    os.symlink(".", pkg / "self")
    os.symlink("pkg", root / "again")
    return pkg


def test_a_symlink_loop_is_walked_once(tmp_path: Path) -> None:
    pkg = _looped_folder(tmp_path)
    found = [f.path for f in python_files([tmp_path])]
    assert found == [pkg / "kernel.py"] or found == [tmp_path / "again" / "kernel.py"]


def test_a_link_to_a_walked_folder_is_not_walked_again(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.py").write_text("")
    os.symlink("a", tmp_path / "b")  # a second name for a folder walked already
    assert [f.path for f in python_files([tmp_path])] == [tmp_path / "a" / "x.py"]


def test_a_folder_named_twice_is_walked_once(tmp_path: Path) -> None:
    (tmp_path / "x.py").write_text("")
    assert [f.path for f in python_files([tmp_path, tmp_path / "."])] == [tmp_path / "x.py"]


def test_check_of_a_looped_folder_finishes_and_reports_the_error_once(tmp_path: Path) -> None:
    pkg = _looped_folder(tmp_path)
    start = time.monotonic()
    proc = subprocess.run([str(WGMMA_LSP), "check", "--no-progress", str(pkg)],
                          capture_output=True, text=True, timeout=10)
    elapsed = time.monotonic() - start
    print(f"check of a symlink-loop folder: {elapsed:.2f} s")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reported = [line for line in proc.stdout.splitlines() if ": WG0" in line]
    assert len(reported) == 1, proc.stdout
    assert reported[0].startswith(f"{pkg / 'kernel.py'}:10:"), reported
