"""`jax.__version__` and `jax.__version_info__` as the analysed environment's JAX has them, so
that code choosing by version (`if jax.__version_info__ >= (0, 11, 0): ...`, as tokamax's
kernels pick their lowering semantics) follows the branch that JAX runs. `__version_info__` is
built as jax/version.py builds it (`_version_as_tuple`: the numeric parts of the version).
Unknown (no JAX found, no bundled facts' version) when the version is not known.
"""

from __future__ import annotations

from wgmma_lsp.interpret import jax_facts
from wgmma_lsp.interpret.values import Const, TupleVal, Value
from wgmma_lsp.models.registry import COMPUTED_CONSTANTS


def _text() -> str | None:
    return jax_facts.current().jax_version


def version() -> Value | None:
    text = _text()
    return Const(text) if text is not None else None


def version_info() -> Value | None:
    text = _text()
    if text is None:
        return None
    return TupleVal(tuple(Const(int(part)) for part in text.split(".") if part.isdigit()))


for _module in ("jax", "jax.version"):
    COMPUTED_CONSTANTS[f"{_module}.__version__"] = version
    COMPUTED_CONSTANTS[f"{_module}.__version_info__"] = version_info
