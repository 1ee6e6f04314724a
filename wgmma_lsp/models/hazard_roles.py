"""Races between the threads of different roles, and between copies out, reported from the
kernel's hazard log (hazards/roles_report.py: WG215, WG216).

`install()` wraps the kernel launches before `hazard_ops` does (a lower `INSTALL_ORDER`): this
wrapper runs inside the one that opens the kernel's log, once the body has run and while the log is
still open, and reports from it when it is one to analyse (`hazards.log.finished`).
"""

from __future__ import annotations

from wgmma_lsp.hazards import log as H
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import Value
from wgmma_lsp.models import pallas  # noqa: F401  (first: the launches wrapped here)
from wgmma_lsp.models.registry import MODELS

#: Before hazard_ops (10), which opens the log around what this wraps.
INSTALL_ORDER = 9


def _launch(name: str) -> None:
    inner = MODELS[name]

    def fn(call: Call) -> Value:
        result = inner(call)
        log = H.finished(call.interp)
        if log is not None:
            # (imported here: the role analysis' modules only for a kernel that logged)
            from wgmma_lsp.hazards.roles_report import report_roles

            report_roles(call.interp, log)
        return result

    fn.__doc__ = inner.__doc__
    MODELS[name] = fn


def install() -> None:
    """Extend the kernel launch models (called once by `registry.load_all`)."""
    _launch("plgpu.kernel()")
    _launch("pl.pallas_call()")
