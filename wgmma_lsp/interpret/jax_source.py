"""Facts about the installed JAX, read statically from its own source (it is never imported).

The public Pallas API (`pl.*`, `plgpu.*`) moves between JAX versions: keywords are renamed,
parameters dropped, functions removed. Rather than a table per version, the analyzer reads the
installed package: which names `jax.experimental.pallas[.mosaic_gpu]` exports (and which are
deprecated or removed, from its `_deprecations` table), and the parameters of each exported
function or class, so that a call the installed JAX rejects can be reported with Python's own
`TypeError` text. Everything is parsed with `ast`, once per JAX: the facts read here are kept as
one object (interpret/jax_facts.py), cached on disk, and bundled for when the analysed
environment (environment.py) has no JAX. The `_read_*` functions and `_exports` read the source;
the public functions answer from those facts.

What cannot be read reliably (an unknown decorator, a metaclass, a class with its own `__new__`)
gives no signature: no check, no error.
"""

from __future__ import annotations

from wgmma_lsp.interpret import jax_facts, jax_lowering_rules, jax_reduction_scratch
from wgmma_lsp.interpret.jax_api_types import Export, Param, Signature  # noqa: F401  (re-exported)
# The readers, re-exported: callers that read the source directly (tests, API docs) name them here.
from wgmma_lsp.interpret.jax_source_read import (  # noqa: F401
    ALIAS_MODULES,
    PUBLIC_MODULES,
    _LAYOUT_FAILURE_PREFIX,
    _LAYOUT_INFERENCE,
    _MIXED_DTYPES,
    _PLAIN_BASES,
    _SIGNATURE_KEEPING,
    _annotated_fields,
    _class_signature,
    _dataclass_params,
    _decorator_name,
    _deprecation,
    _exports,
    _field_info,
    _files_read,
    _find_def,
    _forwarding,
    _function_params,
    _imports,
    _is_classvar,
    _is_dataclass,
    _is_swizzle_only_case,
    _jax_root_and_version,
    _module_file,
    _own_init,
    _parse,
    _read_layout_failure,
    _read_pallas_call_lowers_mosaic_gpu,
    _read_signature,
    _read_swizzle_only,
    _read_tracer_memory_space_raises,
    _read_wgmma_mixable_dtypes,
    _resolve_class,
    _signature_in,
    _source_contains,
    _tree,
    files_read,
    jax_root,
    read_source,
    start_reading,
    stop_reading,
)


def _facts() -> jax_facts.JaxFacts:
    return jax_facts.current()


def export(canonical: str) -> Export | None:
    """`plgpu.kernel` -> where the installed JAX defines it; an Export with `removed_message`
    (or with no module) for a removed name; None when the module cannot be read, or for a
    name it neither exports nor lists as removed (see `missing_attribute`)."""
    prefix, _, name = canonical.partition(".")
    module = PUBLIC_MODULES.get(prefix)
    if module is None or not name or "." in name:
        return None
    table = _facts().exports.get(module)
    return table.get(name) if table is not None else None


def exports_of(module: str) -> dict[str, Export] | None:
    """The names public module `module` (`jax.experimental.pallas`, or an alias path such as
    `jax.pallas`) exports, with the ones its `_deprecations` serve; None when not read."""
    return _facts().exports.get(module)


def missing_attribute(canonical: str, module: str | None = None) -> str | None:
    """The AttributeError text the installed JAX gives for `plgpu.name` / `pl.name` when the
    name is not there (removed, or not added yet); None when it exists or cannot be known.
    `module`: the public module it is read from, when another spelling of the prefix's
    (`jax.pallas.mosaic_gpu`, whose errors name it; default: `PUBLIC_MODULES[prefix]`)."""
    prefix, _, name = canonical.partition(".")
    module = module or PUBLIC_MODULES.get(prefix)
    if module is None or not name or "." in name or name.startswith("__"):
        return None
    table = _facts().exports.get(module)
    if not table:
        return None
    exp = table.get(name)
    if exp is None:
        return f"module {module!r} has no attribute {name!r}"
    return exp.removed_message


def deprecated_params(canonical: str) -> dict[str, list] | None:
    """The parameters of `plgpu.name` / `pl.name` the analysed JAX deprecates: name ->
    [JAX's message, the parameter it aliases or None] (interpret/jax_deprecations.py)."""
    return _facts().deprecated_params.get(canonical)


def signature(canonical: str) -> Signature | None:
    """The parameters of the analysed JAX's `plgpu.name` / `pl.name`; None when unknown."""
    return _facts().signatures.get(canonical)


def tracer_memory_space_raises() -> bool | None:
    """Whether a traced value's `.memory_space` raises (JAX 0.12's `Tracer.memory_space`):
    then `plgpu.transpose_ref` on a kernel ref fails."""
    return _facts().tracer_memory_space_raises


def pallas_call_lowers_mosaic_gpu() -> bool | None:
    """Whether the analysed JAX registers a `pallas_call` lowering for Mosaic GPU
    `CompilerParams` (JAX 0.10 does, in mosaic_gpu/pallas_call_registration.py; 0.12 does not:
    its Mosaic GPU kernels go through `plgpu.kernel`, and `pl.pallas_call` with those params
    fails `assert rule is not None`)."""
    return _facts().pallas_call_lowers_mosaic_gpu


def layout_failure_message() -> str | None:
    """The text of layout inference's generic failure (`ValueError("Failed to infer a possible
    set of layouts. …")`) in the installed JAX: 0.12 appends how to dump the constraint system.
    None when it cannot be read or the file raises more than one such text."""
    return _facts().layout_failure_message


def layout_inference_takes_swizzle_only() -> bool | None:
    """Whether Warpgroup layout inference accepts an SMEM ref transformed by a swizzle alone
    (`case [mgpu.SwizzlingMode() as s]` in `_extract_smem_transforms_from_custom_transform_attrs`:
    JAX 0.12; 0.10 raises `NotImplementedError("Unsupported transforms [<SwizzlingMode…>]")`
    there). None when the installed source cannot be read."""
    return _facts().layout_inference_takes_swizzle_only


def wgmma_mixable_dtypes() -> frozenset[str] | None:
    """The operand dtypes `plgpu.wgmma` accepts mixed with each other in the installed JAX
    (empty: every mix is rejected, JAX 0.10; {float8_e4m3fn, float8_e5m2}: 0.12). None: unknown."""
    names = _facts().wgmma_mixable_dtypes
    return frozenset(names) if names is not None else None


# -- Mosaic GPU lowering rules (jax_lowering_rules.py) -----------------------------------------

def lowering_rule_registered(primitive: str, lowering: str, primitive_semantics: str = "warpgroup") -> bool | None:
    """Whether the analysed JAX's Mosaic GPU lowering has a rule for `primitive` (its variable's
    name: `dot_general_p`) under these semantics: True, False (proven missing), None (unknown)."""
    table = _facts().mosaic_lowering_rules
    prims = table.get(f"{lowering}/{primitive_semantics}") if table is not None else None
    if prims is None:
        return None
    if any(p.rsplit(".", 1)[-1] == primitive for p in prims):
        return True
    return None if jax_lowering_rules.UNKNOWN in prims else False


# -- reduction scratch (jax_reduction_scratch.py) ---------------------------------------------

def reduction_scratch_primitive(jnp_name: str) -> str | None:
    """The primitive `jnp.<jnp_name>` binds if the installed JAX reserves reduction scratch for
    it; None when it reserves none (or that is not known: see `reduction_scratch_known`)."""
    f = _facts().reduction_scratch
    prim = jax_reduction_scratch.JNP_REDUCTION_PRIMITIVE.get(jnp_name)
    if f is None or prim is None:
        return None
    return prim if prim in f["primitives"] else None


def reduction_scratch_known() -> bool:
    return _facts().reduction_scratch is not None


def reduction_scratch_default_bytes() -> int | None:
    f = _facts().reduction_scratch
    return f.get("default_bytes") if f is not None else None
