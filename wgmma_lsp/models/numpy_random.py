"""numpy's random generators where test code builds inputs with them:
`np.random.default_rng(seed)`, `Generator.spawn(n)` and the samplers' shapes and dtypes
(numpy/random/_generator.pyx). The values drawn are unknown; their arrays' shapes are the
`size` given, their dtypes the `dtype` given (numpy's default float64 / int64 is not what JAX
makes of it without x64: unknown here, as for `np.zeros`)."""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, TupleVal, Value, Wrapped, as_int, as_shape
from wgmma_lsp.models.arrays import to_dtype
from wgmma_lsp.models.registry import method, model

GENERATOR = "np.random.Generator"
MAX_SPAWN = 64


def _generator() -> Wrapped:
    return Wrapped(GENERATOR, UNKNOWN, {})


@model("np.random.default_rng", "np.random.Generator", "np.random.PCG64")
def _default_rng(call: Call) -> Value:
    """`np.random.default_rng(seed=None)`: a generator (its state unknown)."""
    return _generator()


@method(f"wrapped:{GENERATOR}.spawn")
def _spawn(rng: Value, call: Call) -> Value:
    """`rng.spawn(n_children)`: a list of n new generators."""
    n = as_int(call.get(0, "n_children"))
    if n is None or not 0 <= n <= MAX_SPAWN:
        return UNKNOWN
    return TupleVal(tuple(_generator() for _ in range(n)), is_list=True)


def _sample(size_arg: int, dtype_arg: int | None):
    def sample(rng: Value, call: Call) -> Value:
        size = call.get(size_arg, "size", Const(None))
        if isinstance(size, Const) and size.value is None:
            return UNKNOWN  # one Python scalar
        shape = as_shape(size)
        if shape is None:
            return UNKNOWN
        dtype = None
        if dtype_arg is not None:
            dt = call.get(dtype_arg, "dtype", Const(None))
            dtype = None if isinstance(dt, Const) and dt.value is None else to_dtype(dt)
        return ArrayVal(shape, dtype)
    return sample


# (positions of `size` and `dtype` in each sampler's signature)
method(f"wrapped:{GENERATOR}.standard_normal", f"wrapped:{GENERATOR}.random")(_sample(0, 1))
method(f"wrapped:{GENERATOR}.normal", f"wrapped:{GENERATOR}.uniform")(_sample(2, None))
method(f"wrapped:{GENERATOR}.binomial")(_sample(2, None))
method(f"wrapped:{GENERATOR}.integers")(_sample(2, 3))
