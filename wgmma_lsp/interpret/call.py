"""A call as the models see it: abstract arguments plus the syntax they came from."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from wgmma_lsp.interpret.values import UNKNOWN, Value
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:  # pragma: no cover
    from wgmma_lsp.interpret.env import Env
    from wgmma_lsp.interpret.host import ModelHost


@dataclass
class Call:
    """One call: its arguments as values and as syntax."""
    interp: "ModelHost"  # the interpreter, as models see it (interpret/host.py)
    node: ast.AST | None  # the call expression (or the statement that implies the call)
    args: list[Value]
    kwargs: dict[str, Value]
    arg_nodes: list[ast.expr | None] = field(default_factory=list)
    kw_nodes: dict[str, ast.expr] = field(default_factory=dict)
    env: "Env | None" = None
    complete: bool = True  # False when *args/**kwargs could not be expanded
    generic: bool = False  # a function analysed with nothing known about its arguments
    wrapped: "Value | None" = None  # for calls of API results (`pallas_call(k)(x)`): that result

    def has(self, i: int, name: str | None = None) -> bool:
        return i < len(self.args) or (name is not None and name in self.kwargs)

    def get(self, i: int, name: str | None = None, default: Value | None = None) -> Value:
        if 0 <= i < len(self.args):
            return self.args[i]
        if name is not None and name in self.kwargs:
            return self.kwargs[name]
        if default is not None:
            return default
        return UNKNOWN

    def node_of(self, i: int, name: str | None = None) -> ast.expr | None:
        if 0 <= i < len(self.args):
            return self.arg_nodes[i] if i < len(self.arg_nodes) else None
        if name is not None:
            return self.kw_nodes.get(name)
        return None

    def span_of(self, i: int, name: str | None = None) -> Span | None:
        node = self.node_of(i, name)
        return self.interp.span(node) if node is not None else self.span

    @property
    def span(self) -> Span | None:
        return self.interp.span(self.node) if self.node is not None else None

    @property
    def line(self) -> int:
        """The line JAX's traceback blames for an error raised inside this call."""
        return self.node.lineno - 1 if self.node is not None and hasattr(self.node, "lineno") else -1
