"""What collective kernels ask of the machine and of other devices.

- `pl.get_global(what)` (jax._src.pallas.primitives.get_global): a ref of `what.get_ref_aval()`
  that persists across kernel invocations; for `plgpu.SemaphoreType.REGULAR` (or `.BARRIER`)
  that is `Ref<gmem>{semaphore[]}` (`barrier_semaphore[]`), as `SemaphoreType.__call__(())`
  builds it (jax._src.pallas.mosaic_gpu.core).
- `plgpu.SemaphoreType.REGULAR(shape)`: `MemoryRef(ShapedArray(shape, Semaphore()), GMEM)`.
- `plgpu.remote_ref(ref, device_id)` (mosaic_gpu.core.remote_ref): the same ref on another
  device, a `TransformedRef` whose extra `PeerMemRef` transform changes neither shape, dtype
  nor memory space (its `transform_type` is the identity).
- The machine's device counts (`jax.device_count()`, `jax.local_device_count()`,
  `jax.process_count()`, `len(jax.devices())`) are not known without running: each is one
  symbol (`jax.device_count()`), the same for every call in the program, so that sizes built
  from it (`(num_devices - 1, m_shard, k)`) stay known by name and compare equal to each other.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    AllocSpec,
    ApiVal,
    ArrayVal,
    RefVal,
    SymInt,
    TransformVal,
    Value,
    Wrapped,
    as_shape,
)
from wgmma_lsp.models.registry import model

#: One symbol per machine fact: every call returns the same value within a program.
DEVICE_COUNT = D.Sym.var("jax.device_count()")
LOCAL_DEVICE_COUNT = D.Sym.var("jax.local_device_count()")
PROCESS_COUNT = D.Sym.var("jax.process_count()")

_SEMAPHORES = {"plgpu.SemaphoreType.REGULAR": "semaphore",
               "plgpu.SemaphoreType.BARRIER": "barrier_semaphore"}


def semaphore_spec(name: str, shape: tuple[D.Dim, ...] | None = ()) -> AllocSpec | None:
    """`SemaphoreType.X(shape)`: a GMEM allocation of semaphores (None for other names)."""
    dtype = _SEMAPHORES.get(name)
    if dtype is None:
        return None
    return AllocSpec("gmem", ArrayVal(shape, DType(dtype)))


def _semaphore_call(name: str):
    def fn(call: Call) -> Value:
        shape = as_shape(call.get(0, "shape"))
        spec = semaphore_spec(name, shape)
        if spec is None or shape is None:
            return UNKNOWN
        return AllocSpec(spec.kind, spec.inner, span=call.span)
    return fn


for _name in _SEMAPHORES:
    model(_name)(_semaphore_call(_name))


@model("pl.get_global")
def _get_global(call: Call) -> Value:
    """`pl.get_global(what)`: `get_global_p.bind(what=what.get_ref_aval())`, whose abstract eval
    returns that ref aval unchanged."""
    what = call.get(0, "what")
    if isinstance(what, ApiVal):
        spec = semaphore_spec(what.name)
        if spec is None:
            return UNKNOWN
        return spec.to_ref(call.span, "pl.get_global")
    if isinstance(what, AllocSpec) and what.kind in ("smem", "gmem", "barrier") and what.init is None:
        return what.to_ref(what.span or call.span, "pl.get_global")
    return UNKNOWN


@model("plgpu.remote_ref")
def _remote_ref(call: Call) -> Value:
    """`plgpu.remote_ref(ref, device_id)`: the peer's copy of `ref` (shape, dtype and memory
    space unchanged). JAX raises for a non-ref and for a multicast ref: both stay unknown here
    (a transform this analyzer does not know could be a multicast one)."""
    ref = call.get(0, "ref")
    if not isinstance(ref, RefVal) or ref.kind != "plain":
        return UNKNOWN
    if any(t.kind not in ("index", "tiling", "swizzle", "transpose", "reshape", "peer")
           for t in ref.transforms):
        return UNKNOWN
    return RefVal(ref.inner, ref.space, ref.kind, ref.transforms + (TransformVal("peer"),),
                  base=ref.root(), origin=ref.origin, origin_desc=ref.origin_desc,
                  spec_span=ref.spec_span, attrs=ref.attrs)


@model("jax.device_count")
def _device_count(call: Call) -> Value:
    """`jax.device_count(backend=None)`: the default backend's device count (unknown: one symbol)."""
    return SymInt(DEVICE_COUNT) if not call.args and not call.kwargs else UNKNOWN


@model("jax.local_device_count")
def _local_device_count(call: Call) -> Value:
    return SymInt(LOCAL_DEVICE_COUNT) if not call.args and not call.kwargs else UNKNOWN


@model("jax.process_count")
def _process_count(call: Call) -> Value:
    return SymInt(PROCESS_COUNT) if not call.args and not call.kwargs else UNKNOWN


@model("jax.devices")
def _devices(call: Call) -> Value:
    """`jax.devices()`: the default backend's devices, `jax.device_count()` of them (`len` is
    read by `builtins.len`); which devices they are is not modelled, but for the first in a
    test context (models/devices.py: the stand-in GPU)."""
    from wgmma_lsp.models.devices import first_device

    if call.args or call.kwargs:
        return UNKNOWN
    return Wrapped("jax.devices", UNKNOWN, {"len": SymInt(DEVICE_COUNT), "first": first_device(call)})
