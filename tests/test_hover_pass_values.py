"""The hover pass (interpret/driver.py `hover_pass`) gives values to lines no context reached,
running their functions once more with nothing known. A line a context reached keeps that
context's values; a line that gets its first values in the hover pass shows every value of
that run — as CPython runs it — not only the first one recorded.

Before, the hover pass recorded one value per line: a loop variable over `range(2)` hovered as
`0`, as if it held nothing else (tokamax's attention kernels: `num_stages` as `2` in a loop over
(2, 3, 4), `d` as `0` in a loop over `range(2)`).
"""

from __future__ import annotations

import textwrap

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import hover

SOURCE = textwrap.dedent('''\
    import jax.numpy as jnp


    def helper(flag):
        out = []
        if flag:
            out.append(1)
        else:
            for d in range(2):
                out.append(d)
        return out


    def main():
        helper(True)


    if __name__ == "__main__":
        main()
''')


def _hover(line: int, col: int) -> str:
    analysis = analyze(SOURCE, "/tmp/hover_pass_values.py")
    h = hover(analysis, line, col)
    assert h is not None
    return h.markdown


def _cpython_values() -> list[int]:
    """The values `d` takes when `helper(False)` runs in CPython."""
    seen: list[int] = []
    scope: dict = {}
    exec(compile(SOURCE.replace("out.append(d)", "out.append(d); seen.append(d)"), "<fixture>", "exec"),
         {"__name__": "fixture", "seen": seen}, scope)
    scope["helper"](False)
    return seen


def test_a_loop_reached_only_by_the_hover_pass_shows_each_value() -> None:
    # `else:` is not reached by main()'s call (flag=True): only the hover pass runs it.
    text = _hover(8, 12)  # `for d in range(2):`
    assert _cpython_values() == [0, 1]
    assert text == "**d**: one of (depending on the call):\n- `0`\n- `1`"
    assert _hover(9, 23) == text  # `out.append(d)`


def test_a_line_a_context_reached_keeps_that_context_value() -> None:
    # `if flag:` ran in main()'s call: the hover pass (flag unknown) adds nothing there.
    assert _hover(5, 7) == "**flag**: `True` (from main() at line 15)"
