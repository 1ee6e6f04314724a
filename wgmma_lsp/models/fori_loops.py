"""`lax.fori_loop(lower, upper, body, init)` (jax/_src/lax/control_flow/loops.py): JAX traces
the body once, whatever the trip count, as a `lax.scan` over `(i, init)` when both bounds are
Python ints and a `while_loop` over `(i, upper, init)` when they are traced; either checks that
the body returns a carry of the initial carry's types (`_check_carry_type`, WG rule
`loop_carry_type`)."""

from __future__ import annotations

from wgmma_lsp.interpret import dtypes as T
from wgmma_lsp.interpret import loop_steps
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import UNKNOWN, ArrayVal, Const, TupleVal, Value
from wgmma_lsp.models.registry import model


@model("lax.fori_loop")
def _fori_loop(call: Call) -> Value:
    """`lax.fori_loop(lo, hi, body, init)`: JAX traces the body once, whatever the trip count."""
    body, init = call.get(2, "body_fun"), call.get(3, "init_val")
    interp = call.interp
    i = loop_steps.take_index(interp)  # int32[] (with its value at each step, for the race analysis)
    result = interp.call_value(body, Call(interp, call.node, [i, init], {}, [None, call.node_of(3, "init_val")],
                                          {}, call.env))
    lower, upper = call.get(0, "lower"), call.get(1, "upper")
    if result is not UNKNOWN and all(_static_bound(b) or _traced_int(b) for b in (lower, upper)):
        # Static bounds: a scan over (i, init); traced ones: a while_loop over (i, upper, init).
        scan = _static_bound(lower) and _static_bound(upper)
        if _check_scan_carry(call, init, result, "scan body" if scan else "while_loop body",
                             "[1]" if scan else "[2]"):
            return UNKNOWN  # JAX raised: nothing downstream runs
    return init if result is UNKNOWN else result


def _static_bound(v: Value | None) -> bool:
    """A Python int bound: `fori_loop` is then a `lax.scan` (`core.is_concrete` of both)."""
    from wgmma_lsp.interpret.values import SymInt

    return (isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool)) \
        or isinstance(v, SymInt)


def _traced_int(v: Value | None) -> bool:
    """A traced integer scalar bound (`fori_loop` then runs a `while_loop`)."""
    return isinstance(v, ArrayVal) and v.shape == () and v.dtype is not None \
        and T.concrete(v.dtype) is not None and v.dtype.name.startswith(("int", "uint"))


def _carry_leaves(v: Value, path: str) -> list[tuple[str, Value]] | None:
    """(keystr path, leaf) for a carry made of tuples/lists of arrays; None otherwise."""
    if isinstance(v, TupleVal):
        out: list[tuple[str, Value]] = []
        for k, item in enumerate(v.items):
            sub = _carry_leaves(item, f"{path}[{k}]")
            if sub is None:
                return None
            out += sub
        return out
    return [(path, v)] if isinstance(v, ArrayVal) else None


def _same_structure(a: Value, b: Value) -> bool:
    if isinstance(a, TupleVal) and isinstance(b, TupleVal):
        return a.is_list == b.is_list and len(a.items) == len(b.items) and all(
            _same_structure(x, y) for x, y in zip(a.items, b.items))
    return isinstance(a, ArrayVal) and isinstance(b, ArrayVal)


def _aval_str(a: ArrayVal) -> str | None:
    """`str_short` of the aval: `float32[64,64]`; None unless shape and dtype are concrete."""
    if a.shape is None or not all(isinstance(d, int) for d in a.shape) or a.dtype is None \
            or T.concrete(a.dtype) is None:
        return None
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def pipeline_carry_fails(call: Call, grid: Value | None, init: Value, out: Value, at: str) -> bool:
    """A pipeline's carry (`plgpu.emit_pipeline(init_carry=)`, a warp-specialized pipeline's
    `compute_context`): the pipeline runs `lax.fori_loop(0, math.prod(grid), loop_body,
    loop_carry)` with the user's carry at `at` of `loop_carry` (pipeline.py, 0.10.2 to 0.12.1), a
    scan over a static grid, a while_loop over a traced one. Reported, True, when its types
    change (WG094)."""
    sizes = grid.items if isinstance(grid, TupleVal) and not grid.spoiled else None
    if sizes is None or not all(_static_bound(g) or _traced_int(g) for g in sizes):
        return False
    scan = all(_static_bound(g) for g in sizes)
    return _check_scan_carry(call, init, out, "scan body" if scan else "while_loop body",
                             ("[1]" if scan else "[2]") + at)


def _check_scan_carry(call: Call, init: Value, out: Value, name: str = "scan body", at: str = "[1]") -> bool:
    """`_check_carry_type(name, …)` (jax/_src/lax/control_flow/loops.py) for the loop `fori_loop`
    runs: a scan over `(i, init)` for static bounds, a while_loop over `(i, upper, init)` for
    traced ones (`at`: where `init` sits); the wrapper's first parameter is `loop_carry`. Claimed
    only when every leaf of both carries is fully known and the initial leaves are strongly
    typed (both first promote weak initial values to the body's types)."""
    from wgmma_lsp.rules import loop_carry_type

    if not _same_structure(init, out):
        return False
    ins, outs = _carry_leaves(init, at), _carry_leaves(out, at)
    if ins is None or outs is None or len(ins) != len(outs):
        return False
    diffs = []
    for (path, a), (_, b) in zip(ins, outs):
        sa, sb = _aval_str(a), _aval_str(b)  # type: ignore[arg-type]
        if sa is None or sb is None or a.dtype.weak:  # type: ignore[union-attr]
            return False
        what = [w for w, differ in (("the dtypes do not match", a.dtype.name != b.dtype.name),  # type: ignore[union-attr]
                                    ("the shapes do not match", a.shape != b.shape)) if differ]  # type: ignore[union-attr]
        if what:
            extra = ", so " + (what[0] if len(what) == 1 else f"{what[0]}, and {what[1]}")
            diffs.append(f"the input carry component loop_carry{path} has type {sa} but the "
                         f"corresponding output carry component has type {sb}{extra}")
    if not diffs:
        return False
    if len(diffs) == 1:
        differences = f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
    else:
        differences = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
    first = loop_carry_type.FIRST_LINE.replace("scan body", name, 1)
    message = (f"{first}\n\n{differences}\n"
               "Revise the function so that all output types match the corresponding input types.")
    call.interp.report(loop_carry_type.RULE, message, call.span, call.line)
    return True
