"""`isinstance(v, collections.abc.Sequence)` and the other container ABCs, against CPython.

Library code branches on them: tokamax's ragged dot `bind` wraps `group_sizes` in its own
`GroupSizes` unless `isinstance(group_sizes, Sequence)`; with the answer unknown for an array,
the group sizes were lost and the SM80 kernel's group refs hovered `?`. For a Python value the
answer is CPython's for its type; for an array (JAX's, NumPy's) it is False — checked here
against real JAX and NumPy; for an object of a user class it is left to its bases.
"""

from __future__ import annotations

import collections.abc

import jax.numpy as jnp
import numpy as np

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.values import Const

ABCS = ("Sequence", "MutableSequence", "Mapping", "MutableMapping", "Set", "MutableSet")
VALUES = ("(1, 2)", "[1]", "{}", "{'a': 1}", "{1}", "frozenset()", "'text'", "b'x'", "1", "1.5", "None",
          "True", "jnp.zeros(3)", "np.zeros(3)", "jnp.zeros((2, 2), jnp.int32)")

HEADER = """\
import collections.abc
from collections.abc import Sequence, Mapping
import jax.numpy as jnp
import numpy as np
"""


def _program() -> tuple[str, list[str]]:
    lines, exprs = [], []
    for v in VALUES:
        for abc in ABCS:
            exprs.append(f"isinstance({v}, collections.abc.{abc})")
        exprs.append(f"isinstance({v}, Sequence)")
        exprs.append(f"isinstance({v}, Mapping)")
    lines = [f"r{i} = {e}" for i, e in enumerate(exprs)]
    return HEADER + "\n".join(lines) + "\n", exprs


def test_python_values_and_arrays_as_cpython_answers() -> None:
    source, exprs = _program()
    analysis = analyze(source, "abcs.py")
    offset = HEADER.count("\n")
    got: dict[int, list] = {}
    for span, rec in analysis.records.items():
        if rec.name is not None and rec.name.startswith("r") and span.col == 0:
            got.setdefault(span.line - offset, []).extend(rec.values)
    namespace = {"collections": collections, "Sequence": collections.abc.Sequence,
                 "Mapping": collections.abc.Mapping, "jnp": jnp, "np": np}
    for i, expr in enumerate(exprs):
        expected = eval(expr, namespace)  # noqa: S307 (our own text: CPython is the spec)
        assert got.get(i) == [Const(expected)], (expr, got.get(i), expected)


def test_a_user_class_is_left_to_its_bases() -> None:
    source = HEADER + """
class Rows(Sequence):
  def __getitem__(self, i):
    return i
  def __len__(self):
    return 0


class Plain:
  pass


a = isinstance(Rows(), Sequence)
b = isinstance(Plain(), Sequence)  # (Sequence.register(Plain) may follow: not known)
"""
    analysis = analyze(source, "user.py")
    values = {rec.name: rec.values for span, rec in analysis.records.items()
              if rec.name in ("a", "b") and span.col == 0}
    assert values["a"] == [Const(True)]
    assert all(not isinstance(v, Const) for v in values["b"])
