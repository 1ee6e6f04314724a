"""The public names of `pl` and `plgpu`, read from JAX's source (interpret/jax_source_read.py)
as Python binds them: explicit imports, definitions, assignments, `from m import *` (JAX 0.12.1
made `jax.experimental.pallas[.mosaic_gpu]` star-importing aliases of `jax.pallas[.mosaic_gpu]`)
and the `_deprecations` that `__getattr__` serves, merged ones included.

Checked against the imported JAX (whatever version this environment has) and against a stand-in
JAX laid out as 0.12.1 is, so that the layout is covered on every Python."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types
from pathlib import Path

import pytest

from wgmma_lsp import environment
from wgmma_lsp.interpret import jax_source_read
from wgmma_lsp.interpret.jax_api_types import Export


def _public_names(module: types.ModuleType) -> set[str]:
    """What `module.name` finds without `__getattr__`, submodules left out (they are attributes
    only once imported)."""
    return {n for n, v in vars(module).items()
            if not n.startswith("_") and not isinstance(v, types.ModuleType)}


PUBLIC = ["jax.experimental.pallas", "jax.experimental.pallas.mosaic_gpu", "jax.pallas", "jax.pallas.mosaic_gpu"]


def _import(dotted: str) -> types.ModuleType:
    """The module, or a skip where this JAX has none (`jax.pallas` is 0.12.1's)."""
    try:
        return importlib.import_module(dotted)
    except ModuleNotFoundError:
        pytest.skip(f"this JAX has no {dotted}")


@pytest.mark.parametrize("dotted", PUBLIC)
def test_the_exports_are_the_imported_modules_names(dotted: str) -> None:
    module = _import(dotted)
    jax_source_read.start_reading()
    try:
        table = jax_source_read._exports(dotted)
    finally:
        jax_source_read.stop_reading()
    assert table is not None
    ours = {n for n, e in table.items() if e.removed_message is None and not e.deprecated}
    assert ours == _public_names(module)


@pytest.mark.parametrize("dotted", PUBLIC)
def test_removed_names_raise_jaxs_own_message(dotted: str) -> None:
    module = _import(dotted)
    jax_source_read.start_reading()
    try:
        table = jax_source_read._exports(dotted) or {}
    finally:
        jax_source_read.stop_reading()
    removed = {n: e.removed_message for n, e in table.items() if e.removed_message is not None}
    for name, message in removed.items():
        with pytest.raises(AttributeError) as info:
            getattr(module, name)
        assert str(info.value) == message
    deprecated = [n for n, e in table.items() if e.deprecated]
    for name in deprecated:  # still served (with a DeprecationWarning, which JAX may give once)
        assert getattr(module, name) is not None


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


#: A stand-in JAX laid out as 0.12.1 is (never imported: `jax/__init__.py` would stop the test).
_JAX_0_12_1 = {
    "__init__.py": "raise SystemExit('jax was imported')\n",
    "_src/pallas/mosaic_gpu/core.py": "def kernel(body, out_shape): ...\nclass WGMMAAccumulatorRef: ...\n",
    "_src/pallas/core.py": "def core_map(mesh): ...\n",
    "pallas/__init__.py": (
        "from jax._src.pallas.core import core_map as _deprecated_core_map\n"
        "def pallas_call(kernel, out_shape): ...\n"
        "def _private(): ...\n"
        "_deprecations = {\n"
        "    'core_map': ('pl.core_map is deprecated.', _deprecated_core_map),\n"
        "    'dot': ('pl.dot was removed.', None),\n"
        "}\n"),
    "pallas/mosaic_gpu.py": (
        "from jax._src.pallas.mosaic_gpu.core import kernel as kernel\n"
        "from jax._src.pallas.mosaic_gpu.core import WGMMAAccumulatorRef as WGMMAAccumulatorRef\n"
        "ACC = WGMMAAccumulatorRef\n"
        "SMEM = MemorySpace.SMEM\n"),
    "experimental/pallas/__init__.py": (
        "from jax.pallas import *  # noqa: F403\n"
        "import jax.pallas as _pallas\n"
        "_deprecations = {**_pallas._deprecations, 'old': ('pl.old was removed.', None)}\n"),
    "experimental/pallas/mosaic_gpu.py": (
        "from jax.pallas.mosaic_gpu import *  # noqa: F403\n"
        "_deprecations = {'transpose_ref': ('plgpu.transpose_ref was removed.', None)}\n"),
    "experimental/pallas/limited.py": (
        "from jax.pallas.mosaic_gpu import *  # noqa: F403\n"),
    "pallas/limited_all.py": "__all__ = ['kernel']\nfrom jax._src.pallas.mosaic_gpu.core import kernel, WGMMAAccumulatorRef\n",
    "experimental/pallas/limited_all.py": "from jax.pallas.limited_all import *\n",
}


@pytest.fixture
def stand_in_jax(tmp_path: Path):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    site = next((tmp_path / "env").glob("lib/python3*/site-packages"))
    _write(site / "jax", _JAX_0_12_1)
    info = site / "jax-0.12.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: jax\nVersion: 0.12.1\n")
    before = environment.active()
    environment.activate(environment.discover(str(tmp_path / "env" / "bin" / "python"), "--python"))
    jax_source_read.start_reading()
    try:
        yield
    finally:
        jax_source_read.stop_reading()
        environment.activate(before)


def test_star_imports_and_merged_deprecations_are_followed(stand_in_jax) -> None:
    plgpu = jax_source_read._exports("jax.experimental.pallas.mosaic_gpu")
    assert plgpu is not None
    assert plgpu["kernel"] == Export("jax._src.pallas.mosaic_gpu.core", "kernel")
    # `ACC = WGMMAAccumulatorRef`: the class itself, whose signature is then found
    assert plgpu["ACC"] == Export("jax._src.pallas.mosaic_gpu.core", "WGMMAAccumulatorRef")
    assert plgpu["SMEM"] == Export("jax.pallas.mosaic_gpu", "SMEM")
    assert plgpu["transpose_ref"].removed_message == "plgpu.transpose_ref was removed."
    pl = jax_source_read._exports("jax.experimental.pallas")
    assert pl is not None
    assert pl["pallas_call"] == Export("jax.pallas", "pallas_call")
    assert "_private" not in pl
    # the deprecations of `jax.pallas`, merged into the alias's own with `**_pallas._deprecations`
    assert pl["dot"].removed_message == "pl.dot was removed."
    assert pl["old"].removed_message == "pl.old was removed."
    assert pl["core_map"] == Export("jax._src.pallas.core", "core_map", deprecated=True)


def test_a_star_import_takes_no_deprecations_and_honours_all(stand_in_jax) -> None:
    limited = jax_source_read._exports("jax.experimental.pallas.limited")
    assert limited is not None and "transpose_ref" not in limited and "kernel" in limited
    only = jax_source_read._exports("jax.experimental.pallas.limited_all")
    assert only is not None and set(only) == {"kernel"}


def test_a_missing_name_through_jax_pallas_gets_that_modules_attribute_error(tmp_path: Path) -> None:
    """`from jax.pallas import mosaic_gpu as plgpu` (0.12.1): WG091 names `jax.pallas.mosaic_gpu`,
    as JAX's `AttributeError` does there, with the same quick fix as the other spelling."""
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.ide.diagnostics import diagnostics

    real = _import("jax.pallas.mosaic_gpu")
    source = (
        "import jax.numpy as jnp\n"
        "from jax import pallas as pl\n"
        "from jax.pallas import mosaic_gpu as plgpu\n\n\n"
        "def kernel(a_ref, bt_ref, o_ref):\n"
        "  def body(acc_ref):\n"
        "    plgpu.wgmma(acc_ref, a_ref, plgpu.transpose_ref(bt_ref, (1, 0)))\n"
        "    o_ref[...] = acc_ref[...]\n\n"
        "  pl.run_scoped(body, plgpu.ACC((64, 128), jnp.float32))\n")
    found = [d for d in diagnostics(analyze(source, str(tmp_path / "k.py"))) if d.code == "WG091"]
    if hasattr(real, "transpose_ref"):
        assert found == []
        return
    with pytest.raises(AttributeError) as info:
        real.transpose_ref  # noqa: B018
    assert [(d.span.line + 1, d.message) for d in found] == [(8, str(info.value))]
    assert [f.title for f in found[0].fixes] == ["Transpose the ref itself: `bt_ref.transpose((1, 0))`"]
