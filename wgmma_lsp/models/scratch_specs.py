"""Scratch specs as the Python objects they are (jax/_src/pallas/mosaic_gpu/core.py), for library
code that reads them (tokamax's `estimate_smem_bytes(scratch_types)`):

- `isinstance(x, plgpu.RefUnion / plgpu.Barrier / plgpu.ClusterBarrier)`: a `RefUnion(...)` is a
  RefUnion; `Barrier(...)` a Barrier, `ClusterBarrier(...)` a ClusterBarrier; `SMEM/TMEM/GMEM(...)`
  (`GPUMemoryRef`s) and `ACC(...)` (`WGMMAAccumulatorRef`) none of them; Python numbers, strings,
  None, tuples, lists and dicts none of them.
- attributes: a memory ref's `shape`, `dtype`, `memory_space` (a union's: its int8 buffer's); an
  accumulator's `shape`, `dtype` (no `memory_space`); a barrier's `num_barriers` (a tuple: its
  `__post_init__` makes one), `num_arrivals` (no `memory_space`, `shape` or `dtype`) —
  `getattr(x, "memory_space", None)` is None where the class has no such attribute.
"""

from __future__ import annotations

from wgmma_lsp.interpret.values import (
    UNKNOWN,
    AllocSpec,
    ApiVal,
    Const,
    DictVal,
    DTypeVal,
    TupleVal,
    Value,
    dim_value,
)
from wgmma_lsp.models.ref_union import RefUnionSpec
from wgmma_lsp.models.registry import ATTRIBUTES, HAS_ATTRIBUTE, INSTANCE_CHECKS

_SPACE_OF = {"smem": "plgpu.MemorySpace.SMEM", "tmem": "plgpu.MemorySpace.TMEM",
             "gmem": "plgpu.MemorySpace.GMEM"}


def _class_of(v: Value) -> str | None:
    """Which of the spec classes `v` is an object of: "RefUnion", "Barrier", "ClusterBarrier",
    "GPUMemoryRef", "WGMMAAccumulatorRef", "builtin" (a Python constant or container); None:
    not known."""
    if isinstance(v, RefUnionSpec):
        return "RefUnion"
    if isinstance(v, AllocSpec):
        if v.kind == "barrier":
            name = getattr(v.inner.dtype, "name", None)
            return {"barrier": "Barrier", "cluster_barrier": "ClusterBarrier"}.get(name or "")
        if v.kind == "acc":
            return "WGMMAAccumulatorRef"
        if v.kind in ("smem", "tmem") or v.kind == "gmem" and getattr(v.inner.dtype, "name", "") != "semaphore":
            return "GPUMemoryRef"
        return None
    if isinstance(v, (Const, DictVal)) or type(v) is TupleVal:
        return "builtin"
    return None


def _instance_check(cls_name: str):
    def check(v: Value) -> bool | None:
        of = _class_of(v)
        return None if of is None else of == cls_name
    return check


for _name in ("RefUnion", "Barrier", "ClusterBarrier"):
    INSTANCE_CHECKS[f"plgpu.{_name}"] = _instance_check(_name)

_ATTRS = {"GPUMemoryRef": {"shape", "dtype", "memory_space", "transforms", "layout", "collective"},
          "RefUnion": {"shape", "dtype", "memory_space", "transforms", "layout", "collective", "refs"},
          "WGMMAAccumulatorRef": {"shape", "dtype"},
          "Barrier": {"num_arrivals", "num_barriers", "orders_tensor_core"},
          "ClusterBarrier": {"collective_axes", "num_arrivals", "num_barriers", "orders_tensor_core",
                             "leader_tracked"}}
_LISTED = set().union(*_ATTRS.values())
#: Attributes every object has (methods of `object`).
_OBJECT = {"__class__", "__dict__", "__doc__", "__eq__", "__hash__", "__repr__", "__str__"}


def _has(obj: Value, name: str) -> bool | None:
    of = _class_of(obj)
    if of is None or of == "builtin" or name.startswith("_"):
        return None if name not in _OBJECT else True
    if name in _ATTRS[of]:
        return True
    return False if name in _LISTED else None  # (other names: methods, not listed here)


HAS_ATTRIBUTE["AllocSpec"] = HAS_ATTRIBUTE["RefUnionSpec"] = _has


def _shape(v: AllocSpec) -> Value:
    if _class_of(v) not in ("GPUMemoryRef", "WGMMAAccumulatorRef") or v.inner.shape is None:
        return UNKNOWN
    return TupleVal(tuple(dim_value(d) for d in v.inner.shape))


def _dtype(v: AllocSpec) -> Value:
    if _class_of(v) not in ("GPUMemoryRef", "WGMMAAccumulatorRef") or v.inner.dtype is None:
        return UNKNOWN
    return DTypeVal(v.inner.dtype)


def _memory_space(v: Value) -> Value:
    if isinstance(v, RefUnionSpec):
        return ApiVal(_SPACE_OF[v.space])
    if isinstance(v, AllocSpec) and _class_of(v) == "GPUMemoryRef":
        return ApiVal(_SPACE_OF[v.kind])
    return UNKNOWN


def _num_barriers(v: AllocSpec) -> Value:
    if _class_of(v) not in ("Barrier", "ClusterBarrier") or v.inner.shape is None:
        return UNKNOWN
    return TupleVal(tuple(dim_value(d) for d in v.inner.shape))


def _num_arrivals(v: AllocSpec) -> Value:
    if _class_of(v) not in ("Barrier", "ClusterBarrier") or v.arrivals is None:
        return UNKNOWN
    return Const(v.arrivals)


def _union_dtype(v: RefUnionSpec) -> Value:
    """A union's buffer is int8 bytes (`RefUnion.__init__`: `dtype=jnp.int8`)."""
    from wgmma_lsp.interpret.dtypes import DType

    return DTypeVal(DType("int8")) if v.space == "smem" else UNKNOWN


def _union_shape(v: RefUnionSpec) -> Value:
    return TupleVal((Const(v.num_bytes),)) if v.num_bytes is not None and v.space == "smem" else UNKNOWN


ATTRIBUTES["alloc.shape"] = _shape
ATTRIBUTES["alloc.dtype"] = _dtype
ATTRIBUTES["alloc.memory_space"] = _memory_space
ATTRIBUTES["alloc.num_barriers"] = _num_barriers
ATTRIBUTES["alloc.num_arrivals"] = _num_arrivals
ATTRIBUTES["RefUnionSpec.memory_space"] = _memory_space
ATTRIBUTES["RefUnionSpec.shape"] = _union_shape
ATTRIBUTES["RefUnionSpec.dtype"] = _union_dtype
