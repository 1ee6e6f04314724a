"""A program's values as CPython and JAX compute them, and as the interpreter claims them, leaf by
leaf: Python values must be equal, arrays must have JAX's dtype and shape (`float32[8,16]`).
Shared by the tests of pytrees, autodiff and vmap (test_python_pytrees.py, test_autodiff.py)."""

from __future__ import annotations

from typing import Any

from test_python_calls import interpreted, run_cpython

from wgmma_lsp.interpret.values import ArrayVal, Const, DictVal, TupleVal, Value


class NotClaimed(LookupError):
    """The interpreter claims nothing for (a part of) the value."""


def _claimed(v: Value) -> Any:
    if isinstance(v, ArrayVal):
        if v.shape is None or not all(isinstance(d, int) for d in v.shape):
            raise NotClaimed(v.describe())
        return v.describe()
    if isinstance(v, Const):
        return v.value
    if isinstance(v, TupleVal) and not v.spoiled:
        items = [_claimed(i) for i in v.items]
        return items if v.is_list else tuple(items)
    if isinstance(v, DictVal) and not v.spoiled:
        return {k: _claimed(i) for k, i in v.items}
    raise NotClaimed(v.describe())


def _actual(x: Any) -> Any:
    if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, (int, float, bool)):
        return f"{x.dtype}[{','.join(str(d) for d in x.shape)}]"
    if isinstance(x, list):
        return [_actual(i) for i in x]
    if isinstance(x, tuple) and type(x) is tuple:
        return tuple(_actual(i) for i in x)
    if isinstance(x, dict):
        return {k: _actual(i) for k, i in x.items()}
    return x


def agree(source: str, *names: str) -> dict[str, Any]:
    """Each of `names` is claimed whole by the interpreter, and CPython (with JAX) agrees; the
    values, for further checks."""
    namespace = run_cpython(source)
    got = interpreted(source)
    out = {}
    for name in names:
        assert name in got, name
        try:
            claimed = _claimed(got[name])
        except NotClaimed as e:
            raise AssertionError(f"{name}: the interpreter claims nothing ({e})") from None
        actual = _actual(namespace[name])
        assert claimed == actual, (name, claimed, actual)
        out[name] = claimed
    return out


def claims(source: str, name: str) -> Any | None:
    """What the interpreter claims for `name` (None when it claims nothing whole)."""
    try:
        return _claimed(interpreted(source)[name])
    except NotClaimed:
        return None
