"""Which names mean which JAX API objects, through any import spelling.

Every module path a kernel author can import the Mosaic GPU API from is mapped to a short
canonical prefix (`plgpu.`, `pl.`, `jnp.`, `lax.`), and a few aliases to one canonical name
(`plgpu.WGMMAAccumulatorRef` is `plgpu.ACC`). Models are registered under canonical names.
"""

from __future__ import annotations

# Longest prefix first. Private module paths appear in real kernels and in JAX's own docs.
MODULE_PREFIXES: list[tuple[str, str]] = sorted([
    ("jax.experimental.pallas.mosaic_gpu", "plgpu"),
    ("jax._src.pallas.mosaic_gpu.primitives", "plgpu"),
    ("jax._src.pallas.mosaic_gpu.core", "plgpu"),
    ("jax._src.pallas.mosaic_gpu.helpers", "plgpu"),
    ("jax._src.pallas.mosaic_gpu.pipeline", "plgpu"),
    ("jax._src.pallas.mosaic_gpu", "plgpu_private"),
    ("jax.experimental.pallas.tpu", "pltpu"),
    ("jax.experimental.pallas.triton", "plgpu_triton"),
    ("jax.experimental.pallas", "pl"),
    # JAX 0.12.1's preferred paths: `jax.experimental.pallas[.mosaic_gpu]` became their aliases
    ("jax.pallas.mosaic_gpu", "plgpu"),
    ("jax.pallas.tpu", "pltpu"),
    ("jax.pallas", "pl"),
    ("jax._src.pallas.primitives", "pl"),
    ("jax._src.pallas.pallas_call", "pl"),
    ("jax._src.pallas.core", "pl"),
    ("jax._src.pallas.helpers", "pl"),
    ("jax._src.state.discharge", "pl"),
    ("jax._src.pallas", "pl_private"),
    ("jax.numpy", "jnp"),
    ("jax._src.numpy.lax_numpy", "jnp"),
    ("jax.lax", "lax"),
    ("jax._src.lax.lax", "lax"),
    ("jax.experimental.mosaic.gpu", "mgpu"),
    ("jax", "jax"),
    ("numpy", "np"),
    ("ml_dtypes", "ml_dtypes"),
    ("functools", "functools"),
    ("dataclasses", "dataclasses"),
    ("math", "math"),
    ("itertools", "itertools"),
    ("typing", "typing"),
    ("enum", "enum"),  # (enum, pydantic, abc: classes the interpreter knows, interpret/classes.py)
    ("pydantic", "pydantic"),
    ("abc", "abc"),
    ("jaxtyping", "jaxtyping"),
    ("typing_extensions", "typing_extensions"),
    ("absl", "absl"),
    ("concurrent", "concurrent"),
    ("flax", "flax"),  # (`@flax.struct.dataclass`: a frozen dataclass, registered as a pytree)
    ("einshape", "einshape"),  # (models/einshape.py)
], key=lambda p: -len(p[0]))

#: JAX's kernel-ops package: ordinary kernel code written against the public API (the shipped
#: `*_mgpu.py` kernels import each other from it), not API the import table models. Its modules
#: are read as code from the installed jax (see `wgmma_lsp.program.lookup.find_kernel_ops`).
KERNEL_OPS_PACKAGE = "jax.experimental.pallas.ops"


def is_kernel_ops(dotted: str | None) -> bool:
    """`jax.experimental.pallas.ops` or one of its submodules."""
    return bool(dotted) and (dotted == KERNEL_OPS_PACKAGE
                             or dotted.startswith(KERNEL_OPS_PACKAGE + "."))  # type: ignore[union-attr]


ALIASES: dict[str, str] = {
    "plgpu.WGMMAAccumulatorRef": "plgpu.ACC",
    "plgpu.GPUMemorySpace": "plgpu.MemorySpace",
    "jax.numpy": "jnp",
    "jax.lax": "lax",
    "jax.experimental.pallas": "pl",
    "jax.pallas": "pl",
    "plgpu.ShapeDtypeStruct": "jax.ShapeDtypeStruct",
    "jnp.array": "jnp.asarray",
    "jax.lax.fori_loop": "lax.fori_loop",
}


def canonical_module(dotted: str) -> str | None:
    """`jax.experimental.pallas.mosaic_gpu` -> `plgpu`; unknown modules -> None."""
    for prefix, short in MODULE_PREFIXES:
        if dotted == prefix:
            return short
        if dotted.startswith(prefix + "."):  # longest prefix first: the most specific wins
            return f"{short}.{dotted[len(prefix) + 1:]}"
    return None


def canonical_name(module: str, attr: str) -> str:
    """The canonical name of `module.attr`, where `module` is already canonical."""
    full = f"{module}.{attr}"
    # A submodule reached by attribute (`jax.numpy`, `pl.mosaic_gpu`) is a module.
    return ALIASES.get(full, full)


def is_module_name(canonical: str) -> bool:
    return canonical in _KNOWN_MODULES


_KNOWN_MODULES = {short for _, short in MODULE_PREFIXES} | {"jax.experimental", "jax._src"}
SUBMODULES: dict[str, str] = {
    "jax.numpy": "jnp", "jax.lax": "lax", "jax.experimental": "jax.experimental",
    "jax.experimental.pallas": "pl", "pl.mosaic_gpu": "plgpu", "pl.tpu": "pltpu", "jax.pallas": "pl",
    "jax.nn": "jax.nn", "jax.random": "jax.random", "jax.dtypes": "jax.dtypes",
    "concurrent.futures": "concurrent.futures",
}
