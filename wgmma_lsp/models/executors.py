"""`concurrent.futures` executors as test code uses them to build inputs:
`with ThreadPoolExecutor() as ex: list(ex.map(f, xs, ys))` is `map(f, xs, ys)` (the calls
happen, in order of their results); `ex.submit(f, *args).result()` is `f(*args)`."""

from __future__ import annotations

from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Value, Wrapped
from wgmma_lsp.models.registry import MODELS, method, model

EXECUTOR = "concurrent.futures.Executor"
FUTURE = "concurrent.futures.Future"


@model("concurrent.futures.ThreadPoolExecutor", "concurrent.futures.ProcessPoolExecutor")
def _executor(call: Call) -> Value:
    """`ThreadPoolExecutor(max_workers=None, ...)`: an executor."""
    return Wrapped(EXECUTOR, call.get(0), {})


@method(f"wrapped:{EXECUTOR}.__enter__")
def _enter(ex: Value, call: Call) -> Value:
    """`with ThreadPoolExecutor() as ex:` binds the executor itself."""
    return ex


@method(f"wrapped:{EXECUTOR}.map")
def _map(ex: Value, call: Call) -> Value:
    """`ex.map(f, *iterables)`: the results of f over the iterables, as `map` gives them."""
    model = MODELS.get("builtins.map")
    return model(call) if model is not None else call.interp.unknown_call(call)


@method(f"wrapped:{EXECUTOR}.submit")
def _submit(ex: Value, call: Call) -> Value:
    """`ex.submit(f, *args, **kwargs)`: a future of `f(*args, **kwargs)` (called now)."""
    if not call.args:
        return call.interp.unknown_call(call)
    interp = call.interp
    result = interp.call_value(call.args[0], Call(interp, call.node, call.args[1:], call.kwargs,
                                                  call.arg_nodes[1:], call.kw_nodes, call.env, call.complete))
    return Wrapped(FUTURE, result, {})


@method(f"wrapped:{FUTURE}.result")
def _result(future: Value, call: Call) -> Value:
    """`future.result()`: the call's result."""
    assert isinstance(future, Wrapped)
    return future.func
