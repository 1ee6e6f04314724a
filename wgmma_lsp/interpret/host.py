"""What the models of the JAX API may ask of the interpreter that runs them: `ModelHost`.

A model receives a `Call` whose `interp` is a `ModelHost`, not the `Interpreter` class: the
narrow interface below is all a model touches (the interpreter satisfies it structurally). It
is a leaf module — it imports no part of the interpreter — so models depend on this interface
and the interpreter depends on the models, never the other way round (checked by the layers
contract in `.importlinter`).
"""

from __future__ import annotations

import ast
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # pragma: no cover - types only, all of them leaves
    from wgmma_lsp.interpret.env import Env
    from wgmma_lsp.interpret.kernel_state import KernelState
    from wgmma_lsp.interpret.values import FuncVal, Value
    from wgmma_lsp.rules.base import Finding, Related, Rule
    from wgmma_lsp.spans import LineIndex, Span


class ModelHost(Protocol):
    """The interpreter as a model sees it."""

    # -- where the analysis is -------------------------------------------------------------
    lines: "LineIndex"
    module_env: "Env"
    certain: bool  # False on a path that may not run: findings there are "on some paths"
    findings: "list[Finding]"
    context: list[str]  # descriptions of the call sites that led here (for messages)
    entered: set[int]  # id() of function nodes whose bodies ran
    made_by: "dict[int, tuple[Value, Any]]"  # id() of an API result -> (result, the Call)
    shared_writes: "dict[int, dict[str, Value]]"

    # -- the kernel being interpreted --------------------------------------------------------
    # Its lowering semantics, call, thread axis and open SMEM scopes (interpret/kernel_state.py);
    # models/pallas.py replaces it for each kernel body it runs.
    kernel: "KernelState"
    smem_usage: "dict[Span, list]"  # what each kernel call allocates, by the call's span
    # The `jax.vjp`s running, innermost last: the custom_vjp calls each collects (models/autodiff.py).
    vjp_frames: list[list[Any]]

    # -- reporting ---------------------------------------------------------------------------
    def span(self, node: ast.AST) -> "Span": ...

    def report(self, rule: "Rule", message: str, span: "Span | None", blame_line: int,
               related: "list[Related] | None" = None, data: dict[str, Any] | None = None,
               condition: str = "") -> None: ...

    def settle_lowering_findings(self, start: int) -> None: ...

    def may_be_caught(self, rule: "Rule", message: str = "") -> bool: ...

    def uncertain(self, flag: bool = True) -> AbstractContextManager[None]: ...

    def recorded(self, node: ast.AST) -> "list[Value]": ...

    # -- running the user's code the API calls back ---------------------------------------
    def call_value(self, func: "Value", call: Any) -> "Value": ...

    def call_traced(self, func: "Value", args: "list[Value]", call: Any) -> "Value": ...

    def unknown_call(self, call: Any) -> "Value": ...

    def generic_call(self, func: "FuncVal") -> "Value": ...

    def not_replayable(self) -> None: ...

    def next_item_given(self, state: str) -> None: ...

    # -- Python semantics the models reuse -----------------------------------------------------
    def getattr(self, obj: "Value", attr: str, node: ast.AST | None = None) -> "Value": ...

    def compare(self, op: ast.cmpop, left: "Value", right: "Value") -> "Value": ...

    def iter_items(self, v: "Value") -> "list[Value] | None": ...
