"""Shared trace runs: each fixture file is traced once per session (importing JAX costs ~1.5 s)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wgmma_lsp.interpret.jax_version import matches
from wgmma_lsp.settings import Settings
from wgmma_lsp.trace.check import trace_file
from wgmma_lsp.trace.runner import TraceOutcome

FIXTURES = Path(__file__).parent / "fixtures"
EXPECT = re.compile(r"#\s*expect-trace(?:\[(?P<versions>[^\]]*)\])?:\s*(?P<message>.+?)\s*$")


def expected_errors(path: Path) -> dict[int, str]:
    """`{0-based line: message}` from the file's trailing `# expect-trace: MESSAGE` comments
    (`# expect-trace[<0.12]: MESSAGE`: only where the installed JAX matches those versions)."""
    out = {}
    for i, line in enumerate(path.read_text().splitlines()):
        m = EXPECT.search(line)
        if m and m.group("versions") is not None and not matches(m.group("versions")):
            continue
        if m and not line.lstrip().startswith(("#", '"')):
            out[i] = m.group("message")
    return out


def _trace(name: str, **settings: object) -> TraceOutcome:
    path = FIXTURES / name
    outcome = trace_file(path, path.read_text(), Settings(**settings))
    assert outcome is not None, f"{name} declares no entry point"
    return outcome


@pytest.fixture(scope="session")
def seed_outcome() -> TraceOutcome:
    return _trace("seed_errors.py")


@pytest.fixture(scope="session")
def lowering_outcome() -> TraceOutcome:
    return _trace("lowering_kernels.py")


@pytest.fixture(scope="session")
def kernel_api_outcome() -> TraceOutcome:
    return _trace("kernel_api_kernels.py")


@pytest.fixture(scope="session")
def construct_outcome() -> TraceOutcome:
    return _trace("construct_error.py")
