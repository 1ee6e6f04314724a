"""Whose JAX is analysed (wgmma_lsp/environment.py): found like pyright and ty find the
project's interpreter, by reading files only; and without any JAX, the facts bundled for the
newest supported JAX still report every lowering fixture, and the run says it used them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jax_oracle import expectations
from wgmma_lsp import environment
from wgmma_lsp.analysis import analyze
from wgmma_lsp.entry.context import strip_context_note
from wgmma_lsp.ide.diagnostics import diagnostics
from wgmma_lsp.ide.model import Severity
from wgmma_lsp.interpret import jax_facts
from wgmma_lsp.interpret.jax_version import parse

FIXTURES = Path(__file__).parent / "fixtures"
LOWERING_KERNEL = sorted((FIXTURES / "lowering_kernel").glob("*.py"))
LOWERING = sorted((FIXTURES / "lowering").glob("*.py"))


def _venv(where: Path, jax_version: str | None = None) -> Path:
    """A real virtual environment (no pip), optionally with a stand-in `jax` package."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    if jax_version is not None:
        site = next(where.glob("lib/python3*/site-packages"))
        (site / "jax").mkdir()
        (site / "jax" / "__init__.py").write_text("raise SystemExit('jax was imported')\n")
        info = site / f"jax-{jax_version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: jax\nVersion: {jax_version}\n")
    return where


@pytest.fixture(scope="module")
def no_jax(tmp_path_factory) -> Path:
    return _venv(tmp_path_factory.mktemp("env") / "nojax")


@pytest.fixture
def bundled_facts(no_jax: Path):
    """Analyse in-process as a JAX-less environment would, then restore this process's own."""
    before = environment.active()
    environment.activate(environment.discover(str(no_jax / "bin" / "python"), "--python"))
    try:
        yield
    finally:
        environment.activate(before)


def test_a_venv_is_read_not_run(tmp_path: Path) -> None:
    venv = _venv(tmp_path / "proj" / ".venv", "0.9.7")
    env = environment.discover(str(venv / "bin" / "python"), "--python")
    assert (env.prefix, env.jax_version) == (venv, "0.9.7")
    assert env.jax_root == next(venv.glob("lib/python3*/site-packages")) / "jax"


def test_an_interpreter_that_is_no_venv_is_read_not_run(tmp_path: Path) -> None:
    """`[tool.wgmma-lsp] python = "tools/python3"` may come from a workspace nobody trusts: the
    configured file is never executed; its prefix (the folder above `bin/`, through symlinks) is read."""
    marker = tmp_path / "ran"
    prefix = tmp_path / "conda"
    site = prefix / "lib" / "python3.12" / "site-packages"
    (site / "jax").mkdir(parents=True)
    (site / "jax" / "__init__.py").write_text("raise SystemExit('jax was imported')\n")
    (site / "jax-0.9.8.dist-info").mkdir()
    (site / "jax-0.9.8.dist-info" / "METADATA").write_text("Name: jax\nVersion: 0.9.8\n")
    (prefix / "bin").mkdir()
    python = prefix / "bin" / "python3"
    python.write_text(f"#!/bin/sh\ntouch {marker}\n")
    python.chmod(0o755)
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "python").symlink_to(python)
    for configured in (python, tmp_path / "ws" / "python"):
        env = environment.discover(str(configured), "python setting")
        assert (env.jax_root, env.jax_version) == (site / "jax", "0.9.8")
    assert not marker.exists()


def test_the_order_explicit_then_virtual_env_then_dot_venv(tmp_path: Path, monkeypatch) -> None:
    project = tmp_path / "proj"
    dot = _venv(project / ".venv", "0.9.1")
    active = _venv(tmp_path / "active", "0.9.2")
    explicit = _venv(tmp_path / "chosen", "0.9.3")
    monkeypatch.setenv("VIRTUAL_ENV", str(active))
    assert environment.discover(str(explicit), roots=[project]).jax_version == "0.9.3"
    assert environment.discover(roots=[project]).jax_version == "0.9.2"
    monkeypatch.delenv("VIRTUAL_ENV")
    found = environment.discover(roots=[project])
    assert (found.jax_version, found.prefix, found.origin) == ("0.9.1", dot, f".venv in {project}")


def test_an_environment_without_jax_gives_way_to_one_with_it(tmp_path: Path, monkeypatch) -> None:
    """A tools venv (pipx) is VIRTUAL_ENV but holds no JAX: the project's .venv does."""
    project = tmp_path / "proj"
    _venv(project / ".venv", "0.9.1")
    monkeypatch.setenv("VIRTUAL_ENV", str(_venv(tmp_path / "tools")))
    assert environment.discover(roots=[project]).jax_version == "0.9.1"


def test_an_explicit_environment_without_jax_is_used_as_given(no_jax: Path) -> None:
    env = environment.discover(str(no_jax / "bin" / "python"), "--python")
    assert env.jax_root is None and env.prefix == no_jax
    assert "bundled for jax" in env.describe()


def test_the_project_root_holds_the_nearest_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    assert environment.project_root(tmp_path / "src" / "pkg" / "k.py") == tmp_path


def _errors(path: Path) -> set[tuple[int, str, str]]:
    source = path.read_text()
    return {(d.span.line + 1, d.code, strip_context_note(d.message).rstrip())  # as the comments read
            for d in diagnostics(analyze(source, str(path))) if d.severity == Severity.ERROR}


@pytest.mark.parametrize("path", LOWERING_KERNEL, ids=lambda p: p.stem)
def test_without_jax_every_lowering_kernel_fixture_is_reported(path: Path, bundled_facts) -> None:
    """The errors the fixture records for the bundled JAX version (checked against that JAX
    by tests/test_kernel_lowering.py) are found with the bundled facts alone."""
    version = parse(jax_facts.bundled_version())
    assert jax_facts.current().source == "bundled"
    assert _errors(path) == expectations(path.read_text(), version=version)


BUNDLED_JAX_HERE = environment.own_jax()[1] == jax_facts.bundled().jax_version


@pytest.mark.skipif(not BUNDLED_JAX_HERE, reason="needs the JAX the facts were bundled from")
@pytest.mark.parametrize("path", LOWERING + LOWERING_KERNEL, ids=lambda p: p.stem)
def test_the_bundled_facts_report_what_their_jax_reports(path: Path, no_jax: Path) -> None:
    real = _errors(path)
    before = environment.active()
    environment.activate(environment.discover(str(no_jax), "--python"))
    try:
        bundled = _errors(path)
    finally:
        environment.activate(before)
    assert bundled == real


def _check(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    return subprocess.run([sys.executable, "-I", "-m", "wgmma_lsp", "check", *args],
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


def test_the_cli_without_jax_says_so_once_and_still_reports(no_jax: Path) -> None:
    out = _check("--python", str(no_jax / "bin" / "python"), "--format", "json",
                 str(FIXTURES / "lowering_kernel"), cwd=no_jax)
    notes = [line for line in out.stderr.splitlines() if line.startswith("note:")]
    assert notes == [f"note: no JAX found in {no_jax} (--python); using the facts bundled for "
                     f"jax {jax_facts.bundled_version()} (install jax there, or pass another --python)"]
    version = parse(jax_facts.bundled_version())
    want = sum(len(expectations(p.read_text(), version=version)) for p in LOWERING_KERNEL)
    assert want and len(json.loads(out.stdout)) == want
    assert out.returncode == 1


def test_show_settings_names_the_jax_it_follows(no_jax: Path) -> None:
    out = _check("--python", str(no_jax), "--show-settings", str(FIXTURES / "lowering_kernel"),
                 cwd=no_jax)
    assert f"jax: no JAX found in {no_jax} (--python); using the facts bundled for jax " in out.stdout
    assert "lowering-semantics: (the JAX default: warpgroup, jax " in out.stdout
    assert "from the bundled facts)" in out.stdout


def test_the_server_without_jax_says_so_once_and_still_reports(no_jax: Path) -> None:
    """`python` in the editor's initializationOptions names a JAX-less environment: one Info
    window/showMessage says the bundled facts are used, and a lowering error is published."""
    from raw_lsp import RawClient

    path = next(p for p in LOWERING_KERNEL if expectations(
        p.read_text(), version=parse(jax_facts.bundled_version())) and "kernel_level" not in p.name)
    client = RawClient(env={"VIRTUAL_ENV": ""})
    try:
        client.initialize({"python": str(no_jax / "bin" / "python")})
        client.open(path.as_uri(), path.read_text())
        client.drain(8)
        shown = [n["params"] for n in client.notifications if n["method"] == "window/showMessage"]
        assert len(shown) == 1 and shown[0]["type"] == 3  # Info
        assert f"no JAX found in {no_jax}" in shown[0]["message"]
        assert "bundled for jax" in shown[0]["message"]
        published = [d for p in client.diagnostics(path.as_uri()) for d in p["diagnostics"]]
        assert published, "the lowering error is reported with the bundled facts"
    finally:
        client.close()
    assert "analysed environment: no JAX found" in client.stderr()


def _importlib_answer() -> tuple[Path | None, str | None]:
    return environment.own_jax_from_metadata()


@pytest.mark.parametrize("entries", [
    ["Metadata-Version: 2.1\nName: jax\nVersion: 1.2.3\n"],
    ["Metadata-Version: 2.1\nName: jax\nVersion:   4.5\r\nSummary: x\n\nbody\n"],
    ["Name: jax\n\nVersion: 9\n"],  # no version among the headers: importlib's own answer
    ["Name: jax\nVersion: 1\n continued\n"],  # folded
    [None, "Metadata-Version: 2.1\nName: jax\nVersion: 2.0\n"],  # the first entry has no jax
])
def test_own_jax_finds_what_importlib_metadata_finds(tmp_path: Path, monkeypatch, entries) -> None:
    """own_jax reads `sys.path`'s folders itself (importing `importlib.metadata` is ~20 ms of a
    one-file check): the same package folder and version as `importlib.metadata`."""
    paths = []
    for i, text in enumerate(entries):
        d = tmp_path / f"site{i}"
        d.mkdir()
        paths.append(str(d))
        if text is None:
            (d / "numpy-1.0.dist-info").mkdir()
            continue
        (d / "jax").mkdir()
        (d / "jax" / "__init__.py").write_text("")
        info = d / "JAX-0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(text)
    monkeypatch.setattr(sys, "path", paths + [str(tmp_path / "missing")])
    assert environment.own_jax() == _importlib_answer()


def test_own_jax_without_jax_on_the_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert environment.own_jax() == _importlib_answer() == (None, None)


def test_own_jax_in_this_environment() -> None:
    assert environment.own_jax() == _importlib_answer()


def test_a_workspace_folder_inside_a_site_packages_uses_that_environment(tmp_path: Path,
                                                                          monkeypatch) -> None:
    """An installed package opened as a folder (tokamax's attention ops, in a project that holds
    several environments): its files run only with the environment they are installed in, not
    with the `.venv` of the project above it (which held another JAX: false WG090s followed)."""
    from wgmma_lsp.environment_lsp import choose

    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # (conftest sets it to the suite's venv)
    project = tmp_path / "proj"
    (project / "pyproject.toml").parent.mkdir(parents=True)
    (project / "pyproject.toml").write_text("")
    _venv(project / ".venv", "0.10.2")
    other = _venv(project / ".venv312", "0.12.0")
    ops = next(other.glob("lib/python3*/site-packages")) / "lib_pkg" / "ops"
    ops.mkdir(parents=True)
    env = choose(None, [ops])
    assert (env.prefix, env.jax_version) == (other, "0.12.0")
    assert env.origin == f"the environment {ops} is installed in"
    # (a folder of the project itself still gets the project's .venv)
    assert choose(None, [project]).jax_version == "0.10.2"


def test_a_file_installed_with_another_jax_is_not_analysed_with_ours(tmp_path: Path) -> None:
    """A library file opened from another virtualenv (go-to-definition into it, or named to
    `check`) runs only with that environment's JAX: analysed with ours, it got another JAX's
    findings (tokamax's attention sm90, from a 3.12 venv, under jax 0.10: five false WG090s).
    It is not analysed; one WG904 says why and how to analyse it."""
    ours = _venv(tmp_path / "ours", "0.9.1")
    theirs = _venv(tmp_path / "theirs", "0.9.2")
    same = _venv(tmp_path / "same", "0.9.1")
    site = lambda env: next(env.glob("lib/python3*/site-packages"))  # noqa: E731
    before = environment.active()
    environment.activate(environment.discover(str(ours / "bin" / "python"), "--python"))
    try:
        note = environment.other_jax_note(site(theirs) / "lib_pkg" / "kernel.py")
        assert note is not None and "jax 0.9.2" in note and str(theirs) in note
        assert environment.other_jax_note(site(ours) / "lib_pkg" / "kernel.py") is None
        assert environment.other_jax_note(site(same) / "lib_pkg" / "kernel.py") is None  # same JAX
        assert environment.other_jax_note(tmp_path / "project" / "k.py") is None  # not installed
        from wgmma_lsp.batch import check_source
        from wgmma_lsp.settings import Settings

        stops: list = []
        found = check_source(str(site(theirs) / "lib_pkg" / "kernel.py"),
                             (FIXTURES / "errors" / "ampere_mma.py").read_text(), Settings(), stops=stops)
        assert [d.code for d in found] == ["WG904"] and "not analysed" in found[0].message
        assert [s.reason for s in stops] == ["other-environment"]
    finally:
        environment.activate(before)
