"""Calls and names the installed JAX's Python rejects before any model runs.

Every call of a public `plgpu.*`/`pl.*` API is bound against the installed jax's signature
(read from its source: interpret/jax_source.py) the way CPython binds it (interpret/binding.py);
a call that cannot bind raises CPython's `TypeError` there (WG090), and nothing after it runs.
An attribute of `jax.experimental.pallas[.mosaic_gpu]` that the installed JAX does not have
raises its `AttributeError` (WG091).
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import jax_source
from wgmma_lsp.interpret.binding import BindError, bind, forwarded_keywords
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.rules.base import Related
from wgmma_lsp.spans import Span

_CHECKED_PREFIXES = ("plgpu.", "pl.")
# The public module each prefix names ("jax.experimental.pallas" -> "pl").
_PREFIX_OF = {module: prefix for prefix, module in jax_source.PUBLIC_MODULES.items()}
_PREFIX_OF.update(jax_source.ALIAS_MODULES)  # `jax.pallas.mosaic_gpu` (0.12.1's preferred path)
# How binding a call's arity and keywords to an API's signature in the installed JAX ends, by
# (API, positional count, keywords): a pure function of the signature, which the installed JAX
# fixes for the process (every call of a kernel file binds the same few shapes of call).
_BINDS: dict[tuple, "BindError | None"] = {}
_MAX_BINDS = 4096
_UNBOUND = object()


def _keyword_name_spans(call: Call) -> dict[str, Span]:
    out: dict[str, Span] = {}
    node = call.node
    if isinstance(node, ast.Call):
        for k in node.keywords:
            if k.arg is not None and hasattr(k, "lineno"):
                s = call.interp.span(k)
                out[k.arg] = Span(s.line, s.col, s.line, s.col + len(k.arg))
    return out


def _report(call: Call, api: str, err: BindError, blame_line: int | None = None) -> None:
    from wgmma_lsp.rules import api_call_signature

    kw_spans = _keyword_name_spans(call)
    span = call.span
    node = call.node
    if err.kind in ("unexpected-keyword", "multiple-values", "posonly-as-keyword") and isinstance(node, ast.Call):
        kw = next((k for k in node.keywords if k.arg == err.keyword), None)
        if kw is not None:
            span = call.interp.span(kw)
    elif err.kind == "too-many-positional" and isinstance(node, ast.Call):
        sig = jax_source.signature(api)
        n = len([p for p in sig.params if p.kind in ("pos", "posonly")]) - (1 if sig.binds_self else 0) \
            if sig else 0
        extra = [a for a in node.args[n:]]
        if extra:
            first, last = call.interp.span(extra[0]), call.interp.span(extra[-1])
            span = Span(first.line, first.col, last.end_line, last.end_col)
    elif isinstance(node, ast.Call):
        span = call.interp.span(node.func)
    arg_spans = [call.interp.span(n) if n is not None else None for n in call.arg_nodes] \
        if isinstance(node, ast.Call) else []
    blamed = call.line if blame_line is None else blame_line
    related = []
    if isinstance(node, ast.Call) and span is not None and span.line != blamed:
        # (the squiggle is on the argument; Python's traceback names the line the call starts on)
        related.append(Related(call.interp.span(node.func), "JAX raises this at this call (its "
                               "traceback shows the line where the call starts)"))
    call.interp.report(api_call_signature.RULE, err.message, span, blamed, related=related,
                       data={"api": api, "kind": err.kind, "names": err.names,
                             "keyword_spans": kw_spans, "arg_spans": arg_spans,
                             "call_span": call.span})


def call_binds(call: Call, api: str) -> bool:
    """False (after reporting WG090) when binding this call raises in the installed JAX."""
    if not api.startswith(_CHECKED_PREFIXES) or not call.complete:
        return True
    key = (api, len(call.args), tuple(call.kwargs))
    err = _BINDS.get(key, _UNBOUND)
    if err is _UNBOUND:
        sig = jax_source.signature(api)
        err = bind(sig, len(call.args), list(call.kwargs)) if sig is not None else None
        if len(_BINDS) >= _MAX_BINDS:
            _BINDS.clear()
        _BINDS[key] = err
    if err is not None:
        _report(call, api, err)
        return False
    deprecated = jax_source.deprecated_params(api)
    if deprecated:
        _report_deprecated(call, api, deprecated)
    return True


def _report_deprecated(call: Call, api: str, deprecated: dict) -> None:
    """WG095: the parameters the installed JAX deprecates that this call passes (by keyword, or
    positionally), once per message (JAX warns once per call), with JAX's message
    (interpret/jax_deprecations.py)."""
    from wgmma_lsp.rules import api_deprecated

    node = call.node
    if not isinstance(node, ast.Call):
        return
    given = [k.arg for k in node.keywords if k.arg is not None]
    sig = jax_source.signature(api)
    positional = [p.name for p in sig.params if p.kind in ("posonly", "pos")] if sig else []
    if sig is not None and sig.binds_self:
        positional = positional[1:]
    # message -> [(param, alias, span of the argument, where the fix edits, keyword or positional)]
    by_message: dict[str, list] = {}
    for k in node.keywords:
        if k.arg in deprecated:
            message, alias = deprecated[k.arg]
            s = call.interp.span(k)
            by_message.setdefault(message, []).append(
                (k.arg, alias, s, Span(s.line, s.col, s.line, s.col + len(k.arg)), "keyword"))
    for i, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            break
        if i < len(positional) and positional[i] in deprecated:
            message, alias = deprecated[positional[i]]
            s = call.interp.span(a)
            last = i == len(node.args) - 1
            by_message.setdefault(message, []).append(
                (positional[i], alias, s, Span(s.line, s.col, s.line, s.col) if last else None, "positional"))
    for message, uses in by_message.items():
        call.interp.report(api_deprecated.RULE, message, uses[0][2], call.line,
                           data={"api": api, "given": given, "call_span": call.span,
                                 "uses": [(p, alias, edit, kind) for p, alias, _, edit, kind in uses]})


def forwarded_keywords_bind(call: Call, api: str, blame_line: int | None = None) -> bool:
    """False (after reporting WG090) when the keywords `call` leaves to the API's `**kwargs`
    fail where it passes them on (plgpu.kernel: `Mesh(**mesh_kwargs)` — JAX 0.12 raises
    `Mesh.__init__() got an unexpected keyword argument 'out_shape'`). Models call this at the
    point JAX reaches that call (for plgpu.kernel: once it has a body)."""
    if not api.startswith(_CHECKED_PREFIXES) or not call.complete:
        return True
    sig = jax_source.signature(api)
    if sig is None or sig.forwards_to is None:
        return True
    keywords = list(call.kwargs)
    extra = forwarded_keywords(sig, len(call.args), keywords)
    if not extra or set(extra) & set(sig.forward_own_keywords):
        return True  # nothing passed on, or a clash JAX reports differently
    err = bind(sig.forwards_to, 0, list(sig.forward_own_keywords) + extra)
    if err is not None and err.kind == "unexpected-keyword":
        _report(call, api, err, blame_line=blame_line)
        return False
    return True


def missing_attribute(node: ast.AST, module_origin: str | None, module: str, attr: str, interp) -> bool:
    """Report WG091 for `module.attr` when the installed JAX's public module lacks `attr`.
    Only for the public modules themselves (private `jax._src` paths hold other names)."""
    if _PREFIX_OF.get(module_origin) != module:  # (every attribute read of `plgpu.` / `pl.`)
        return False
    prefix = module
    message = jax_source.missing_attribute(f"{prefix}.{attr}", module_origin)
    if message is None:
        return False
    from wgmma_lsp.rules import api_removed

    line = getattr(node, "lineno", 0) - 1
    interp.report(api_removed.RULE, message, interp.span(node), line,
                  data={"api": f"{prefix}.{attr}"})
    return True


def check_pallas_call_lowering(call: Call, wrapped) -> None:
    """WG093: `pl.pallas_call(..., compiler_params=plgpu.CompilerParams(...))(...)` where the
    installed JAX has no pallas_call lowering for Mosaic GPU params (it fails while lowering)."""
    from wgmma_lsp.interpret.values import BlockSpecVal, Const, TupleVal, Wrapped
    from wgmma_lsp.rules import pallas_call_mosaic_gpu

    kw = wrapped.kwargs
    params = kw.get("compiler_params")
    if not (isinstance(params, Wrapped) and params.api == "plgpu.CompilerParams"):
        return
    interpret = kw.get("interpret", Const(False))
    if not (isinstance(interpret, Const) and interpret.value in (False, None)):
        return  # interpret mode lowers nothing for the GPU
    if jax_source.pallas_call_lowers_mosaic_gpu() is not False:
        return

    def gmem(v) -> bool:
        specs = v.items if isinstance(v, TupleVal) else (v,)
        return all(isinstance(s, BlockSpecVal) and s.memory_space in ("gmem", "any")
                   and s.block_shape is None and not s.transforms for s in specs)

    gmem_specs = "grid" not in kw and "grid_spec" not in kw and all(
        k in kw and gmem(kw[k]) for k in ("in_specs", "out_specs"))
    alias = None
    if params.call_span is not None:
        text = call.interp.lines.text(params.call_span)
        head = text.split("(", 1)[0].strip()
        if head.endswith(".CompilerParams"):
            alias = head[: -len(".CompilerParams")]
    call.interp.report(pallas_call_mosaic_gpu.RULE, pallas_call_mosaic_gpu.MESSAGE,
                       wrapped.call_span, call.line,
                       data={"pallas_call_span": wrapped.call_span, "plgpu_alias": alias,
                             "gmem_specs": gmem_specs})
