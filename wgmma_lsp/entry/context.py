"""Concrete contexts: one way a kernel is reached with known values.

A context is made by an entry point (a `__main__` block, a test function with one set of its
parameters, a `# wgmma-lsp: trace` comment), refined by each iteration of a configuration sweep
(`for tile_m, tile_n in itertools.product(...)`) and by the call that hands the kernel its
arguments (`jax.make_jaxpr(f)(...)` at line 290). Findings remember the contexts they were
proven in; one proven in only some of the contexts that reach its code says which.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from wgmma_lsp.lazy_re import LazyPattern
from wgmma_lsp.spans import Span

MAX_BINDING_TEXT = 40


@dataclass(frozen=True)
class Context:
    """Where the concrete values come from: the sweep bindings and the call site."""

    origin: str  # the function (or block) whose code makes the call: "main()", "test_matmul()"
    line: int  # 0-based line of the call site (or of the entry itself)
    bindings: tuple[tuple[str, str], ...] = ()  # ("tile_m", "256"), in the order written
    span: Span | None = field(default=None, compare=False)
    open: bool = field(default=True, compare=False)  # the call site may still be refined

    def label(self) -> str:
        """`with tile_m=256, tile_n=128, from main() at line 290`."""
        where = f"from {self.origin} at line {self.line + 1}"
        if not self.bindings:
            return where
        return "with " + ", ".join(f"{k}={v}" for k, v in self.bindings) + ", " + where

    def with_bindings(self, bindings: list[tuple[str, str]], origin: str, line: int,
                      span: Span | None) -> "Context":
        """A sweep iteration: more bindings, the loop as the site until a call refines it."""
        return replace(self, bindings=self.bindings + tuple(bindings), origin=origin, line=line,
                       span=span, open=True)

    def at_call(self, origin: str, line: int, span: Span | None) -> "Context":
        """The call that hands the kernel its values; later calls keep this site."""
        return replace(self, origin=origin, line=line, span=span, open=False)


def binding_text(value: object) -> str | None:
    """How a sweep value prints in a context label (None: not worth printing)."""
    from wgmma_lsp.interpret.values import Const, TupleVal

    if isinstance(value, Const) and isinstance(value.value, (int, float, str, bool, type(None))):
        text = repr(value.value)
    elif isinstance(value, TupleVal) and all(isinstance(i, Const) for i in value.items):
        text = value.describe()
    else:
        return None
    return text if len(text) <= MAX_BINDING_TEXT else text[:MAX_BINDING_TEXT - 1] + "…"


def contexts_note(contexts: list[Context]) -> str:
    """The suffix of a finding proven in only some contexts."""
    first = contexts[0].label()
    more = len(contexts) - 1
    if more:
        first += f", and {more} other context{'s' if more > 1 else ''}"
    return f" ({first})"


_NOTE = LazyPattern(r" \((?:with .+?, )?from .+? at line \d+(?:, and \d+ other contexts?)?\)"
                    r"(?=( \(on some paths\))?$)")


def strip_context_note(message: str) -> str:
    """JAX's message of a diagnostic, without the contexts it was proven in (a warning's
    "(on some paths)" after them stays)."""
    return _NOTE.sub("", message)
