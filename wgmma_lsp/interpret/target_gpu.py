"""The GPU a kernel module is written for, read from the Mosaic GPU API it uses.

JAX's Mosaic GPU lowering asks the default device for its compute capability
(`mosaic.gpu.utils._infer_arch`); the analysis runs on no machine, so it takes the GPU the
module is written for: a test context runs the library's op on it (entry/op_dispatch.py), and
what the lowering does differently by generation follows it (models/pipeline_smem.py: before
Hopper, `emit_pipeline` copies with cp.async and allocates no barriers).
"""

from __future__ import annotations

import ast
import functools

from wgmma_lsp.interpret.ast_walk import CHILDLESS, push_children

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: Mosaic GPU APIs only one GPU generation has, by the compute capability JAX reports for it.
HOPPER_ONLY = frozenset({"wgmma", "wgmma_wait", "WGMMAAccumulatorRef"})
BLACKWELL_ONLY = frozenset({"tcgen05_mma", "tcgen05_commit_arrive", "async_load_tmem", "async_store_tmem",
                            "TMEM", "TMEMLayout", "commit_tmem"})
#: Ampere's warp-level `plgpu.mma` (JAX 0.12): a module using it and neither of the above is
#: written for an sm80 GPU.
AMPERE_ONLY = frozenset({"mma"})


@functools.lru_cache(maxsize=16)  # (each entry holds a whole module's syntax alive: few)
def gpu_capability(tree: ast.Module) -> str | None:
    """The GPU a kernel module is written for, by the Mosaic GPU API it uses: "9.0" (WGMMA,
    Hopper), "10.0" (tcgen05 and TMEM, Blackwell), "8.0" (only Ampere's `plgpu.mma`); None when
    it uses none of them, or two generations' own."""
    names = _attribute_names(tree)
    hopper, blackwell = bool(names & HOPPER_ONLY), bool(names & BLACKWELL_ONLY)
    if hopper and blackwell:
        return None
    if hopper or blackwell:
        return "9.0" if hopper else "10.0"
    return "8.0" if names & AMPERE_ONLY else None


def _attribute_names(tree: ast.AST) -> set[str]:
    """`{n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}`, without ast.walk's
    generators, and not walking into nodes that hold no attribute (names, constants)."""
    names: set[str] = set()
    stack: list[Any] = [tree]
    kinds = _KINDS
    while stack:
        n = stack.pop()
        kind = kinds.get(type(n))
        if kind is None:
            kind = kinds[type(n)] = (_ATTRIBUTE if isinstance(n, ast.Attribute)
                                     else _LEAF if isinstance(n, _LEAVES) else _OTHER)
        if kind is _LEAF:
            continue
        if kind is _ATTRIBUTE:
            names.add(n.attr)
        push_children(stack, n)
    return names


# Nodes that hold no other node (or none that matters here): not walked into.
_LEAVES = (ast.Name, *CHILDLESS)
_ATTRIBUTE, _LEAF, _OTHER = "attribute", "leaf", "other"
_KINDS: dict[type, str] = {}  # a node type -> what _attribute_names does with it


def before_hopper(interp: Any) -> bool:
    """Whether the analysed code targets a GPU older than Hopper: the test context's device
    (`program_hooks.gpu_capability`), else the GPU the analysed module is written for."""
    hooks = interp.program_hooks
    cap = getattr(hooks, "gpu_capability", None) if hooks is not None else None
    if cap is None and isinstance(getattr(interp, "tree", None), ast.Module):
        cap = gpu_capability(interp.tree)
    return cap is not None and float(cap) < 9.0
