"""Room on CPython's frame stack for an analysis' deep recursion.

CPython (3.11+) keeps the frames of Python functions in 16 KiB chunks it maps from the system
(`mmap`) as a call needs one, and unmaps each as soon as the call that opened it returns. The
abstract interpreter recurses deeply and up and down (an expression in a statement in a call in
a branch ...), so its depth crosses a chunk boundary back and forth: a whole-package check of
tokamax mapped and unmapped a chunk 327,000 times (`strace -c`), each a pair of system calls and
fresh pages zeroed (about a tenth of its CPU time on Python 3.12).

`roomy` gives a function a frame that reserves about half a MiB of value-stack slots it never
uses: CPython maps a 1 MiB chunk for that frame, whose other half holds the frames of
everything the function calls (the default recursion limit of 1,000 frames fits), and unmaps it
once when the function returns. Only the pages frames touch are backed by memory. The function
itself is unchanged, and no frame is added (the recursion limit cuts where it did).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable, TypeVar

    F = TypeVar("F", bound=Callable)

#: Stack slots (8 bytes each) a roomy function's frame reserves: with CPython's overhead of
#: 1,000 slots per chunk, just over 512 KiB, so its chunk is 1 MiB (sizes double from 16 KiB).
RESERVED_SLOTS = 64_600


def roomy(fn: F) -> F:
    """`fn`, its calls' frames in a chunk of their own (see the module doc). A deeper value
    stack than the code needs is never read: only the frame is larger."""
    code = fn.__code__
    fn.__code__ = code.replace(co_stacksize=max(code.co_stacksize, RESERVED_SLOTS))
    return fn
