"""WG091 api-removed: a `plgpu.*`/`pl.*` name the installed JAX does not have (removed, or not
added yet), read from the installed jax's own `jax/experimental/pallas[/mosaic_gpu].py`."""

from __future__ import annotations

from wgmma_lsp.rules.base import Rule, doc_path

RULE = Rule(
    code="WG091",
    name="api-removed",
    summary="The name is not in the installed JAX's jax.experimental.pallas[.mosaic_gpu] "
            "(removed, or newer than this JAX).",
    template="module {module!r} has no attribute {name!r}",
    table_message="`module 'jax.experimental.pallas.mosaic_gpu' has no attribute 'transform_ref'` / JAX's removal message (`pl.dot was deprecated in JAX v0.11.0, and removed …`)",
    exception="AttributeError",
    jax_source="the installed jax: jax/experimental/pallas/mosaic_gpu.py, jax/experimental/pallas/__init__.py (_deprecations)",
    doc_file=doc_path(__file__),
)
