"""A run only for a function's result stops once that result is known to be unknown
(entry/provider_result.py): the hover pass' listing of a module's autotuning configs stops at
the first change that spoils the set its provider returns, and every diagnostic, and every hover
outside the provider, is what the full listing gave.

`result_name`'s claim — the name every `return` returns is bound once, so what it holds once
bound is the function's result — is checked against CPython: each function it accepts is run,
traced, and the object it returns is the one the name was first bound to.
"""

from __future__ import annotations

import ast
import contextlib
import sys
import textwrap
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from test_tuning_contexts import LIBRARY

from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry import provider_result
from wgmma_lsp.entry.provider_result import result_name
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.hover_text import describe

ACCEPTED = {
    "a set filled in loops": '''
        def f(x):
            configs = set()
            for a in (1, 2):
                if x > a:
                    continue
                configs.add(a)
            return configs
        ''',
    "an annotated list, two returns": '''
        def f(x):
            out: list = []
            if x:
                return out
            out.append(x)
            return out
        ''',
}

REJECTED = {
    "a nested function binding the name (its own: not told apart)": '''
        def f(x):
            out = {}
            def g():
                out = 3
                return out
            out[g()] = x
            return out
        ''',
    "bound in a loop": '''
        def f(x):
            for _ in range(2):
                out = []
            return out
        ''',
    "rebound": '''
        def f(x):
            out = []
            out = out + [x]
            return out
        ''',
    "augmented": '''
        def f(x):
            out = []
            out += [x]
            return out
        ''',
    "a parameter": '''
        def f(out):
            out = []
            return out
        ''',
    "bound in an if": '''
        def f(x):
            if x:
                out = [1]
            else:
                out = [2]
            return out
        ''',
    "nonlocal in a nested function": '''
        def f(x):
            out = []
            def g():
                nonlocal out
                out = [x]
            g()
            return out
        ''',
    "walrus in a comprehension": '''
        def f(x):
            out = []
            [(out := [y]) for y in (1, 2)]
            return out
        ''',
    "deleted": '''
        def f(x):
            out = []
            del out
            out = x
            return out
        ''',
    "two names returned": '''
        def f(x):
            a = []
            b = []
            return a if x else b
        ''',
    "a generator": '''
        def f(x):
            out = []
            yield out
            return out
        ''',
    "a bare return": '''
        def f(x):
            out = []
            if x:
                return
            return out
        ''',
}


def _function(source: str) -> ast.FunctionDef:
    node = ast.parse(textwrap.dedent(source)).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_accepted_functions_return_the_object_their_name_was_first_bound_to(case: str) -> None:
    source = textwrap.dedent(ACCEPTED[case])
    name = result_name(_function(source))
    assert name is not None
    namespace: dict[str, Any] = {}
    exec(compile(source, "<case>", "exec"), namespace)  # noqa: S102 - the case's own code
    f = namespace["f"]
    for arg in (0, 1, 5):
        first: list[object] = []

        def trace(frame: FrameType, event: str, _: object, first: list[object] = first) -> Any:
            if frame.f_code is f.__code__ and not first and name in frame.f_locals:
                first.append(frame.f_locals[name])
            return trace

        with _traced(trace):
            result = f(arg)
        assert first and result is first[0], (case, arg)


@pytest.mark.parametrize("case", sorted(REJECTED))
def test_functions_whose_result_may_be_another_object_are_not_watched(case: str) -> None:
    assert result_name(_function(REJECTED[case])) is None


@contextlib.contextmanager
def _traced(trace: Any) -> Iterator[None]:
    previous = sys.gettrace()
    sys.settrace(trace)
    try:
        yield
    finally:
        sys.settrace(previous)


# A provider past the unroll cap (2 * 2 * 5 > 16 runs of its innermost body), which the hover
# pass lists again in full; its `continue` on an unknown argument spoils the set in the first
# iteration (interpret/mutation.py), so the listing gives no config.
PROVIDER = '''\
def get_autotuning_configs(ba) -> set[Config]:
  configs = set()
  for tile_m in (64, 128):
    for layout in Layout:
      for stages in (1, 2, 3, 4, 5):
        if ba.skip(stages):
          continue
        configs.add(Config(tile_m=tile_m, layout=layout))
  return configs
'''


def _source() -> str:
    start = LIBRARY.index("def get_autotuning_configs")
    end = LIBRARY.index("def matmul")
    return LIBRARY[:start] + PROVIDER + "\n\n" + LIBRARY[end:]


def _outcome(source: str) -> tuple[list[tuple], list[str]]:
    """The hover records of the code outside the provider, and the diagnostics. (The provider's
    own lines keep fewer hover values when its listing stops: those its first iteration and the
    analysis' run gave.)"""
    analysis = analyze(source, "library.py")
    first = source[:source.index("def get_autotuning_configs")].count("\n")
    last = first + PROVIDER.count("\n")
    records = [(str(span), r.kind, r.name, [describe(v) for v in r.values], list(r.contexts))
               for span, r in analysis.records.items() if not first <= span.line < last]
    return records, [repr(d) for d in diagnostics(analysis)]


def _counted_stops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The messages of the listing's stops (`ResultUnknown` raised), from now on."""
    stops: list[str] = []
    original = provider_result.ResultUnknown

    class Counted(original):  # type: ignore[misc, valid-type]
        def __init__(self, message: str) -> None:
            stops.append(message)
            super().__init__(message)

    monkeypatch.setattr(provider_result, "ResultUnknown", Counted)
    return stops


def test_the_listing_stops_at_the_spoiling_change_and_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source()
    stops = _counted_stops(monkeypatch)
    stopped = _outcome(source)
    assert stops == ["get_autotuning_configs() returns `configs`, which is unknown"]
    # the listing in full (no watch): the same hovers, the same diagnostics
    monkeypatch.setattr(provider_result, "stop_once_result_unknown",
                        lambda interp, func: contextlib.nullcontext())
    assert _outcome(source) == stopped


def test_a_provider_whose_set_stays_exact_is_listed_in_full(monkeypatch: pytest.MonkeyPatch) -> None:
    source = _source().replace("        if ba.skip(stages):\n          continue\n", "")
    stops = _counted_stops(monkeypatch)
    records, _ = _outcome(source)
    assert stops == []
    assert any(c is not None and "get_autotuning_configs" in str(c) for r in records for c in r[4])  # a tuning context ran
