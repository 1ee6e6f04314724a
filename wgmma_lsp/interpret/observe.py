"""Which values of a configuration sweep an iteration actually looked at.

A tuning loop (`for tile_m, tile_n, grid_tile_width in itertools.product(...)`) makes one
context per combination. Many combinations differ only in values the analysis never inspects:
`grid_tile_width` goes to `plgpu.planar_snake`, whose model returns index scalars whatever the
width is. Running such a combination again would repeat the same steps on the same facts.

So each value a sweep binds is a `Swept` constant: an ordinary `Const` that, when its Python
value is read (`.value`: a comparison, arithmetic, a shape, a message, a branch), marks its
name *observed* in every log open at that moment. An iteration is run with a log open; what
it did depends only on the values it observed (the interpreter is deterministic, and a value
that was never read cannot have steered it). A later combination that agrees with an iteration
already run on every name that iteration observed would repeat it step for step: it is not run
again, its context is added wherever the iteration it repeats left its context (findings, the
functions it entered) — it is checked, at the cost of a comparison.

Reads that only keep books (hover records, memo keys, context labels) are made `unobserved()`.
A memoised call replayed instead of run reports what its body observed when it ran (see
`MemoEntry.observed`), so a replay observes as much as the run it stands for.
"""

from __future__ import annotations

from contextlib import contextmanager

from wgmma_lsp.interpret.values import Const

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Iterator


class Observations:
    """One interpreter's open observation logs (a stack) and its pause counter."""

    __slots__ = ("logs", "paused")

    def __init__(self) -> None:
        self.logs: list[set] = []
        self.paused = 0

    @contextmanager
    def watching(self, log: set) -> Iterator[set]:
        """Collect into `log` the tags of every swept value read until the block ends."""
        self.logs.append(log)
        try:
            yield log
        finally:
            for i in range(len(self.logs) - 1, -1, -1):
                if self.logs[i] is log:
                    del self.logs[i]
                    break

    @contextmanager
    def unobserved(self) -> Iterator[None]:
        """Reads that keep books (hover records, memo keys, labels): not observations."""
        self.paused += 1
        try:
            yield
        finally:
            self.paused -= 1

    def add(self, tags: frozenset | set) -> None:
        """Tags observed elsewhere (a memoised call replayed here observed them when it ran)."""
        if self.logs and tags and not self.paused:
            for log in self.logs:
                log |= tags


class Swept(Const):
    """A constant bound by one iteration of a sweep; `tags` name the sweep variables it came
    from ((id of the loop, name): an inner sweep over an outer one's values keeps both), and
    `sink` is the interpreter's `Observations`."""

    def __init__(self, value: Any, tags: frozenset = frozenset(), sink: Observations | None = None):
        object.__setattr__(self, "_value", value)
        object.__setattr__(self, "tags", tags)
        object.__setattr__(self, "sink", sink)

    @property  # type: ignore[override]
    def value(self) -> Any:
        sink = self.sink
        if sink is not None and sink.logs and not sink.paused:
            for log in sink.logs:
                log.update(self.tags)
        return self._value

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Const):
            a, b = self.value, other.value
            return type(a) is type(b) and a == b  # as Const: `1` is not `True`
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.value,))

    def __repr__(self) -> str:
        return f"Const(value={self._value!r})"

    def __reduce__(self) -> tuple:
        return (Const, (self._value,))  # a copy outside the analysis is a plain constant


def raw(v: Const) -> Any:
    """A constant's Python value, not counted as observed."""
    return v._value if isinstance(v, Swept) else v.value  # type: ignore[attr-defined]
