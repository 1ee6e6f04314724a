"""`flax.linen.dot_product_attention(query, key, value, ...)`: the aval of its result.

Kernel libraries test their attention against it (tokamax's attention tests: `ref_impl=
nn.dot_product_attention`, then `jax.vjp` of it gives the cotangent's shape for the kernel's
backward pass). flax is a third-party package the program layer does not read; its function's
result is, per its source (`flax/linen/attention.py`): `promote_dtype(query, key, value,
dtype=dtype)` casts all three to one inexact dtype (the given `dtype`, else their
`jnp.result_type`), and `einsum('...hqk,...khd->...qhd', weights, value)` gives
`[batch..., q_length, num_heads, v_depth]` in that dtype. Its asserts (same rank, batch dims,
heads, k/v lengths) must be proven to hold, and every keyword must be one of its parameters;
anything else (integer inputs, unknown sizes, an argument it would reject) is unknown.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, DTypeVal, Value
from wgmma_lsp.models.registry import model

_PARAMS = ("query", "key", "value", "bias", "mask", "broadcast_dropout", "dropout_rng", "dropout_rate",
           "deterministic", "dtype", "precision", "module", "force_fp32_for_softmax", "einsum_dot_general",
           "qk_attn_weights_einsum", "attn_weights_value_einsum")


def _array(v: Value) -> ArrayVal | None:
    if isinstance(v, ArrayVal) and v.shape is not None and isinstance(v.dtype, DType) \
            and all(isinstance(d, int) for d in v.shape):
        return v
    return None


@model("flax.linen.dot_product_attention", "flax.linen.attention.dot_product_attention")
def _dot_product_attention(call: Call) -> Value:
    if not call.complete or len(call.args) > len(_PARAMS) \
            or any(k not in _PARAMS for k in call.kwargs) \
            or any(k in _PARAMS[:len(call.args)] for k in call.kwargs):
        return UNKNOWN
    q, k, v = (_array(call.get(i, name)) for i, name in enumerate(("query", "key", "value")))
    if q is None or k is None or v is None:
        return UNKNOWN
    qs, ks, vs = tuple(q.shape), tuple(k.shape), tuple(v.shape)  # type: ignore[arg-type]
    if not (len(qs) == len(ks) == len(vs) >= 3 and qs[:-3] == ks[:-3] == vs[:-3]
            and qs[-2] == ks[-2] == vs[-2] and ks[-3] == vs[-3] and qs[-1] == ks[-1]):
        return UNKNOWN  # (an assert of flax's, or the q.k einsum, fails: not followed)
    given = call.get(9, "dtype", Const(None))
    if isinstance(given, Const) and given.value is None:
        dtypes = [q.dtype, k.dtype, v.dtype]
        if not all(isinstance(d, DType) and T.is_floating(d) for d in dtypes):
            return UNKNOWN  # (integer inputs are promoted with float32: not followed)
        dtype = T.result_type(*dtypes)  # type: ignore[arg-type]
    elif isinstance(given, DTypeVal) and isinstance(given.dtype, DType) and T.is_floating(given.dtype):
        dtype = given.dtype
    else:
        return UNKNOWN
    if dtype is None:
        return UNKNOWN
    return ArrayVal(qs[:-1] + vs[-1:], T.canonicalize(DType(dtype.name)), jax=True)
