"""Hover text is Markdown: names and messages in it are shown literally, rendered the way VS
Code renders hovers (markdown-it, CommonMark) — `__main__` is not bold, JAX's backticks stay."""

from __future__ import annotations

from markdown_it import MarkdownIt

from wgmma_lsp.analysis import analyze
from wgmma_lsp.ide.hover import escape, escape_prose, hover

SOURCE = '''import jax
import jax.numpy as jnp
from jax.experimental.pallas import mosaic_gpu as plgpu


def kernel(a_ref, o_ref):
  __tile__ = a_ref[...]
  o_ref[...] = __tile__.astype(jnp.bfloat16)


if __name__ == "__main__":
  for n in (64, 128):
    a = jax.ShapeDtypeStruct((n, 64), jnp.float32)
    jax.make_jaxpr(plgpu.kernel(kernel, out_type=jax.ShapeDtypeStruct(a.shape, a.dtype)))(a)
'''


def html(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def test_names_and_contexts_render_literally() -> None:
    line = SOURCE.splitlines().index("  o_ref[...] = __tile__.astype(jnp.bfloat16)")
    info = hover(analyze(SOURCE, "k.py"), line, SOURCE.splitlines()[line].index("__tile__") + 2)
    assert info is not None
    out = html(info.markdown)
    assert "<strong>tile</strong>" not in out and "<strong>main</strong>" not in out
    assert "<strong>__tile__</strong>" in out  # the name, bold as a whole
    assert "from the __main__ block at line 14" in out
    # JAX's message keeps its backticks; the fix titles keep their code spans.
    assert "Invalid dtype for `swap`." in out
    assert "<code>.astype(o_ref.dtype)</code>" in out


def test_escape_round_trips_through_a_markdown_renderer() -> None:
    for text in ["__main__", "*args and **kwargs", "a_b_c", "_x", "x[0] = `y`", "[a](b)", "<T> | ~~z~~",
                 "# not a heading", "sm_90 \\"]:
        assert html(escape(text)) == f"<p>{_html_text(text)}</p>\n", text
    assert html(escape_prose("see `__x__` and __y__")) == "<p>see <code>__x__</code> and __y__</p>\n"


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
