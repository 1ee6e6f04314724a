"""`check` defers running `inspect` at Python 3.11 and 3.12 (launch.defer_inspect): `dataclasses`
imports it for a docstring-less class only (and, at 3.12, for `get_annotations`, which
`launch._DataclassesInspect` answers). Deferred or not, the classes and `inspect` are the same."""

from __future__ import annotations

import subprocess
import sys

import pytest

_SCRIPT = r"""
import sys
from wgmma_lsp import launch
deferred = launch.defer_inspect()
import dataclasses
inspect_module = sys.modules["inspect"]

@dataclasses.dataclass(frozen=True)
class Documented:
    "A docstring: dataclasses makes none, and never calls inspect."
    a: int
    b: str = "x"

assert Documented(1) == Documented(1, "x") and Documented(1).__doc__.startswith("A docstring")
ran_early = "signature" in vars(inspect_module)

@dataclasses.dataclass
class Undocumented:
    a: int
    b: "list[int]" = dataclasses.field(default_factory=list)

import inspect
assert inspect is inspect_module and "signature" in vars(inspect)
print(deferred, ran_early, Undocumented.__doc__, inspect.signature(Undocumented))
"""


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args, "-c", _SCRIPT], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_inspect_runs_only_when_dataclasses_needs_it() -> None:
    deferred, ran_early, rest = _run().split(" ", 2)
    assert (deferred, ran_early) == (("True", "False") if sys.version_info < (3, 13) else ("False", "True"))
    assert rest == "Undocumented(a: int, b: 'list[int]' = <factory>) (a: int, b: 'list[int]' = <factory>) -> None"


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="deferred at Python 3.11 and 3.12 only")
def test_a_fresh_check_never_runs_inspect(tmp_path) -> None:
    kernel = tmp_path / "k.py"
    kernel.write_text("x = 1\n", encoding="utf-8")
    code = ("import sys; sys.argv = ['wgmma-lsp', 'check', '--no-cache', sys.argv[1]]\n"
            "from wgmma_lsp import launch\nlaunch.exit_now = lambda rc: None\nlaunch.main()\n"
            "print('signature' in vars(sys.modules['inspect']), 'dis' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(kernel)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False False"


class _Plain:
    a: int
    b: "list[int]" = []


class _Inheriting(_Plain):
    pass


class _Own(_Plain):
    c: str


class _Empty:
    __annotations__ = {}


class _NotADict:
    __annotations__ = ("a",)


@pytest.mark.parametrize("cls", [_Plain, _Inheriting, _Own, _Empty, int, type, object])
def test_dataclasses_inspect_answers_get_annotations_as_inspect(cls) -> None:
    import inspect

    from wgmma_lsp.launch import _DataclassesInspect

    ours = _DataclassesInspect(inspect).get_annotations(cls)
    assert ours == inspect.get_annotations(cls) and type(ours) is dict
    if cls.__dict__.get("__annotations__") is not None:
        assert ours is not cls.__dict__["__annotations__"]  # a copy, as inspect's
    assert _DataclassesInspect(inspect).get_annotations(cls, eval_str=True) == \
        inspect.get_annotations(cls, eval_str=True)  # (strings evaluated: inspect's own)


def test_dataclasses_inspect_raises_as_inspect_and_hands_on_the_rest() -> None:
    import inspect

    from wgmma_lsp.launch import _DataclassesInspect

    shim = _DataclassesInspect(inspect)
    with pytest.raises(ValueError) as theirs:
        inspect.get_annotations(_NotADict)
    with pytest.raises(ValueError) as ours:
        shim.get_annotations(_NotADict)
    assert str(ours.value) == str(theirs.value)
    assert shim.get_annotations(len) == inspect.get_annotations(len)  # not a class: inspect's
    assert shim.signature is inspect.signature


@pytest.mark.skipif(sys.version_info >= (3, 13), reason="deferred at Python 3.11 and 3.12 only")
def test_a_fresh_check_of_a_jax_file_never_runs_inspect(tmp_path) -> None:
    """Every dataclass of the analysis made without running `inspect`, the same findings."""
    kernel = tmp_path / "k.py"
    kernel.write_text("import jax\nfrom jax.experimental import pallas as pl\n"
                      "from jax.experimental.pallas import mosaic_gpu as plgpu\n", encoding="utf-8")
    code = ("import sys; sys.argv = ['wgmma-lsp', 'check', '--no-cache', sys.argv[1]]\n"
            "from wgmma_lsp import launch\nlaunch.exit_now = lambda rc: None\nlaunch.main()\n"
            "print('signature' in vars(sys.modules['inspect']), 'dis' in sys.modules,\n"
            "      'wgmma_lsp.interpret.interp' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code, str(kernel)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "False False True"
