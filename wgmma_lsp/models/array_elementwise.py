"""jax.numpy and jax.lax elementwise functions (`jnp.add`, `lax.max`, `jnp.exp`, `jnp.less`,
`jnp.divide`, ...), `jnp.where` / `lax.select`, `jnp.dot` / `jnp.matmul` / `lax.dot` and
`lax.optimization_barrier`: the broadcast shape and promoted dtype of the result.
(jax.nn's activations: nn_activations.py; cumsum, sort, flip: order_ops.py.)
"""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, TupleVal, Value
from wgmma_lsp.models.arrays import BOOL, _float_result, as_array, broadcast_shapes, elementwise, matmul, to_dtype
from wgmma_lsp.models.registry import model


_BINARY = ["add", "subtract", "multiply", "maximum", "minimum", "power", "remainder", "mod",
           "bitwise_and", "bitwise_or", "bitwise_xor", "floor_divide", "arctan2", "hypot",
           "copysign", "nextafter", "left_shift", "right_shift", "fmax", "fmin"]
_LAX_BINARY = ["add", "sub", "mul", "max", "min", "pow", "rem", "div", "atan2", "nextafter",
               "shift_left", "shift_right_logical", "shift_right_arithmetic", "bitwise_and",
               "bitwise_or", "bitwise_xor"]


def _binary(call: Call) -> Value:
    return elementwise(call.get(0), call.get(1))


for _n in _BINARY:
    model(f"jnp.{_n}")(_binary)
for _n in _LAX_BINARY:
    model(f"lax.{_n}")(_binary)


_COMPARE = ["logical_and", "logical_or", "logical_xor", "equal", "not_equal", "less", "less_equal",
            "greater", "greater_equal"]


def _bool_binary(call: Call) -> Value:
    """`jnp.logical_and(x, y)`, `jnp.less(x, y)`, ...: broadcast, bool result."""
    return elementwise(call.get(0), call.get(1), dtype=BOOL)


for _n in _COMPARE:
    model(f"jnp.{_n}")(_bool_binary)
for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    model(f"lax.{_n}")(_bool_binary)


@model("jnp.divide", "jnp.true_divide")
def _divide(call: Call) -> Value:
    r = elementwise(call.get(0), call.get(1))
    return ArrayVal(r.shape, _float_result(r.dtype)) if isinstance(r, ArrayVal) else UNKNOWN


_FLOAT_UNARY = ["exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "tanh", "sin",
                "cos", "tan", "arctan", "arcsin", "arccos", "sinh", "cosh", "erf", "logistic",
                "reciprocal", "cbrt", "sigmoid", "softplus", "relu", "gelu", "silu", "log_softmax",
                "softmax", "atan", "asin", "acos", "erf_inv", "erfc", "lgamma", "digamma"]
_SAME_UNARY = ["abs", "negative", "neg", "sign", "floor", "ceil", "round", "square", "conj",
               "real", "imag", "clip", "positive", "integer_pow", "logical_not", "bitwise_not",
               "not_", "invert", "stop_gradient", "cumprod", "cummax",  # (cumsum, sort, flip: order_ops.py)
               "tril", "triu", "nan_to_num", "clamp"]


def _float_unary(call: Call) -> Value:
    x = as_array(call.get(0))
    if x is None:
        return UNKNOWN
    return ArrayVal(x.shape, _float_result(x.dtype))


def _same_unary(call: Call) -> Value:
    x = call.get(0)
    if x is not None and isinstance(x, ArrayVal):
        return x
    return UNKNOWN


for _n in _FLOAT_UNARY:  # jax.nn's activations: models/nn_activations.py
    for _m in ("jnp", "lax"):
        model(f"{_m}.{_n}")(_float_unary)
for _n in _SAME_UNARY:
    for _m in ("jnp", "lax"):
        model(f"{_m}.{_n}")(_same_unary)


@model("lax.optimization_barrier", "jax.lax.optimization_barrier")
def _optimization_barrier(call: Call) -> Value:
    """`lax.optimization_barrier(x)`: the same pytree of arrays."""
    x = call.get(0)
    return x if isinstance(x, (ArrayVal, TupleVal)) else UNKNOWN


@model("jnp.where", "lax.select")
def _where(call: Call) -> Value:
    if len(call.args) != 3:
        return UNKNOWN
    c, x, y = call.args
    r = elementwise(x, y)
    cc = as_array(c)
    if not isinstance(r, ArrayVal) or cc is None:
        return UNKNOWN
    return ArrayVal(broadcast_shapes(cc.shape, r.shape), r.dtype)


@model("jnp.dot", "jnp.matmul", "lax.dot")
def _dot(call: Call) -> Value:
    pet = call.get(99, "preferred_element_type", Const(None))
    out = None if isinstance(pet, Const) and pet.value is None else to_dtype(pet)
    return matmul(call.get(0), call.get(1), out)
