"""A list, dict or set changed by a method the interpreter does not model is not known after it
(CPython is the spec; interpret/mutation.py).

The interpreter follows the container methods it models exactly (`append`, `pop`, `update`, ...;
models/containers.py, models/sets.py). Any other method may change its object (`d.popitem()`,
`s.clear()`, `xs.__setitem__(0, 5)`), and so may a container's method called through its class
(`list.sort(xs)`): before, the object was still claimed as it was, a wrong value for each program
below. Each runs under CPython and through the analysis (python_programs.check_main).
"""

from __future__ import annotations

import pytest
from python_programs import Tally, check_main

CHANGES = {
    "dict.popitem": ('d = {"k": 1}', "d.popitem()", "n = len(d)"),
    "set.clear": ("s = {1}", "s.clear()", "n = len(s)"),
    "set.pop": ("s = {1, 2}", "s.pop()", "n = len(s)"),
    "set.remove": ("s = {1, 2}", "s.remove(1)", "n = len(s)"),
    "set.difference_update": ("s = {1, 2}", "s.difference_update({1})", "n = len(s)"),
    "set.intersection_update": ("s = {1, 2}", "s.intersection_update({1})", "n = len(s)"),
    "list.__setitem__": ("xs = [1, 2]", "xs.__setitem__(0, 5)", "n = xs[0]"),
    "dict.__setitem__": ('d = {"a": 1}', 'd.__setitem__("b", 2)', "n = len(d)"),
    "list.sort(xs)": ("xs = [3, 1]", "list.sort(xs)", "n = xs[0]"),
    "dict.clear(d)": ('d = {"a": 1}', "dict.clear(d)", "n = len(d)"),
    "set.add(s, x)": ("s = {1}", "set.add(s, 2)", "n = len(s)"),
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_container_changed_by_a_method_not_modelled(name: str) -> None:
    make, change, read = CHANGES[name]
    program = f"def main():\n    {make}\n    before = 0\n    {change}\n    {read}\n    return locals()\n"
    tally = Tally()
    assert check_main(program, tally) == []
    assert tally.raised == 0 and tally.claims >= 1  # (`before`: not vacuous)
