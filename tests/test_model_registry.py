"""Model modules register, they do not patch: importing one adds to the registry's tables and
replaces nothing another module registered. Modules that extend other modules' models (their own
checks around a model) do it in `install()`, which `registry.load_all` calls once, in their
declared `INSTALL_ORDER`, after every model module was imported."""

from __future__ import annotations

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import importlib, pkgutil
    import wgmma_lsp.models as package
    from wgmma_lsp.models import registry
    TABLES = ("MODELS", "METHODS", "ATTRIBUTES", "GETITEM", "SETITEM", "CONSTANTS")
    replaced = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name == "registry":
            continue
        before = {t: dict(getattr(registry, t)) for t in TABLES}
        importlib.import_module(f"wgmma_lsp.models.{info.name}")
        for t in TABLES:
            now = getattr(registry, t)
            replaced += [f"{info.name}: {t}[{k!r}]" for k, v in before[t].items() if now.get(k) is not v]
    print("REPLACED", replaced)
    order, declared = [], []
    for info in pkgutil.iter_modules(package.__path__):
        m = importlib.import_module(f"wgmma_lsp.models.{info.name}")
        if hasattr(m, "install"):
            declared.append((m.INSTALL_ORDER, info.name))
            real = m.install
            m.install = (lambda n, f: (lambda: (order.append(n), f())))(info.name, real)
    registry.load_all()
    registry.load_all()
    print("ORDER", order)
    print("DECLARED", [name for _, name in sorted(declared)])
""")


def test_importing_a_model_module_replaces_no_model_and_extensions_install_once_in_order() -> None:
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines() if line.startswith(("REPLACED", "ORDER", "DECLARED")))
    assert lines["REPLACED"] == "[]"
    assert lines["ORDER"] == lines["DECLARED"]  # each once, by INSTALL_ORDER (then name)
    for name in ("hazard_ops", "implicit_copies", "lane_layouts", "primitive_lowering"):
        assert f"'{name}'" in lines["ORDER"], name
