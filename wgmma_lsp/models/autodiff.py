"""Reverse-mode differentiation, run as JAX runs the user's code for it: `jax.vjp`, its pullback,
`jax.grad` / `jax.value_and_grad`, and `jax.custom_vjp` functions with their rules
(jax/_src/api.py, jax/_src/custom_derivatives.py).

What JAX runs, and so what runs here:

- `jax.vjp(f, *primals)` traces `f`. A `custom_vjp` function called while it does runs its
  forward rule `fwd(*args)` (not `f`): its `(out, residuals)` are kept, `out` is the call's value.
  `fwd` itself runs on primal values (a custom_vjp call inside it runs that function's `f`).
- The pullback `vjp_fn(ct)` runs each kept call's backward rule, last call first, as
  `bwd(*nondiff_args, residuals, ct_out)`, where `ct_out` has the avals of that call's `out`
  (JAX instantiates zero cotangents): that is where a library's backward kernels run. It
  returns one cotangent per primal, with the primal's aval (float primals; others are not
  claimed). When the pullback's own argument is known not to match `f`'s output, JAX raises
  before any rule runs: nothing runs here; when it is not known, the rules run on a path that
  may not be taken (findings there are "on some paths").
- `jax.grad(f)(*args)` is a vjp whose output must be a float scalar (else JAX raises before
  the backward pass); its value is the cotangent of the `argnums` arguments.
- Outside a `jax.vjp`, a `custom_vjp` function's call traces `f` (as under `jax.jit`).

`f.defvjp(fwd, bwd)` registers the rules on the object, which is followed exactly where a
change to an object is (interpret/mutation.py); elsewhere the rules are unknown, and a vjp
through the call runs no backward rule.
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.interpret import mutation
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import DType, is_complex, is_floating
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ArrayVal,
    Const,
    DictVal,
    TupleVal,
    Value,
    Wrapped,
    as_int,
    is_unknown,
    next_born,
)
from wgmma_lsp.models.entry_calls import trace_call, traced_value
from wgmma_lsp.models.registry import METHODS, model

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

CUSTOM_VJP = "jax.custom_vjp"
PULLBACK = "jax.vjp_pullback"


@dataclass(eq=False)
class Backward(Value):
    """A backward rule a pullback runs: `func(*before, ct, *after, **kwargs)`, where `ct` has
    the avals of `out` (the forward call's output)."""
    func: Value
    before: tuple[Value, ...]
    after: tuple[Value, ...]
    kwargs: dict[str, Value]
    out: Value

    def describe(self) -> str:
        return "a backward rule"


def keep_backward(interp: Any, backward: Backward | None) -> None:
    """Keep, for the pullback of the innermost `jax.vjp` running, the backward rule of a
    differentiable call its function made (None: one whose rule is not followed)."""
    interp.vjp_frames[-1].append(backward if backward is not None else Const(None))
    interp.not_replayable()


def _call(call: Call, func: Value, args: list[Value], nodes: list) -> Call:
    """`call` made a call of `func` with `args` (whose syntax is `nodes`)."""
    nodes = (nodes + [None] * len(args))[:len(args)]
    return Call(call.interp, call.node, args, {}, nodes, {}, call.env, call.complete)


# -- custom_vjp --------------------------------------------------------------------------------
@model("jax.custom_vjp")
def _custom_vjp(call: Call) -> Value:
    """`jax.custom_vjp(f, nondiff_argnums=())`; with only keywords, a decorator."""
    if not call.complete:
        return UNKNOWN
    nondiff = call.get(1, "nondiff_argnums", TupleVal(()))
    if not call.args:
        return Wrapped("jax.custom_vjp_decorator", UNKNOWN, {"nondiff_argnums": nondiff}, call.span)
    f = call.args[0]
    if is_unknown(f):
        return UNKNOWN
    return Wrapped(CUSTOM_VJP, f, {"nondiff_argnums": nondiff, "born": Const(next_born())}, call.span)


@model("jax.custom_vjp_decorator()")
def _custom_vjp_decorator(call: Call) -> Value:
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    f = call.get(0)
    if is_unknown(f):
        return UNKNOWN
    return Wrapped(CUSTOM_VJP, f, {**wrapped.kwargs, "born": Const(next_born())}, call.span)


def _defvjp(obj: Value, call: Call) -> Value:
    """`f.defvjp(fwd, bwd, symbolic_zeros=False, optimize_remat=False)`: registers the rules."""
    assert isinstance(obj, Wrapped)
    born = obj.kwargs["born"]
    assert isinstance(born, Const)
    fwd, bwd = call.get(0, "fwd", UNKNOWN), call.get(1, "bwd", UNKNOWN)
    symbolic = call.get(2, "symbolic_zeros", Const(False))
    if not call.complete or not (isinstance(symbolic, Const) and symbolic.value is False) \
            or not mutation.changes_exactly(call.interp, born.value):
        fwd = bwd = UNKNOWN  # (symbolic zeros change what the rules take: not followed)
    mutation.note_write(call.interp, born.value)
    obj.kwargs["fwd"], obj.kwargs["bwd"] = fwd, bwd
    return Const(None)


METHODS[f"wrapped:{CUSTOM_VJP}.defvjp"] = _defvjp


@model(f"{CUSTOM_VJP}()")
def _custom_vjp_apply(call: Call) -> Value:
    """A call of a custom_vjp function: `fwd` under a `jax.vjp` (the call kept for its
    pullback), else `f`."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    interp = call.interp
    fwd, bwd = wrapped.kwargs.get("fwd"), wrapped.kwargs.get("bwd")
    if not interp.vjp_frames or fwd is None:
        return trace_call(call, wrapped.func, call.args, call.kwargs, {})
    nums = _ints(wrapped.kwargs["nondiff_argnums"])
    if is_unknown(fwd) or bwd is None or is_unknown(bwd) or nums is None or call.kwargs:
        keep_backward(interp, None)
        return trace_call(call, wrapped.func, call.args, call.kwargs, {})
    frames = list(interp.vjp_frames)
    interp.vjp_frames.clear()  # fwd runs on primal values: a custom_vjp call in it runs its f
    try:
        pair = mutation.live(interp, trace_call(call, fwd, call.args, {}, {}))
    finally:
        interp.vjp_frames[:] = frames
    if not isinstance(pair, TupleVal) or len(pair.items) != 2:
        return UNKNOWN  # (JAX raises unless fwd returns a pair)
    out, residuals = pair.items
    nondiff = tuple(call.args[i] for i in sorted(nums) if i < len(call.args))
    keep_backward(interp, Backward(bwd, (*nondiff, residuals), (), {}, out))
    return out


def _ints(v: Value) -> set[int] | None:
    items = v.items if isinstance(v, TupleVal) else (v,)
    nums = {as_int(i) for i in items}
    return None if None in nums else nums  # type: ignore[return-value]


# -- cotangents --------------------------------------------------------------------------------
def cotangent(v: Value) -> Value:
    """The cotangent JAX gives for a value with `v`'s avals (for float and complex arrays: the
    same aval; None stays None; containers leaf by leaf; anything else not claimed)."""
    v = traced_value(v)
    if isinstance(v, ArrayVal):
        dt = v.dtype
        if isinstance(dt, DType) and (is_floating(dt) or is_complex(dt)):
            return ArrayVal(v.shape, DType(dt.name))
        return UNKNOWN
    if isinstance(v, Const) and v.value is None:
        return v
    if isinstance(v, TupleVal) and not v.spoiled and type(v) is TupleVal:
        return TupleVal(tuple(cotangent(i) for i in v.items), v.is_list)
    if isinstance(v, DictVal) and not v.spoiled:
        return DictVal(tuple((k, cotangent(i)) for k, i in v.items))
    return UNKNOWN


def _matches(given: Value, expected: Value) -> bool | None:
    """Whether a cotangent handed to a pullback has the avals JAX expects (None: not known)."""
    given = traced_value(given)
    if isinstance(expected, ArrayVal) and isinstance(given, ArrayVal):
        if given.shape is None or expected.shape is None or given.dtype is None or expected.dtype is None:
            return None
        if not all(isinstance(d, int) for d in (*given.shape, *expected.shape)) \
                or not isinstance(given.dtype, DType) or not isinstance(expected.dtype, DType):
            return None
        return given.shape == expected.shape and given.dtype.name == expected.dtype.name
    if isinstance(expected, TupleVal) and isinstance(given, TupleVal) and not given.spoiled:
        if len(given.items) != len(expected.items):
            return False
        answers = [_matches(g, e) for g, e in zip(given.items, expected.items)]
        return False if False in answers else (None if None in answers else True)
    if isinstance(expected, Const) and expected.value is None:
        return isinstance(given, Const) and given.value is None or None
    return None


def _pull_back(call: Call, records: list[Value], certain: bool) -> None:
    """Run the backward rules `records` kept, last first."""
    interp = call.interp
    with interp.uncertain(not certain):
        for b in reversed(records):
            if isinstance(b, Backward):
                args = [*b.before, cotangent(b.out), *b.after]
                interp.call_value(b.func, Call(interp, call.node, args, dict(b.kwargs), [None] * len(args),
                                               {}, call.env))


def _under_vjp(call: Call, func: Value, args: list[Value], nodes: list) -> tuple[Value, list]:
    """Trace `func(*args)` as `jax.vjp` does: the custom_vjp calls it makes, kept."""
    frame: list = []
    call.interp.vjp_frames.append(frame)
    try:
        out = trace_call(_call(call, func, args, nodes), func, args, {}, {})
    finally:
        call.interp.vjp_frames.pop()
    return out, frame


# -- jax.vjp and its pullback ------------------------------------------------------------------
@model("jax.vjp")
def _vjp(call: Call) -> Value:
    """`jax.vjp(fun, *primals, has_aux=False)`: `(out, vjp_fn)`, or `(out, vjp_fn, aux)`."""
    f = call.get(0, "fun")
    has_aux = call.kwargs.get("has_aux", Const(False))
    if is_unknown(f) or not call.complete or set(call.kwargs) - {"has_aux"} \
            or not (isinstance(has_aux, Const) and isinstance(has_aux.value, bool)):
        return call.interp.unknown_call(call)
    primals = list(call.args[1:])
    out, records = _under_vjp(call, f, primals, list(call.arg_nodes[1:]))
    aux: Value = UNKNOWN
    if has_aux.value:
        pair = mutation.live(call.interp, out)
        out, aux = pair.items if isinstance(pair, TupleVal) and len(pair.items) == 2 else (UNKNOWN, UNKNOWN)
    pullback = Wrapped(PULLBACK, UNKNOWN, {"out": out, "primals": TupleVal(tuple(primals)),
                                           "records": TupleVal(tuple(records))}, call.span)
    return TupleVal((out, pullback, aux)) if has_aux.value else TupleVal((out, pullback))


@model(f"{PULLBACK}()")
def _pullback_apply(call: Call) -> Value:
    """`vjp_fn(ct)`: the backward rules run; one cotangent per primal."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    if not call.complete or len(call.args) != 1 or call.kwargs:
        return UNKNOWN  # (JAX raises: the pullback takes one cotangent)
    fits = _matches(call.args[0], wrapped.kwargs["out"])
    if fits is False:
        return UNKNOWN  # JAX raises: the cotangent is not of the output's type
    records = wrapped.kwargs["records"]
    assert isinstance(records, TupleVal)
    _pull_back(call, list(records.items), certain=bool(fits))
    primals = wrapped.kwargs["primals"]
    assert isinstance(primals, TupleVal)
    return TupleVal(tuple(cotangent(p) for p in primals.items))


# -- jax.grad, jax.value_and_grad --------------------------------------------------------------
_GRAD_PARAMS = ("fun", "argnums", "has_aux", "holomorphic", "allow_int")


def _grad_of(name: str):
    def make(call: Call) -> Value:
        """`jax.grad(fun, argnums=0, has_aux=False, ...)`: the function its call runs."""
        f = call.get(0, "fun")
        if is_unknown(f) or not call.complete or len(call.args) > len(_GRAD_PARAMS):
            return UNKNOWN
        options = {**dict(zip(_GRAD_PARAMS[1:], call.args[1:])), **call.kwargs}
        options.pop("fun", None)
        return Wrapped(name, f, options, call.span)
    return make


for _name in ("jax.grad", "jax.value_and_grad"):
    model(_name)(_grad_of(_name))


@model("jax.grad()", "jax.value_and_grad()")
def _grad_apply(call: Call) -> Value:
    """`jax.grad(f, argnums=0, has_aux=False)(*args)`: the gradient of f's float scalar output
    with respect to the `argnums` arguments; `value_and_grad` returns `(value, gradient)`."""
    wrapped = call.wrapped
    assert isinstance(wrapped, Wrapped)
    options = wrapped.kwargs
    argnums = options.get("argnums", Const(0))
    has_aux = options.get("has_aux", Const(False))
    nums = _ints(argnums)
    if not call.complete or call.kwargs or nums is None \
            or set(options) - {"argnums", "has_aux"} \
            or not (isinstance(has_aux, Const) and isinstance(has_aux.value, bool)) \
            or not all(0 <= n < len(call.args) for n in nums):
        trace_call(call, wrapped.func, call.args, call.kwargs, {})
        return UNKNOWN
    value, records = _under_vjp(call, wrapped.func, list(call.args), list(call.arg_nodes))
    out = value
    if has_aux.value:
        pair = mutation.live(call.interp, value)
        out = pair.items[0] if isinstance(pair, TupleVal) and len(pair.items) == 2 else UNKNOWN
    scalar = isinstance(out, ArrayVal) and out.shape == () and isinstance(out.dtype, DType) \
        and is_floating(out.dtype)
    if not scalar:
        return UNKNOWN  # JAX raises unless the output is a float scalar (or: not known to be one)
    _pull_back(call, records, certain=True)
    if isinstance(argnums, TupleVal):
        grads: Value = TupleVal(tuple(cotangent(call.args[as_int(i)]) for i in argnums.items))  # type: ignore[index]
    else:
        grads = cotangent(call.args[next(iter(nums))])
    aux = value.items[1] if has_aux.value and isinstance(value, TupleVal) else None
    if wrapped.api == "jax.value_and_grad":
        return TupleVal((value if aux is None else TupleVal((out, aux)), grads))
    return grads if aux is None else TupleVal((grads, aux))
