"""`jax.nn`'s elementwise activations (jax/_src/nn/functions.py).

On a floating array each returns an array of the same shape and dtype (`swish` on bfloat16 is
bfloat16). On integers and bools they differ (`relu` keeps int32, `gelu` gives float32, `silu`
and `sigmoid` raise a TypeError), so there the value is not claimed.
"""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Value
from wgmma_lsp.models.arrays import as_array
from wgmma_lsp.models.registry import model

ACTIVATIONS = ("swish", "silu", "relu", "relu6", "gelu", "sigmoid", "softplus", "elu",
               "leaky_relu", "celu", "selu", "hard_swish", "hard_silu", "hard_sigmoid",
               "hard_tanh", "mish", "log_sigmoid", "soft_sign", "squareplus", "sparse_plus",
               "sparse_sigmoid", "tanh", "log_softmax", "softmax", "logistic")


def _activation(call: Call) -> Value:
    x = as_array(call.get(0, "x"))
    if x is None or x.dtype is None or x.dtype.symbolic or not T.is_floating(x.dtype):
        return UNKNOWN
    return ArrayVal(x.shape, x.dtype, x.layout)


for _name in ACTIVATIONS:
    model(f"jax.nn.{_name}")(_activation)
