"""absl's parameterized tests as its metaclass makes them (absl/testing/parameterized.py).

`@parameterized.parameters(*cases)`, `@parameterized.product(**grid)` and
`@parameterized.named_parameters(*cases)` on a method `test_x` of a `parameterized.TestCase`
subclass: the class gets one method per case, and no `test_x`. A method made by `parameters` or
`product` is named `test_x0`, `test_x1`, ... in case order; one made by `named_parameters` is
`test_x_<name>` (no `_` when the name starts with one). Each calls `test_x(self, **case)` for a
dict case, `test_x(self, *case)` for a tuple or list, `test_x(self, case)` for anything else.
Code calls them by those names (`self.test_self_attention0()` in a test that reuses another);
`interpret/classes.py` adds them to the class (`expand_parameterized`).

Cases whose values are not known (a generator, an unknown iterable) make methods whose names
are not known: a call of any attribute named `test_x...` then may run `test_x` with arguments
not known (it runs with nothing known, on a path that may not be taken: what it changes is
spoiled, nothing it computes is claimed).
"""

from __future__ import annotations

import itertools

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, Const, DictVal, TupleVal, Value, Wrapped
from wgmma_lsp.models.registry import model

DECORATOR = "absl.parameterized"
PARAMETERIZED_TEST = "absl.parameterized_test"  # what the decorator makes of the method
UNEXPANDED = "<cases not known>"  # a class member's key prefix: the methods `expand` could not make
UNKNOWN_CASE = "absl.parameterized_unknown_case"
MAX_CASES = 256


def _cases(call: Call) -> list[Value] | None:
    """`parameters(*testcases)`: one list or other iterable that is not a tuple or a mapping
    is the cases themselves."""
    cases = list(call.args)
    if len(cases) == 1 and not (isinstance(cases[0], TupleVal) and not cases[0].is_list) \
            and not isinstance(cases[0], DictVal):
        only = cases[0]
        if not (isinstance(only, TupleVal) and only.is_list and not only.spoiled):
            return None
        cases = list(only.items)
    return cases if len(cases) <= MAX_CASES else None


def _decorator(naming: str):
    def make(call: Call) -> Value:
        cases = _cases(call) if call.complete and not call.kwargs else None
        return Wrapped(DECORATOR, UNKNOWN, {"naming": Const(naming),
                                            "cases": UNKNOWN if cases is None else TupleVal(tuple(cases))})
    return make


model("absl.testing.parameterized.parameters")(_decorator("index"))
model("absl.testing.parameterized.named_parameters")(_decorator("named"))


@model("absl.testing.parameterized.product")
def _product(call: Call) -> Value:
    """`product(*kwargs_seqs, **testgrid)`: every combination, as `itertools.product` orders
    them (the first axis slowest), each a dict."""
    not_known = Wrapped(DECORATOR, UNKNOWN, {"naming": Const("index"), "cases": UNKNOWN})
    if not call.complete:
        return not_known
    axes: list[list[DictVal]] = []
    for seq in call.args:  # lists of dicts
        if not (isinstance(seq, TupleVal) and not seq.spoiled
                and all(isinstance(d, DictVal) and not d.spoiled for d in seq.items)):
            return not_known
        axes.append(list(seq.items))  # type: ignore[arg-type]
    for name, values in call.kwargs.items():
        if not (isinstance(values, TupleVal) and not values.spoiled):
            return not_known
        axes.append([DictVal(((name, v),)) for v in values.items])
    total = 1
    for a in axes:
        total *= len(a)
    if total > MAX_CASES:
        return not_known
    cases = [DictVal(tuple(kv for d in combo for kv in d.items)) for combo in itertools.product(*axes)]
    return Wrapped(DECORATOR, UNKNOWN, {"naming": Const("index"), "cases": TupleVal(tuple(cases))})


@model(f"{DECORATOR}()")
def _decorate(call: Call) -> Value:
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    if len(call.args) != 1 or call.kwargs:
        return UNKNOWN
    return Wrapped(PARAMETERIZED_TEST, call.args[0], dict(wrapped.kwargs))


def is_parameterized_testcase(mro: list, bases_of) -> bool:
    """Whether a class whose user MRO is `mro` derives from `parameterized.TestCase` (whose
    metaclass makes the methods)."""
    from wgmma_lsp.interpret.values import ApiVal

    return any(isinstance(b, ApiVal) and b.name == "absl.testing.parameterized.TestCase"
               for c in mro for b in bases_of(c))


def expand(cls_methods: dict[str, Value]) -> None:
    """Add the methods absl's metaclass makes to a class's namespace, and drop the
    parameterized ones (as the metaclass does)."""
    for name, v in list(cls_methods.items()):
        if isinstance(v, Wrapped) and v.api == PARAMETERIZED_TEST and name.startswith("test"):
            made = generated(name, v)
            if made is None:  # which methods it makes is not known
                del cls_methods[name]
                cls_methods[f"{UNEXPANDED}{name}"] = Wrapped(UNKNOWN_CASE, v.func, {})
                continue
            del cls_methods[name]
            for new_name, m in made:
                cls_methods.setdefault(new_name, m)


def generated(name: str, test: Wrapped) -> list[tuple[str, Value]] | None:
    """The methods absl's metaclass makes of the parameterized method `name`: (name, a
    `Wrapped("absl.parameterized_case", method, {args, kwargs})`), or None when a case's name
    or form is not known."""
    naming = test.kwargs["naming"]
    cases = test.kwargs["cases"]
    assert isinstance(naming, Const)
    if not isinstance(cases, TupleVal):
        return None
    out: list[tuple[str, Value]] = []
    for idx, case in enumerate(cases.items):
        new_name = f"{name}{idx}"
        if naming.value == "named":
            if isinstance(case, DictVal) and not case.spoiled:
                items = dict(case.items)
                label = items.pop("testcase_name", None)
                case = DictVal(tuple((k, v) for k, v in case.items if k != "testcase_name"))
            elif isinstance(case, TupleVal) and not case.spoiled and case.items:
                label, case = case.items[0], TupleVal(case.items[1:])
            else:
                return None
            if not (isinstance(label, Const) and isinstance(label.value, str)):
                return None
            sep = "_" if name.startswith("test_") and label.value and not label.value.startswith("_") else ""
            new_name = f"{name}{sep}{label.value}"
        if isinstance(case, DictVal):
            if case.spoiled or not all(isinstance(k, str) for k, _ in case.items):
                return None
            args, kwargs = TupleVal(()), case
        elif isinstance(case, TupleVal):
            if case.spoiled:
                return None
            args, kwargs = TupleVal(case.items), DictVal(())
        elif isinstance(case, Const) and isinstance(case.value, (str, bytes)) or not _maybe_iterable(case):
            args, kwargs = TupleVal((case,)), DictVal(())
        else:
            return None
        out.append((new_name, Wrapped("absl.parameterized_case", test.func, {"args": args, "kwargs": kwargs})))
    return out


def unexpanded(members: dict[str, Value], attr: str) -> Value | None:
    """The parameterized method whose generated methods may include `attr` (its cases were
    not known), if any."""
    for key, v in members.items():
        if key.startswith(UNEXPANDED) and attr.startswith(key[len(UNEXPANDED):]):
            return v
    return None


@model(f"{UNKNOWN_CASE}()")
def _unknown_case(call: Call) -> Value:
    """A generated method whose case is not known: the test runs with nothing known about its
    arguments, on a path that may not be taken."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    from wgmma_lsp.interpret.values import FuncVal

    if isinstance(wrapped.func, FuncVal):
        with call.interp.uncertain():
            call.interp.generic_call(wrapped.func)
    return UNKNOWN


def _maybe_iterable(v: Value) -> bool:
    """Whether `v` may be a non-string iterable (then absl spreads it as arguments)."""
    from wgmma_lsp.interpret.values import ApiVal, DTypeVal

    if isinstance(v, Const):
        return not isinstance(v.value, (bool, int, float, complex, type(None)))
    return not isinstance(v, (DTypeVal, ApiVal))
