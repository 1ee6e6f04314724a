"""What a one-file `wgmma-lsp check` of a JAX kernel file does not import (CONTRIBUTING.md, Speed):
`typing` (~2-2.5 ms; its names are imported for type checkers only), the race and role analyses'
reports for a kernel that logged nothing (models/hazard_ops.py, hazard_roles.py) and, at Python
3.11 and 3.12, the code of `inspect` (launch.defer_inspect). The findings are checked elsewhere; here, only
that the file was analysed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

_CHECK = ("import sys; sys.argv = ['wgmma-lsp', 'check', '--no-cache', '--format', 'json', sys.argv[1]]\n"
          "from wgmma_lsp import launch\nlaunch.exit_now = lambda rc: None\nrc = launch.main()\n"
          "print()\nprint(rc, 'typing' in sys.modules, 'wgmma_lsp.interpret.interp' in sys.modules,\n"
          "      'wgmma_lsp.hazards.report' in sys.modules, 'wgmma_lsp.hazards.roles_report' in sys.modules)")

_KERNEL = '''\
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(a_ref, b_ref, o_ref):
    o_ref[...] = a_ref[...] + b_ref[...]


def add(a, b):
    return pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype))(a, b)
'''


def test_a_fresh_check_of_a_jax_file_never_imports_typing(tmp_path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text(_KERNEL, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}  # this checkout
    done = subprocess.run([sys.executable, "-c", _CHECK, str(kernel)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    # (a kernel that logged nothing for the race analysis: its reports' modules not imported)
    assert done.stdout.strip().splitlines()[-1].split() == ["0", "False", "True", "False", "False"], \
        done.stdout


_NT = '''
from wgmma_lsp.named_tuple import NamedTuple as Ours
from typing import NamedTuple as Typing

def make(base):
    class P(base):
        """A point."""
        x: int
        y: "int | None" = None

        def norm(self) -> int:
            return abs(self.x) + abs(self.y or 0)

        @property
        def swapped(self):
            return type(self)(self.y, self.x)
    return P
'''


def test_named_tuple_makes_the_class_typing_makes() -> None:
    ns: dict = {"__name__": "tests.nt"}
    exec(_NT, ns)
    ours, theirs = ns["make"](ns["Ours"]), ns["make"](ns["Typing"])
    for cls in (ours, theirs):
        p = cls(3, -4)
        assert (p, p.x, p.y, p.norm(), p.swapped, repr(p), cls(1), cls._fields, cls._field_defaults) == \
            ((3, -4), 3, -4, 7, (-4, 3), "P(x=3, y=-4)", (1, None), ("x", "y"), {"y": None})
        assert p._replace(x=1) == (1, -4) and p._asdict() == {"x": 3, "y": -4}
    assert ours.__mro__[1:] == theirs.__mro__[1:] == (tuple, object)
    assert (ours.__doc__, ours.__module__, ours.__qualname__) == \
        (theirs.__doc__, theirs.__module__, theirs.__qualname__)
    assert set(vars(ours)) == set(vars(theirs))
    assert not hasattr(ours(1, 2), "__dict__")
    with pytest.raises(TypeError):
        exec("class Q(Ours):\n    a: int = 0\n    b: int\n", ns)
    with pytest.raises(AttributeError):
        exec("class R(Ours):\n    a: int\n    def _replace(self): pass\n", ns)
