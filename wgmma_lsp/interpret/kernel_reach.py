"""Which kernels the analysis checked with concrete shapes, and which only with nothing known.

A kernel is a function of the analysed file handed to `pl.pallas_call` or `plgpu.kernel`. It is
checked with concrete shapes when its body ran with refs whose shapes are all known (a `__main__`
driver, a test, a `# wgmma-lsp: trace` comment, or code that builds its own arrays reached it);
otherwise it was only analysed with nothing known about its arguments, and the checks that need
shapes (tile sizes, SMEM budgets, TMA boxes) could not run. The CLI's summary and the editor's
"Add a wgmma-lsp trace comment" action say so.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class EntryFunction:
    """The module-level function of the file whose call reaches a kernel (what to trace)."""

    name: str
    def_line: int  # 0-based line of its `def`
    insert_line: int  # 0-based line above its decorators: where a trace comment goes
    params: tuple[str, ...]  # the call's arguments as placeholders: "a=...", "..." (positional-only)


@dataclass(frozen=True)
class KernelReach:
    """A kernel the analysis saw launched, and how."""
    name: str  # the kernel body's function name
    span: Span  # its name on its def line
    concrete: bool  # its body ran at least once with every ref's shape known
    entry: EntryFunction | None  # what a trace comment would call to reach it (None: not known)


@dataclass
class _Book:
    """The kernels an analysis saw, by their def nodes."""
    bodies: dict[int, Any] = field(default_factory=dict)  # id(def node) -> FuncVal
    concrete: set[int] = field(default_factory=set)
    entries: dict[int, Any] = field(default_factory=dict)  # id(def node) -> entry FuncVal


_BOOKS: "weakref.WeakKeyDictionary[Any, _Book]" = weakref.WeakKeyDictionary()


def _book(interp: Any) -> _Book | None:
    """The interpreter's book, None when it records nothing (another module, a silent pass)."""
    if interp.home is not None or interp.where is not None or interp.silent or interp.hover_only:
        return None
    book = _BOOKS.get(interp)
    if book is None:
        book = _BOOKS[interp] = _Book()
    return book


def _own_body(interp: Any, body: Any) -> Any:
    from wgmma_lsp.interpret.values import FuncVal, PartialVal

    while isinstance(body, PartialVal):
        body = body.func
    if isinstance(body, FuncVal) and _in_file(interp, body):
        return body
    return None


def _in_file(interp: Any, func: Any) -> bool:
    env = func.closure
    while env is not None and env.parent is not None:
        env = env.parent
    return env is interp.module_env


def launched(interp: Any, body: Any) -> None:
    """A kernel launch (`pl.pallas_call(body, ...)(...)`, `plgpu.kernel(body, ...)(...)`) is
    being interpreted, concretely or not."""
    book = _book(interp)
    body = _own_body(interp, body) if book is not None else None
    if body is None:
        return
    key = id(body.node)
    book.bodies.setdefault(key, body)
    if key not in book.entries:
        from wgmma_lsp.interpret.interp_base import is_driver

        for frame in interp.stack:  # the outermost function of the file that is no driver or test
            f = frame.func
            if f is not None and f.closure is interp.module_env and not is_driver(f.name) \
                    and not f.name.startswith("test"):
                book.entries[key] = f
                break


def ran(interp: Any, body: Any, refs: list[Any]) -> None:
    """The kernel body runs with these refs: concrete when every shape is known."""
    book = _book(interp)
    body = _own_body(interp, body) if book is not None else None
    if body is None:
        return
    book.bodies.setdefault(id(body.node), body)
    if all(_shape_known(r) for r in refs):
        book.concrete.add(id(body.node))


def _shape_known(v: Any) -> bool:
    from wgmma_lsp.interpret.values import Const, TupleVal

    if isinstance(v, TupleVal):
        return all(_shape_known(x) for x in v.items)
    if isinstance(v, Const) and v.value is None:
        return True
    shape = getattr(v, "shape", None)
    return isinstance(shape, tuple) and all(isinstance(d, int) for d in shape)


def kernels_of(interp: Any) -> list[KernelReach]:
    """Every kernel of the file the analysis saw launched, in source order."""
    book = _BOOKS.get(interp)
    if book is None:
        return []
    out = []
    for key, body in sorted(book.bodies.items(), key=lambda kv: kv[1].node.lineno):
        entry = book.entries.get(key)
        out.append(KernelReach(body.name, _name_span(interp, body.node), key in book.concrete,
                               _entry(interp, entry) if entry is not None else None))
    return out


def _name_span(interp: Any, node: Any) -> Span:
    line = node.lineno - 1
    text = interp.lines.lines[line] if line < len(interp.lines.lines) else ""
    col = text.find(node.name)
    col = max(col, 0)
    return Span(line, col, line, col + len(node.name))


def _entry(interp: Any, func: Any) -> EntryFunction:
    node = func.node
    a = node.args
    params: list[str] = []
    positional = list(a.posonlyargs) + list(a.args)
    required = len(positional) - len(a.defaults)
    for i, p in enumerate(positional[:required]):
        params.append("..." if i < len(a.posonlyargs) else f"{p.arg}=...")
    for p, default in zip(a.kwonlyargs, a.kw_defaults):
        if default is None:
            params.append(f"{p.arg}=...")
    first = min([d.lineno for d in node.decorator_list] + [node.lineno]) - 1
    return EntryFunction(func.name, node.lineno - 1, first, tuple(params))


def trace_comment(entry: EntryFunction) -> str:
    """`# wgmma-lsp: trace matmul(a=..., b=...)`: the syntax entry/declared.py reads."""
    return f"# wgmma-lsp: trace {entry.name}({', '.join(entry.params)})"
