"""The device a library asks about, while one of its tests runs as a context.

Library code picks its kernel by the GPU it runs on: tokamax's `gpu_utils.is_sm90()` reads
`jax.extend.backend.get_default_device().compute_capability`, its tests skip on
`jax.default_backend() == "tpu"`. Outside a test context nothing here is known (no device is
asked: the analysis runs on no machine). In a test context of a kernel module, the context is
the op run on that module's GPU (entry/op_dispatch.py: `ProgramHooks.gpu_capability`, read from
the Mosaic GPU API the module uses — `plgpu.wgmma` is Hopper's, `tcgen05` Blackwell's,
`plgpu.mma` alone Ampere's): the
default device is a GPU of that compute capability, the default backend "gpu", and the first of
`jax.devices()` that GPU (how many there are is not known: only item 0 is).
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, Const, Value, Wrapped
from wgmma_lsp.models.registry import GETITEM, attribute, model

#: compute capability -> (device_kind, core_count) of the GPU a test context runs on.
STAND_INS: dict[str, tuple[str, int]] = {
    "8.0": ("NVIDIA A100-SXM4-80GB", 108),
    "9.0": ("NVIDIA H100 80GB HBM3", 132),
    "10.0": ("NVIDIA B200", 148),
}


def _capability(call: Call) -> str | None:
    hooks = call.interp.program_hooks
    return getattr(hooks, "gpu_capability", None) if hooks is not None else None


@model("jax.extend.backend.get_default_device")
def _get_default_device(call: Call) -> Value:
    """`get_default_device()`: in a test context, a GPU of the module's compute capability."""
    cap = _capability(call)
    if cap is None or call.args or call.kwargs:
        return UNKNOWN
    fields: dict[str, Value] = {"platform": Const("gpu"), "compute_capability": Const(cap)}
    if cap in STAND_INS:
        kind, cores = STAND_INS[cap]
        fields |= {"device_kind": Const(kind), "core_count": Const(cores)}
    return Wrapped("jax.Device", UNKNOWN, fields)


def first_device(call: Call) -> Value:
    """The first of `jax.devices()` (models/collectives.py): the stand-in GPU in a test context."""
    return _get_default_device(call) if not call.args and not call.kwargs else UNKNOWN


def _device_item(interp: object, obj: Value, index: Value, node: object) -> Value:
    """`jax.devices()[0]`; any other item is not known."""
    if isinstance(obj, Wrapped) and isinstance(index, Const) and type(index.value) is int and index.value == 0:
        return obj.kwargs.get("first", UNKNOWN)
    return UNKNOWN


GETITEM["wrapped:jax.devices"] = _device_item


@model("jax.default_backend")
def _default_backend(call: Call) -> Value:
    return Const("gpu") if _capability(call) is not None and not call.args and not call.kwargs else UNKNOWN


def _device_field(name: str) -> None:
    """`device.<name>`: what the stand-in holds, unknown where it holds nothing."""
    attribute(f"wrapped:jax.Device.{name}")(
        lambda obj: obj.kwargs.get(name, UNKNOWN) if isinstance(obj, Wrapped) else UNKNOWN)


for _field in ("platform", "compute_capability", "core_count", "device_kind"):
    _device_field(_field)
