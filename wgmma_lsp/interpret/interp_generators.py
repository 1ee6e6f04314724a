"""The interpreter's part for generators (interpret/generators.py): `yield`, `yield from`, and
running a generator's body when it is first iterated."""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import generators
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.interp_base import MAX_DEPTH
from wgmma_lsp.interpret.memo import cut as memo_cut
from wgmma_lsp.interpret.values import Const, FuncVal, Value


class GeneratorsMixin:
    def eval_Yield(self, n: ast.Yield, env: Env) -> Value:
        value = self.eval(n.value, env) if n.value is not None else Const(None)  # type: ignore[attr-defined]
        return generators.on_yield(self, value)

    def eval_YieldFrom(self, n: ast.YieldFrom, env: Env) -> Value:
        return generators.on_yield_from(self, self.eval(n.value, env))  # type: ignore[attr-defined]

    def run_generator_body(self, func: FuncVal, call: Call) -> bool:
        """Run a generator function's body for what it yields; False when it is not run (too
        deep, or a recursive generator)."""
        node = func.node
        if len(self.stack) >= MAX_DEPTH or any(  # type: ignore[attr-defined]
                f.func is not None and f.func.node is node for f in self.stack):  # type: ignore[attr-defined]
            memo_cut(self)
            return False
        self._call_user(func, call)  # type: ignore[attr-defined]
        return True
