"""frame_room.roomy: a function's frame reserves room for its callees' frames, and nothing else
changes (its results, its exceptions, how deep a recursion under it goes before Python cuts it)."""

from __future__ import annotations

import sys

from wgmma_lsp import frame_room
from wgmma_lsp.interpret import driver


def _depth_reached() -> int:
    def down(n: int) -> int:
        try:
            return down(n + 1)
        except RecursionError:
            return n

    return down(0)


def test_roomy_keeps_results_and_exceptions() -> None:
    @frame_room.roomy
    def f(a: int, *rest: int, scale: int = 1) -> int:
        if a < 0:
            raise ValueError("negative")
        return (a + sum(rest)) * scale

    assert f(1, 2, 3, scale=2) == 12
    try:
        f(-1)
    except ValueError as e:
        assert str(e) == "negative"
    else:  # pragma: no cover
        raise AssertionError("the exception was lost")
    assert f.__code__.co_stacksize >= frame_room.RESERVED_SLOTS


def test_recursion_limit_cuts_where_it_did() -> None:
    """No frame is added: a recursion under a roomy function is cut at the same depth."""
    plain = (lambda: _depth_reached())()
    roomy_depth = frame_room.roomy(lambda: _depth_reached())()
    assert plain == roomy_depth < sys.getrecursionlimit()


def test_driver_entry_points_are_roomy() -> None:
    for fn in (driver.run, driver.hover_pass):
        assert fn.__code__.co_stacksize >= frame_room.RESERVED_SLOTS
