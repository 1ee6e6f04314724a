"""`check` defers running `inspect` at Python 3.11 (launch.defer_inspect): `dataclasses` imports
it for a docstring-less class only. Deferred or not, the classes and `inspect` are the same."""

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
    assert (deferred, ran_early) == (("True", "False") if sys.version_info < (3, 12) else ("False", "True"))
    assert rest == "Undocumented(a: int, b: 'list[int]' = <factory>) (a: int, b: 'list[int]' = <factory>) -> None"


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="deferred at Python 3.11 only")
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
