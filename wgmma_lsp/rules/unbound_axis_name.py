"""WG113 unbound-axis-name: `lax.axis_index`, `lax.axis_size` or `plgpu.nd_loop(collective_axes=)`
inside a `plgpu.kernel` body names an axis the kernel does not have (its `grid_names`,
`cluster_names`, `thread_name`; a `pl.pallas_call`'s named grid) and no enclosing
`shard_map`/`vmap` binds: JAX's `NameError` while the kernel is traced."""

from __future__ import annotations

import difflib

from wgmma_lsp.ide_model import Fix
from wgmma_lsp.rules.base import Finding, Rule, doc_path
from wgmma_lsp.rules.fixes_common import replace, text_of


def fixes(finding: Finding, source: str) -> list[Fix]:
    """The bound names spelled most like the missing one (a typo: `"blocks"` for `"block"`), the
    closest preferred; none when no bound name is close (a missing axis is added to the kernel's
    call, not guessed: see the documentation)."""
    d = finding.data
    span = d.get("name_span")
    if span is None:
        return []
    literal = text_of(source, span)
    quote = literal[:1] if literal[:1] in ("'", '"') and literal[-1:] == literal[:1] else '"'
    close = [n for n in difflib.get_close_matches(d["missing"], d["bound"], n=3, cutoff=0.6)
             if n.isidentifier()]  # (spelled as is between quotes)
    return [replace(f"Use the bound axis name {name!r}", span, f"{quote}{name}{quote}", preferred=i == 0)
            for i, name in enumerate(close)]


RULE = Rule(
    code="WG113",
    name="unbound-axis-name",
    apis=("lax.axis_index", "lax.axis_size", "plgpu.nd_loop"),
    summary="An axis name used inside a plgpu.kernel body must be one of the kernel's grid_names, "
            "cluster_names or thread_name (in a pallas_call: of its named grid), or bound by an "
            "enclosing shard_map / vmap.",
    template="Found an unbound axis name: {name}. To fix this, please call {api_name} under "
             "`jax.shard_map`.",
    exception="NameError",
    jax_source="jax/_src/lax/parallel.py: _check_axis_names (lax.axis_index); "
               "jax/_src/core.py: AxisEnv.axis_size (lax.axis_size)",
    doc_file=doc_path(__file__),
    fixes=fixes,
    fix_summary="use the bound axis name it is a typo of",
    table_message="`Found an unbound axis name: x. To fix this, please call axis_index under "
                  "`jax.shard_map`.` / `unbound axis name: x` (lax.axis_size)",
)

#: `lax.axis_size(name)`'s words (jax/_src/core.py), 0.10.2 to 0.12.1.
SIZE_TEMPLATE = "unbound axis name: {name}"


def index_message(name: str) -> str:
    return RULE.installed_template().format(name=name, api_name="axis_index")


def size_message(name: str) -> str:
    return SIZE_TEMPLATE.format(name=name)
