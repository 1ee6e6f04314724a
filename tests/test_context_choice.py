"""Which contexts a library kernel's test context runs: the test cases in breadth-first order
(entry/test_contexts.breadth_first), and each config a provider returns on its own
(`interp.return_log`, read by entry/op_dispatch.ProgramHooks._picked_for)."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from wgmma_lsp.entry.test_contexts import breadth_first
from wgmma_lsp.interpret.interp import Interpreter
from wgmma_lsp.interpret.values import Const, InstanceVal
from wgmma_lsp.spans import LineIndex


@dataclass
class _ParamSet:
    label: tuple


@dataclass
class _Case:
    method: str
    case: _ParamSet


def test_one_case_of_each_test_method_runs_before_a_second_of_any() -> None:
    cls = object()
    cases = [(_Case("test_params", _ParamSet((("a", "1"),))), cls, None),
             (_Case("test_params", _ParamSet((("a", "2"),))), cls, None),
             (_Case("test_params", _ParamSet((("a", "3"),))), cls, None),
             (_Case("test_causal", _ParamSet(())), cls, None),
             (_Case("test_dtypes", _ParamSet((("d", "f32"),))), cls, None),
             (_Case("test_dtypes", _ParamSet((("d", "bf16"),))), cls, None)]
    order = [(c.method, c.case.label) for c, _, _ in breadth_first(cases)]
    assert order == [("test_params", (("a", "1"),)), ("test_dtypes", (("d", "f32"),)), ("test_causal", ()),
                     ("test_params", (("a", "2"),)), ("test_dtypes", (("d", "bf16"),)),
                     ("test_params", (("a", "3"),))]
    assert sorted(map(id, breadth_first(cases))) == sorted(map(id, cases))  # every case, once


PROVIDER = textwrap.dedent("""
    import dataclasses
    import os

    @dataclasses.dataclass(frozen=True)
    class Config:
        block: int
        stages: int = 2

    def pick(n) -> Config:
        config = Config(block=128)
        if os.environ.get("WGMMA_LSP_NEVER_SET_VARIABLE") is not None:
            return config
        return dataclasses.replace(config, block=64)

    first = pick(1)
""")


def test_a_providers_returns_are_logged_one_by_one_not_joined() -> None:
    tree = ast.parse(PROVIDER)
    interp = Interpreter(PROVIDER, tree, LineIndex(PROVIDER))
    pick = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "pick")
    interp.return_log = {id(pick): []}
    interp.run_module()
    logged = interp.return_log[id(pick)]
    assert [v.attrs["block"] for v in logged if isinstance(v, InstanceVal)] == [Const(128), Const(64)]
    joined = interp.module_env.vars["first"]
    assert not (isinstance(joined, InstanceVal) and joined.attrs.get("block") in (Const(128), Const(64)))
