"""The two steps of a library's op dispatch a test context follows by meaning (see
`test_contexts.py`): the op's `__call__` that binds and ends in `self._fwd(...)`, and the op's
choice of kernel module by the GPU.

They are hooks the interpreter asks while a test context runs (`interp.program_hooks`), and
only then: outside the analysis of a kernel module reached from its package's tests nothing
here applies.
"""

from __future__ import annotations

import ast
import functools
from typing import TYPE_CHECKING

from wgmma_lsp.interpret.target_gpu import gpu_capability

if TYPE_CHECKING:
    from wgmma_lsp.interpret.call import Call
    from wgmma_lsp.interpret.interp import Interpreter
    from wgmma_lsp.interpret.values import FuncVal, Value

MAX_DISPATCH_DEPTH = 4  # nested op calls dispatched (an op calling another op)

#: The syntax walks below, kept per node (a node is hashed by identity, and the cache holds it
#: alive, so an entry is never another node's): they run on every call the analysis follows.
_WALKS = 256


@functools.lru_cache(maxsize=_WALKS)
def _calls_self_method(node: ast.AST, name: str) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == name \
                and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
            return True
    return False


@functools.lru_cache(maxsize=_WALKS)
def is_signature_bind(node: ast.AST) -> bool:
    """The op base class's `bind`: `sig.bind(*args, **kwargs)` then `ba.apply_defaults()`
    (tokamax's `Op.bind`); a subclass's own `bind` normalises its arguments and ends in it."""
    if not (isinstance(node, ast.FunctionDef) and node.name == "bind"):
        return False
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "apply_defaults"
               for n in ast.walk(node))


def is_op_call(node: ast.AST) -> bool:
    """A `__call__` that binds its arguments (`self.bind(...)`) and runs `self._fwd(...)`
    (tokamax's `Op.__call__`)."""
    return isinstance(node, ast.FunctionDef) and node.name == "__call__" \
        and _calls_self_method(node, "bind") and _calls_self_method(node, "_fwd")


class ProgramHooks:
    """What a test context of the analysed kernel module reads differently."""

    def __init__(self, interp: Interpreter, configs: list[Value]) -> None:
        self.interp = interp
        self.configs = configs
        self.depth = 0
        self._own_cache: dict[str, Value | None] = {}
        self._op_calls: dict[int, bool] = {}  # id() of a `__call__` node -> is_op_call (walked once)
        self.gpu_capability = gpu_capability(interp.tree)  # the GPU the test context runs on
        # While the op's own `bind` runs ("bind": what it passes to the base class's) or the op
        # picks its config ("provider": what it asks the module for): the calls seen.
        self._capture: tuple[str, list] | None = None
        self._provider_classes: dict | None = None  # (see _providers)
        self._defs = {id(n) for n in interp.tree.body
                      if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}

    # -- the kernel module chosen by the GPU -------------------------------------------------
    def own_attr(self, attr: str) -> Value | None:
        """The analysed module's own function or class called `attr`, read off a value the
        analysis cannot resolve (`kernel_module.flash_attention_kernel`)."""
        if attr in self._own_cache:
            return self._own_cache[attr]
        from wgmma_lsp.interpret.values import ClassVal, FuncVal

        v = self.interp.module_env.vars.get(attr)
        found = v if isinstance(v, (FuncVal, ClassVal)) and id(v.node) in self._defs else None
        self._own_cache[attr] = found
        return found

    # -- the op's __call__ ---------------------------------------------------------------------
    def dispatch(self, func: FuncVal, call: Call) -> Value | None:
        """`op(*args, **kwargs)` as `op._fwd(*args, config=<config>, **kwargs)`; None: not an
        op's dispatching `__call__`."""
        # (asked on every call of a user function while a test context runs: the cheap tests first)
        if self._capture is not None:
            kind, seen = self._capture
            if kind == "provider" and id(func.node) in self._defs \
                    or kind == "bind" and func.name == "bind" and is_signature_bind(func.node):
                seen.append((func, list(call.args), dict(call.kwargs)))
                from wgmma_lsp.interpret.values import UNKNOWN

                return UNKNOWN
        if func.name != "__call__" or self.depth >= MAX_DISPATCH_DEPTH:
            return None
        op_call = self._op_calls.get(id(func.node))
        if op_call is None:
            op_call = self._op_calls[id(func.node)] = is_op_call(func.node)
        if not op_call:
            return None
        from wgmma_lsp.interpret.call import Call as CallT
        from wgmma_lsp.interpret.classes import instance_attr
        from wgmma_lsp.interpret.values import UNKNOWN, Const, FuncVal as F, InstanceVal, TupleVal, join

        args = list(call.args)
        me = func.bound_self if func.bound_self is not None else (args.pop(0) if args else None)
        if not isinstance(me, InstanceVal):
            return None
        fwd = instance_attr(self.interp, me, "_fwd")
        if not isinstance(fwd, F):
            return None
        fwd_node = fwd.node
        kwargs = dict(call.kwargs)
        returns_residuals = kwargs.pop("return_residuals", Const(False))
        given = (list(args), dict(kwargs))
        args, kwargs = self._own_bind(me, args, kwargs, call)
        # Under `jax.vjp`, the op's `custom_vjp` runs its forward rule: `_fwd` with residuals,
        # kept for the pullback, which calls `op.vjp(residuals, out, dout, *args, **kwargs)`.
        backward = self._backward(me) if self.interp.vjp_frames else None
        vjp_args, vjp_kwargs = tuple(args), dict(kwargs)
        if fwd_node is not None and _has_param(fwd_node, "return_residuals"):
            kwargs["return_residuals"] = Const(True) if backward is not None else returns_residuals
        own = me.attrs.get("config")
        if isinstance(own, InstanceVal):
            configs = [own]
        else:
            configs = self._picked_for(me, *given, call) or self._as_the_op_picks(me, call)
        if not configs:
            return UNKNOWN
        result: Value | None = None
        self.depth += 1
        try:
            for c in configs:
                r = self.interp.call_value(fwd, CallT(self.interp, call.node, args, {**kwargs, "config": c},
                                                      [None] * len(args), {}, call.env))
                result = r if result is None else join(result, r)
        finally:
            self.depth -= 1
        pair = result.items if isinstance(result, TupleVal) and len(result.items) == 2 else None
        if self.interp.vjp_frames:
            from wgmma_lsp.models.autodiff import Backward, keep_backward

            keep_backward(self.interp, Backward(backward, (pair[1], pair[0]), vjp_args, vjp_kwargs, pair[0])
                          if backward is not None and pair is not None else None)
        if isinstance(returns_residuals, Const) and returns_residuals.value is True:
            return result if result is not None else UNKNOWN
        if pair is not None:
            return pair[0]  # (out, residuals): the op returns out
        return UNKNOWN

    def _backward(self, me: Value) -> Value | None:
        """The op's `vjp` (tokamax's `Op.vjp`: "passed the residuals and the output of the op,
        the output gradients, then all arguments passed to the op"); None when it has none or it
        is not known (then JAX differentiates `_fwd` itself: not followed)."""
        from wgmma_lsp.interpret.classes import instance_attr
        from wgmma_lsp.interpret.values import InstanceVal

        assert isinstance(me, InstanceVal)
        vjp = instance_attr(self.interp, me, "vjp") if "vjp" not in me.attrs else me.attrs["vjp"]
        return vjp if isinstance(vjp, InstanceVal) else None

    def _picked_for(self, me: Value, args: list, kwargs: dict, call: Call) -> list:
        """The configs the op may pick for these arguments, as its `__call__` does when it has
        none: its `bind` of them, then its `_get_heuristics_config(ba)` (`get_heuristics_config(ba,
        ...)` of the module the GPU selects). Each config a provider of the module returns in that
        run is one (a heuristic whose test is undecided here, `if smem_bytes <= limit: return
        config`, returns one per path, which their join would lose); empty when none is known."""
        from wgmma_lsp.entry.config_contexts import MAX_CONFIG_CONTEXTS, fingerprint
        from wgmma_lsp.interpret.call import Call as CallT
        from wgmma_lsp.interpret.classes import instance_attr, mro
        from wgmma_lsp.interpret.values import FuncVal as F, InstanceVal

        bind = instance_attr(self.interp, me, "bind")  # type: ignore[arg-type]
        pick = instance_attr(self.interp, me, "_get_heuristics_config")  # type: ignore[arg-type]
        if not (isinstance(bind, F) and isinstance(pick, F)) or self._capture is not None:
            return []
        ba = self.interp.call_value(bind, CallT(self.interp, call.node, list(args), dict(kwargs),
                                                [None] * len(args), {}, call.env))
        if not isinstance(ba, InstanceVal):
            return []
        providers = self._providers()
        log: dict[int, list] = {node: [] for node in providers}
        saved, self.interp.return_log = self.interp.return_log, log
        try:
            config = self.interp.call_value(pick, CallT(self.interp, call.node, [ba], {}, [None], {}, call.env))
        finally:
            self.interp.return_log = saved
        if isinstance(config, InstanceVal):
            return [config]
        out: list = []
        seen: set = set()
        for node, returned in log.items():
            for v in returned:
                if isinstance(v, InstanceVal) and providers[node] in mro(v.cls) \
                        and (key := fingerprint(v)) not in seen and len(out) < MAX_CONFIG_CONTEXTS:
                    seen.add(key)
                    out.append(v)
        return out

    def _providers(self) -> dict:
        """The analysed module's config providers (entry/config_contexts.providers): node id ->
        the config class; found once, when the first op call asks (module code has run)."""
        if self._provider_classes is None:
            from wgmma_lsp.entry.config_contexts import providers

            self._provider_classes = {id(f.node): cls for f, cls in providers(self.interp)}
        return self._provider_classes

    def _as_the_op_picks(self, me: Value, call: Call) -> list:
        """The configs the module picks (entry/config_contexts.py: each return of its provider,
        run with nothing known), each with the provider's arguments the op gives it: the op's
        `_get_heuristics_config(ba)` calls `get_heuristics_config(ba, fold_q_sequence_heads=False)`,
        so a field holding the unknown `fold_q_sequence_heads` is False."""
        from dataclasses import replace

        from wgmma_lsp.interpret.classes import instance_attr
        from wgmma_lsp.interpret.values import UNKNOWN, Const, FuncVal as F, InstanceVal, Opaque

        configs = list(self.configs)
        pick = instance_attr(self.interp, me, "_get_heuristics_config")  # type: ignore[arg-type]
        if not isinstance(pick, F) or self._capture is not None or not configs:
            return configs
        asked = self._calls_seen("provider", pick, [UNKNOWN], {}, call)
        if len(asked) != 1:
            return configs
        provider, _, given = asked[0]
        params = {p.arg for p in provider.node.args.args + provider.node.args.kwonlyargs}
        known = {k: v for k, v in given.items() if k in params and isinstance(v, Const)}
        out = []
        for c in configs:
            if isinstance(c, InstanceVal) and any(isinstance(v, Opaque) and type(v) is Opaque and v.name in known
                                                  for v in c.attrs.values()):
                attrs = {k: known[v.name] if type(v) is Opaque and v.name in known else v  # type: ignore[union-attr]
                         for k, v in c.attrs.items()}
                c = replace(c, attrs=attrs)
            out.append(c)
        return out

    def _calls_seen(self, kind: str, func: FuncVal, args: list, kwargs: dict, call: Call) -> list:
        """Run `func(*args, **kwargs)`, the calls of `kind` it makes seen, not run: (function,
        positional arguments, keyword arguments) each."""
        from wgmma_lsp.interpret.call import Call as CallT

        self._capture = (kind, [])
        try:
            self.interp.call_value(func, CallT(self.interp, call.node, args, kwargs, [None] * len(args), {}, call.env))
        finally:
            seen, self._capture = self._capture[1], None
        return seen

    def _own_bind(self, me: Value, args: list, kwargs: dict, call: Call) -> tuple[list, dict]:
        """The arguments as the op's own `bind` passes them on to the base class's (its
        defaults filled in, `ragged_dot_dimension_numbers=None` made the default numbers,
        `precision` canonicalised); as given when it has none, or passes them on more than once."""
        from wgmma_lsp.interpret.classes import instance_attr
        from wgmma_lsp.interpret.values import FuncVal as F

        bind = instance_attr(self.interp, me, "bind")  # type: ignore[arg-type]
        if not isinstance(bind, F) or is_signature_bind(bind.node) or self._capture is not None:
            return args, kwargs
        bound = self._calls_seen("bind", bind, list(args), dict(kwargs), call)
        if len(bound) != 1:
            return args, kwargs
        _, new_args, new_kwargs = bound[0]
        if new_args and new_args[0] is me:
            new_args = new_args[1:]
        new_kwargs.pop("return_residuals", None)  # the op's call decides it
        return new_args, new_kwargs


def _has_param(node: ast.AST, name: str) -> bool:
    a = getattr(node, "args", None)
    if a is None:
        return False
    return any(p.arg == name for p in list(a.posonlyargs) + list(a.args) + list(a.kwonlyargs))
