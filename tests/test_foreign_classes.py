"""`isinstance` against classes of third-party packages the program does not read (`qwix.QArray`),
and against `jax.Array`: decided where the class's source proves the answer, as CPython gives it.

The third-party package here is a fixture written to a temporary site-packages folder; each
snippet runs through the analyzer and through CPython (which imports the fixture package), and
wherever the analyzer claims an answer it must be CPython's."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret import foreign_classes
from wgmma_lsp.interpret.values import Const

PACKAGE = {
    "extpkg/__init__.py": """
        from extpkg._core.arrays import Plain, Frozen, Derived
        from extpkg._core import arrays as _arrays
        from extpkg._core.abcs import Abstract, Meta, Checked, Proto, Decorated
        Alias = _arrays.Plain
        try:
            from extpkg._core.arrays import Plain as Maybe
        except ImportError:
            Maybe = None
        """,
    "extpkg/_core/__init__.py": "",
    "extpkg/_core/arrays.py": """
        import dataclasses
        import functools
        from typing import Generic, TypeVar

        T = TypeVar("T")

        class Plain:
            pass

        @functools.total_ordering
        @dataclasses.dataclass(frozen=True)
        class Frozen(Generic[T]):
            x: int = 0
            def __lt__(self, other):
                return self.x < other.x

        class Derived(Plain, Frozen):
            pass
        """,
    "extpkg/_core/abcs.py": """
        import abc
        import typing

        def deco(cls):
            return cls

        class Abstract(abc.ABC):
            pass

        class _M(type):
            def __instancecheck__(cls, obj):
                return True

        class Meta(metaclass=_M):
            pass

        class Checked:
            @classmethod
            def __instancecheck__(cls, obj):
                return True

        @typing.runtime_checkable
        class Proto(typing.Protocol):
            pass

        @deco
        class Decorated:
            pass
        """,
}

VALUES = {
    "a tuple": "(1, 2)",
    "an int": "3",
    "a list": "[1.0]",
    "a dict": "{'a': 1}",
    "None": "None",
    "a jax array": "jnp.zeros((2, 2), jnp.float32)",
    "a ShapeDtypeStruct": "jax.ShapeDtypeStruct((2,), jnp.float32)",
}

CLASSES = ["Plain", "Frozen", "Derived", "Alias", "Abstract", "Meta", "Checked", "Proto", "Decorated", "Maybe"]
DECIDED = {"Plain", "Frozen", "Derived", "Alias"}  # the plain ones (metaclass `type`, proven)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "site-packages"
    for rel, text in PACKAGE.items():
        f = root / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    monkeypatch.setattr(foreign_classes, "site_dirs", lambda: (str(root),))
    return root


def _snippet() -> str:
    lines = ["import jax", "import jax.numpy as jnp", "import extpkg", "", "def probe():"]
    for i, expr in enumerate(VALUES.values()):
        for cls in CLASSES:
            lines.append(f"  r_{i}_{cls} = isinstance({expr}, extpkg.{cls})")
    lines.append("  return locals()")
    return "\n".join(lines) + "\n"


def _cpython(site: Path, source: str) -> dict[str, bool]:
    program = source + "\nfor k, v in probe().items():\n  if k.startswith('r_'): print(k, v)\n"
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(site), "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"})
    return {k: v == "True" for k, v in (line.split() for line in out.stdout.splitlines())}


def _analyzer(source: str) -> dict[str, bool | None]:
    analysis = analyze(source, "probe.py")
    out: dict[str, bool | None] = {}
    for span, rec in analysis.records.items():
        if rec.kind == "store" and rec.name and rec.name.startswith("r_"):
            values = {v.value if isinstance(v, Const) else None for v in rec.values}
            out[rec.name] = values.pop() if len(values) == 1 else None
    return out


def test_isinstance_of_a_plain_third_party_class_is_cpythons_answer(site: Path) -> None:
    source = _snippet()
    expected = _cpython(site, source)
    got = _analyzer(source)
    assert set(got) == set(expected)
    for name, answer in got.items():
        cls = name.split("_", 2)[2]
        if cls in DECIDED:
            assert answer is expected[name] is False, name  # decided: CPython's answer
        else:
            assert answer is None, name  # its class decides isinstance itself, or is unproven


def test_an_instance_of_a_user_class_derived_from_it_is_one(site: Path) -> None:
    source = """
import extpkg

class Mine(extpkg.Plain):
  pass

class Other:
  pass

def probe():
  r_yes = isinstance(Mine(), extpkg.Plain)
  r_no = isinstance(Other(), extpkg.Plain)
  r_unknown = isinstance(Mine(), extpkg.Frozen)
"""
    assert _analyzer(source) == {"r_yes": True, "r_no": False, "r_unknown": None}
    assert _cpython(site, source + "  return locals()\n") == {"r_yes": True, "r_no": False, "r_unknown": False}


def test_a_package_that_is_not_installed_decides_nothing(site: Path) -> None:
    got = _analyzer("import notinstalled\n\ndef probe():\n  r_x = isinstance((1,), notinstalled.Thing)\n")
    assert got == {"r_x": None}


def test_arrays_made_by_jax_are_jax_arrays_and_numpy_ones_are_not_claimed() -> None:
    source = """
import jax
import jax.numpy as jnp
import numpy as np

def probe():
  host = np.zeros((2,), np.float32)
  r_jnp = isinstance(jnp.zeros((2,)), jax.Array)
  r_random = isinstance(jax.random.normal(jax.random.key(0), (2,)), jax.Array)
  r_asarray = isinstance(jnp.asarray(host), jax.Array)
  r_asarray_np = isinstance(jnp.asarray(host), np.ndarray)
  r_astype = isinstance(jnp.zeros((2,)).astype(jnp.bfloat16), jax.Array)
  r_host = isinstance(host, jax.Array)
  r_host_astype = isinstance(host.astype(np.float16), jax.Array)
  return locals()
"""
    expected = _cpython(Path("/nonexistent"), source)
    got = _analyzer(source)
    assert got["r_host"] is None and got["r_host_astype"] is None  # NumPy's: not claimed
    for name in ("r_jnp", "r_random", "r_asarray", "r_asarray_np", "r_astype"):
        assert got[name] is expected[name], name


def test_a_user_class_derived_from_a_plain_jax_class_has_no_jax_object_for_instance() -> None:
    # tokamax's `class BatchedShapeDtype(jax.ShapeDtypeStruct)`: a ShapeDtypeStruct made by JAX
    # is none (ShapeDtypeStruct's source proves its metaclass is `type`); `jax.Array` is an ABC:
    # a class derived from it could be anything's (`register`), so nothing is claimed.
    source = """
import jax
import jax.numpy as jnp

class Batched(jax.ShapeDtypeStruct):
  pass

class MyArray(jax.Array):
  pass

def probe():
  sds = jax.ShapeDtypeStruct((2,), jnp.float32)
  r_batched = isinstance(sds, Batched)
  r_array = isinstance(jnp.zeros((2,)), MyArray)
  r_number = isinstance(3, Batched)
  return locals()
"""
    got = _analyzer(source)
    assert got == {"r_batched": False, "r_array": None, "r_number": False}
    expected = _cpython(Path("/nonexistent"), source)
    assert expected["r_batched"] is False and expected["r_number"] is False
