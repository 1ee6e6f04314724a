"""`plgpu.load` with a transposed register layout from a ref that is not transposed: WG104.

Mirrors (jax 0.10.2) jax/_src/pallas/mosaic_gpu/lowering.py `_get_lowering_rule` (Lane): the
value is transposed when the layout hint is `WGMMA_TRANSPOSED` (or `TCGEN05_TRANSPOSED`), the
ref when its last transform is a transpose; "Either both the ref and the value are transposed
or neither is." when they differ, on the load's line. Claimed for JAX 0.10, Lane, a transposed
layout, and a 2-D SMEM ref tiled and swizzled by its allocation or block, not viewed.
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.jax_version import installed
from wgmma_lsp.interpret.values import Const, RefVal, TupleVal, Value, is_unknown
from wgmma_lsp.models import refs  # noqa: F401 - its plgpu.load model is wrapped below
from wgmma_lsp.models.registry import MODELS
from wgmma_lsp.rules import load_transposed_layout

_TRANSPOSED = {"plgpu.Layout.WGMMA_TRANSPOSED", "plgpu.Layout.TCGEN05_TRANSPOSED"}


def transposed_hint_on_plain_ref(call: Call) -> bool:
    ref, lay = call.get(0, "src"), call.get(99, "layout", Const(None))
    if is_unknown(lay) or lay.describe() not in _TRANSPOSED:
        return False
    if not (isinstance(ref, RefVal) and ref.kind == "plain" and ref.space == "smem" and ref.base is None):
        return False
    kinds = [t.kind for t in ref.transforms]
    return kinds == ["tiling", "swizzle"] and ref.shape is not None and len(ref.shape) == 2


def _wrap() -> None:
    original = MODELS["plgpu.load"]

    def wrapped(call: Call) -> Value:
        out = original(call)
        v = installed()
        idx = call.get(1, "idx", Const(None))
        whole = isinstance(idx, TupleVal) and not idx.items
        if call.interp.kernel.lowering == "lane" and v is not None and v[:2] == (0, 10) and whole \
                and call.complete and transposed_hint_on_plain_ref(call):
            call.interp.report(load_transposed_layout.RULE, load_transposed_layout.MESSAGE, call.span, call.line)
        return out

    MODELS["plgpu.load"] = wrapped


#: When `registry.load_all` installs this module's extensions of other models (lower first).
INSTALL_ORDER = 41


def install() -> None:
    """Extend the plgpu.load model (called once by `registry.load_all`)."""
    _wrap()
