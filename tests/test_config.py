"""Project configuration (`[tool.wgmma-lsp]`, `wgmma-lsp.toml`): every option, read by the CLI
and by the server (with the editor's settings on top)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wgmma_lsp import config
from wgmma_lsp.cli import main
from wgmma_lsp.ide.model import Severity

ROOT = Path(__file__).parent.parent
BAD = (ROOT / "examples" / "seed_errors.py").read_text()
FIXED = (ROOT / "examples" / "seed_fixed.py").read_text()
# seed_fixed.py without its operand transforms: Lane lowering rejects it (WG018), Warpgroup not.
UNTRANSFORMED = FIXED.replace(", transforms=transforms)", ")")
assert UNTRANSFORMED != FIXED


def codes(out: str) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in out.splitlines()
            if ": WG" in line and not line.startswith(" ")]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kern").mkdir()
    (tmp_path / "kern" / "k.py").write_text(BAD)
    return tmp_path


def pyproject(root: Path, body: str) -> None:
    (root / "pyproject.toml").write_text(f"[project]\nname = 'x'\n\n[tool.wgmma-lsp]\n{body}\n")


def test_select_and_ignore(repo: Path, capsys) -> None:
    pyproject(repo, 'select = ["WG001", "WG002"]\nignore = ["accumulator-shape"]')
    assert main(["check", "."]) == 1
    assert codes(capsys.readouterr().out) == ["WG001"]


def test_command_line_on_top_of_the_configuration(repo: Path, capsys) -> None:
    pyproject(repo, 'select = ["WG001"]')
    assert main(["check", "--select", "WG003", "."]) == 1  # --select replaces
    assert codes(capsys.readouterr().out) == ["WG003"]
    pyproject(repo, 'ignore = ["WG001"]')
    assert main(["check", "--ignore", "WG002", "."]) == 1  # --ignore adds
    assert codes(capsys.readouterr().out) == ["WG003"]


def test_severity(repo: Path, capsys) -> None:
    pyproject(repo, 'severity = { WG001 = "warning", WG002 = "off", wgmma-accumulator-ref-type = "warning" }')
    assert main(["check", "."]) == 0  # only warnings left
    out = capsys.readouterr().out
    assert codes(out) == ["WG001", "WG003"] and "[warning]" in out
    assert out.splitlines()[-1] == "Found 2 warnings in 1 file."


def test_per_file_ignores(repo: Path, capsys) -> None:
    (repo / "tests").mkdir()
    (repo / "tests" / "t.py").write_text(BAD)
    pyproject(repo, 'per-file-ignores = { "tests/*.py" = ["WG001", "WG002"], "k.py" = ["WG003"] }')
    main(["check", "--jobs", "1", "."])
    out = capsys.readouterr().out
    assert [line.split(":")[0] + " " + line.split(": ")[1][:5] for line in out.splitlines()
            if ": WG" in line and not line.startswith(" ")] == [
        "kern/k.py WG001", "kern/k.py WG002", "tests/t.py WG003"]


def test_exclude_and_extend_exclude(repo: Path, capsys) -> None:
    (repo / "build").mkdir()
    (repo / "build" / "b.py").write_text(BAD)
    pyproject(repo, 'extend-exclude = ["kern/"]')
    assert main(["check", "."]) == 0  # build/ excluded by default, kern/ by the configuration
    capsys.readouterr()
    pyproject(repo, 'exclude = ["kern/"]')  # replaces the defaults: build/ is walked
    assert main(["check", "."]) == 1
    assert {line.split(":")[0] for line in capsys.readouterr().out.splitlines() if ": WG" in line
            and not line.startswith(" ")} == {"build/b.py"}


def test_respect_gitignore_setting(repo: Path, capsys) -> None:
    (repo / ".git").mkdir()
    (repo / ".gitignore").write_text("kern/\n")
    assert main(["check", "."]) == 0
    capsys.readouterr()
    pyproject(repo, "respect-gitignore = false")
    assert main(["check", "."]) == 1


def test_lowering_semantics(tmp_path: Path, monkeypatch, capsys) -> None:
    """The default lowering semantics for kernels that do not say: an untransformed WGMMA
    operand is an error under Lane semantics (JAX 0.10's default), not under Warpgroup."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text(UNTRANSFORMED)
    pyproject(tmp_path, 'lowering-semantics = "lane"')
    assert main(["check", "k.py"]) == 1
    assert set(codes(capsys.readouterr().out)) == {"WG018"}
    pyproject(tmp_path, 'lowering-semantics = "warpgroup"')
    assert main(["check", "k.py"]) == 0
    capsys.readouterr()


def test_wgmma_lsp_toml_wins_and_nearest_wins(repo: Path, capsys) -> None:
    pyproject(repo, 'ignore = ["WG001"]')
    (repo / "wgmma-lsp.toml").write_text('ignore = ["WG002"]\n')
    assert config.find(repo / "kern" / "k.py").path == repo / "wgmma-lsp.toml"
    (repo / "kern" / "pyproject.toml").write_text("[tool.wgmma-lsp]\nignore = ['WG003']\n")
    assert config.find(repo / "kern" / "k.py").path == repo / "kern" / "pyproject.toml"
    (repo / "kern" / "pyproject.toml").write_text("[project]\nname = 'no-table'\n")  # skipped
    assert config.find(repo / "kern" / "k.py").path == repo / "wgmma-lsp.toml"
    main(["check", "."])
    assert codes(capsys.readouterr().out) == ["WG001", "WG003"]


@pytest.mark.parametrize("body, named", [
    ('select = ["WG001", "WG999"]', "WG999"),
    ('ignore = ["no-such-rule"]', "no-such-rule"),
    ('severity = { WG998 = "warning" }', "WG998"),
    ('severity = { WG001 = "loud" }', "loud"),
    ('per-file-ignores = { "x.py" = ["WG997"] }', "WG997"),
    ('lowering-semantics = "threads"', "threads"),
    ('sweeps = "some"', "some"),
    ('selekt = ["WG001"]', "selekt"),
    ("select = 'WG001", "invalid TOML"),
])
def test_bad_configuration_is_a_usage_error(repo: Path, capsys, body: str, named: str) -> None:
    pyproject(repo, body)
    assert main(["check", "."]) == 2
    out, err = capsys.readouterr()
    assert out == "" and named in err and "pyproject.toml" in err


def test_show_settings(repo: Path, capsys) -> None:
    pyproject(repo, 'ignore = ["WG003"]\nper-file-ignores = { "kern/*.py" = ["WG002"] }\n'
                    'lowering-semantics = "lane"\nsweeps = "budget"\ntrace = ["kern/k.py:f(bf16[64,64])"]')
    assert main(["check", "--show-settings", "kern/k.py"]) == 0
    out = capsys.readouterr().out
    assert f"configuration: {repo / 'pyproject.toml'}" in out
    assert "ignore: WG003, WG002" in out
    assert "per-file-ignores matched: WG002" in out
    assert "lowering-semantics: lane" in out
    assert "sweeps: budget" in out
    assert "trace entries: kern/k.py:f(bf16[64,64])" in out
    assert f"result cache: {os.environ['WGMMA_LSP_CACHE_DIR']}/results" in out.splitlines()
    assert main(["check", "--no-cache", "--show-settings", "kern/k.py"]) == 0
    assert "/results (off: --no-cache)" in capsys.readouterr().out


def test_server_settings_editor_on_top(repo: Path) -> None:
    pyproject(repo, 'select = ["WG001", "WG002"]\nseverity = { WG001 = "warning" }')
    file = repo / "kern" / "k.py"
    s = config.settings_for(file)
    assert s.select == ["WG001", "WG002"] and s.severity["WG001"] == Severity.WARNING
    editor = {"rules": {"ignore": ["WG002"], "severity": {"WG001": "error"}, "select": []}}
    s = config.settings_for(file, editor=editor)
    assert s.select == ["WG001", "WG002"]  # an empty editor `select` leaves the project's
    assert s.ignore == ["WG002"] and s.severity["WG001"] == Severity.ERROR
    assert not s.rule_enabled("WG002", "accumulator-shape")


def test_docs_base_url(repo: Path, capsys) -> None:
    import json

    pyproject(repo, 'docs-base-url = "https://docs.example.org/rules/"')
    assert main(["check", "--format", "sarif", "."]) == 1
    rules = json.loads(capsys.readouterr().out)["runs"][0]["tool"]["driver"]["rules"]
    assert rules[0]["helpUri"] == "https://docs.example.org/rules/WG001"
    assert main(["check", "--format", "json", "."]) == 1
    assert json.loads(capsys.readouterr().out)[0]["documentation"] == "https://docs.example.org/rules/WG001"
    pyproject(repo, 'docs-base-url = "docs"')
    assert main(["check", "."]) == 2
    assert "docs-base-url" in capsys.readouterr().err
