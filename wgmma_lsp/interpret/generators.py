"""Generators, as in Python: calling a generator function makes a generator object and runs
none of its body; iterating the object runs the body and gives what it yields, once.

`GeneratorVal` is that object. The interpreter runs the body the first time the generator is
iterated (`for`, `list()`, `tuple()`, a comprehension, unpacking, `next()`, `yield from`,
`itertools.chain`/`pairwise`), to its end, and keeps what it yielded; each iteration then takes
the items it has not given yet. What is yielded is known only when every `yield` ran on a path
that certainly runs in the body (not in one branch of an undecided `if`, not in a loop run an
unknown number of times, not after a `return` or `break` that may have been taken) and the body
ended: otherwise iterating it gives an unknown sequence. A generator is a mutable object (its
position) and follows the rules of interpret/mutation.py for lists: exact where its change
certainly happens once, else unknown afterwards.

Python runs a generator's body step by step, interleaved with the loop that consumes it; the
interpreter runs it all at the first step. The values are the same unless the consumer changes,
between two items, what the body reads next; the order of their side effects is not: a kernel
whose generator body runs is left out of the race analysis (hazards/log.make_opaque).
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.ast_walk import CHILDLESS, push_children
from wgmma_lsp.interpret.values import UNKNOWN, Const, FuncVal, Value, next_born

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

    #: The interpreter (interp.Interpreter), as a type: not imported, since it imports this module.
    Interpreter = Any

def is_generator_function(node: ast.AST) -> bool:
    """A `def` whose own body (not a nested function's) holds `yield` or `yield from` (kept on
    the node: a table would keep every analysed tree alive)."""
    known = getattr(node, "_wgmma_generator", None)
    if known is not None:
        return known
    found = False
    if isinstance(node, ast.FunctionDef):
        # (ast.iter_child_nodes, without its generator: the fields read here directly; what
        # each type of node is, looked up once per type)
        kinds = _WALK_KINDS
        stack: list[Any] = list(node.body)
        while stack:
            n = stack.pop()
            kind = kinds.get(type(n))
            if kind is None:
                kind = _walk_kind(n)
            if kind is _YIELD:
                found = True
                break
            if kind is _SKIP:
                continue
            push_children(stack, n)
    node._wgmma_generator = found  # type: ignore[attr-defined]
    return found


_YIELDS = (ast.Yield, ast.YieldFrom)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)  # their own yields
# Nodes that hold no other node (or none that matters here): not walked into.
_LEAVES = (ast.Name, *CHILDLESS)
_YIELD, _SKIP, _WALK = "yield", "skip", "walk"
_WALK_KINDS: dict[type, str] = {}  # a node type -> what is_generator_function does with it


def _walk_kind(n: Any) -> str:
    """A yield; not walked into (not a node, another scope, a leaf); or walked into."""
    if isinstance(n, _YIELDS):
        kind = _YIELD
    elif not isinstance(n, ast.AST) or isinstance(n, _SCOPES) or isinstance(n, _LEAVES):
        kind = _SKIP
    else:
        kind = _WALK
    _WALK_KINDS[type(n)] = kind
    return kind


class GeneratorVal(Value):
    """A generator object: the call of a generator function that made it, and what its body
    yielded once it ran (None: not run yet)."""

    __slots__ = ("func", "call", "born", "items", "ran", "pos", "spoiled")

    def __init__(self, func: FuncVal | None, call: Any, items: tuple[Value, ...] | None = None) -> None:
        self.func = func
        self.call = call
        self.born = next_born()
        self.items = items
        self.ran = func is None  # an iterator over items already known (itertools.chain)
        self.pos = 0
        self.spoiled = False

    def describe(self) -> str:
        name = self.func.name if self.func is not None else "iterator"
        return f"generator ({name})" if self.func is not None else name


class YieldSink:
    """What a running generator body yielded, and whether that is known exactly."""

    __slots__ = ("values", "known", "depth", "uncertain_depth", "loops")

    def __init__(self, depth: int, uncertain_depth: int, loops: int) -> None:
        self.values: list[Value] = []
        self.known = True
        self.depth = depth  # the length of the interpreter's stack while the body runs
        self.uncertain_depth = uncertain_depth
        self.loops = loops


def make(interp: Interpreter, func: FuncVal, call: Any) -> GeneratorVal:
    """`gen(...)` of a generator function: the object, its body not run."""
    return GeneratorVal(func, call)


def _run(interp: Interpreter, gen: GeneratorVal) -> None:
    from wgmma_lsp.hazards.log import make_opaque

    gen.ran = True
    make_opaque(interp, "a generator's body runs when it is first iterated, not interleaved with its consumer")
    # (the body's frame will be the one above the current top of the stack)
    sink = YieldSink(len(interp.stack) + 1, interp.uncertain_depth, len(interp.loops))
    interp.yield_sinks.append(sink)
    try:
        ran = interp.run_generator_body(gen.func, gen.call)
        completed = ran and not interp.raised_out
    finally:
        interp.yield_sinks.pop()
    gen.items = tuple(sink.values) if sink.known and completed else None


def on_yield(interp: Interpreter, value: Value) -> Value:
    """`yield value` in the generator body running now: kept, when it certainly runs."""
    if not interp.yield_sinks:
        return UNKNOWN
    sink = interp.yield_sinks[-1]
    if len(interp.stack) != sink.depth:
        return UNKNOWN  # another function's body, run for its own sake (analysed with nothing known)
    if not _certain_in_body(interp, sink):
        sink.known = False
    elif sink.known:
        sink.values.append(value)
    return Const(None)  # what `yield` evaluates to when the generator is iterated (not `send`)


def on_yield_from(interp: Interpreter, iterable: Value) -> Value:
    """`yield from iterable`: each of its items, yielded in turn."""
    items = iterate(interp, iterable)
    if not interp.yield_sinks:
        return UNKNOWN
    sink = interp.yield_sinks[-1]
    if len(interp.stack) != sink.depth:
        return UNKNOWN
    if items is None:
        sink.known = False
        return UNKNOWN
    for v in items:
        on_yield(interp, v)
    return UNKNOWN  # (the sub-generator's return value: not followed)


def _certain_in_body(interp: Interpreter, sink: YieldSink) -> bool:
    """The `yield` runs whenever the body does (relative to where the generator was iterated)."""
    return interp.uncertain_depth == sink.uncertain_depth \
        and not interp.stack[-1].maybe_returned \
        and not any(lp.maybe_stopped for lp in interp.loops[sink.loops:] if lp is not None)


def iterate(interp: Interpreter, v: Value) -> tuple[Value, ...] | None:
    """The items iterating `v` gives now, when known (any iterable the interpreter knows)."""
    items = interp.iter_items(v)  # (a generator's included)
    return tuple(items) if items is not None else None


def _items(interp: Interpreter, gen: GeneratorVal) -> tuple[Value, ...] | None:
    """All the generator yields, its body run if it has not yet; None when not known (the
    generator is then unknown from now on)."""
    if gen.spoiled:
        return None
    if not gen.ran:
        _run(interp, gen)
    if gen.items is None:
        gen.spoiled = True
    return gen.items


def consume(interp: Interpreter, gen: GeneratorVal) -> tuple[Value, ...] | None:
    """Everything the generator still yields; it is exhausted after."""
    items = _items(interp, gen)
    if items is None:
        return None
    rest = items[gen.pos:]
    _advance(interp, gen, len(items))
    return rest


#: What `next_item` gives for an exhausted generator (Python raises StopIteration).
EXHAUSTED = Const(StopIteration)


def next_item(interp: Interpreter, gen: GeneratorVal) -> Value | None:
    """`next(gen)`: its next item, EXHAUSTED when it has none left, None when not known."""
    items = _items(interp, gen)
    if items is None:
        return None
    if gen.pos >= len(items):
        return EXHAUSTED
    item = items[gen.pos]
    _advance(interp, gen, gen.pos + 1)
    return item


def given_away(interp: Interpreter, values: Any) -> None:
    """Generators handed to something that may iterate them at any time (`zip`, `enumerate`,
    an unknown callable): where each stands is unknown from now on."""
    for v in values:
        if isinstance(v, GeneratorVal):
            mutation.note_write(interp, v.born, None)
            v.spoiled = True


def _advance(interp: Interpreter, gen: GeneratorVal, pos: int) -> None:
    """The generator moves on to `pos`: exactly where that certainly happens once (its own
    context, a certain path), else its position is unknown from now on."""
    mutation.note_write(interp, gen.born, None)
    if mutation.on_certain_path(interp) and gen.born >= interp.shared_born and gen.born != 0:
        gen.pos = pos
    else:
        gen.spoiled = True
