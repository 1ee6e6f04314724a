"""What is read out of TOML files, kept by content (wgmma_lsp/toml_cache.py): the same value as
`tomllib` gives, without importing it once these bytes were read; anything JSON would not give
back exactly, an invalid file, an extraction that raises: parsed again, raising as before."""

from __future__ import annotations

import datetime
import json
import sys
import tomllib
from pathlib import Path

import pytest

from wgmma_lsp import config, toml_cache


@pytest.fixture
def cache(tmp_path: Path, monkeypatch) -> Path:
    monkeypatch.setenv("WGMMA_LSP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(toml_cache, "_entries", None)
    return tmp_path / "cache" / "toml-tables.json"


def _table(data: dict) -> object:
    return data.get("tool", {}).get("wgmma-lsp")


def _fresh_process(monkeypatch) -> None:
    """As a new process would: the file read again, and no tomllib to import."""
    monkeypatch.setattr(toml_cache, "_entries", None)
    monkeypatch.setitem(sys.modules, "tomllib", None)  # `import tomllib` raises ImportError


RAW = b'[tool.wgmma-lsp]\nselect = ["WG0"]\nseverity = { WG009 = "warning" }\nn = 3\nx = 1.5\nb = true\n'


def test_a_value_read_before_comes_from_the_cache(cache: Path, monkeypatch) -> None:
    first = toml_cache.extract(RAW, "t", _table)
    assert first == _table(tomllib.loads(RAW.decode()))
    assert cache.is_file()
    _fresh_process(monkeypatch)
    again = toml_cache.extract(RAW, "t", _table)
    assert again == first and type(again["n"]) is int and type(again["x"]) is float \
        and type(again["b"]) is bool
    again["select"].append("changed")  # a fresh value each call
    assert toml_cache.extract(RAW, "t", _table)["select"] == ["WG0"]


def test_absent_is_kept_too(cache: Path, monkeypatch) -> None:
    assert toml_cache.extract(b'[project]\nname = "x"\n', "t", _table) is None
    _fresh_process(monkeypatch)
    assert toml_cache.extract(b'[project]\nname = "x"\n', "t", _table) is None


def test_the_key_is_the_bytes_and_the_kind(cache: Path, monkeypatch) -> None:
    toml_cache.extract(RAW, "t", _table)
    _fresh_process(monkeypatch)
    with pytest.raises(ImportError):  # other bytes, or another kind: parsed
        toml_cache.extract(RAW + b"m = 1\n", "t", _table)
    with pytest.raises(ImportError):
        toml_cache.extract(RAW, "other", _table)


def test_what_json_would_change_is_parsed_each_time(cache: Path, monkeypatch) -> None:
    raw = b"[tool.wgmma-lsp]\nwhen = 2024-01-02\n"
    assert toml_cache.extract(raw, "t", _table) == {"when": datetime.date(2024, 1, 2)}
    assert not cache.exists()


def test_invalid_toml_raises_as_tomllib_does_and_is_not_kept(cache: Path) -> None:
    with pytest.raises(tomllib.TOMLDecodeError):
        toml_cache.extract(b"[tool\n", "t", _table)
    with pytest.raises(UnicodeDecodeError):
        toml_cache.extract(b"a = '\xff'\n", "t", _table)
    with pytest.raises(AttributeError):  # the extraction's own error
        toml_cache.extract(b"tool = 1\n", "t", _table)
    assert not cache.exists()


def test_a_corrupt_cache_file_is_ignored_and_replaced(cache: Path, caplog) -> None:
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    assert toml_cache.extract(RAW, "t", _table)["n"] == 3
    assert "cannot be read" in caplog.text
    assert json.loads(cache.read_text())["format"] == toml_cache.FORMAT


def test_the_file_keeps_the_newest_entries(cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(toml_cache, "MAX_ENTRIES", 3)
    for i in range(5):
        toml_cache.extract(f"[tool.wgmma-lsp]\nn = {i}\n".encode(), "t", _table)
    entries = json.loads(cache.read_text())["entries"]
    assert sorted(json.loads(v)["n"] for v in entries.values()) == [2, 3, 4]


def test_the_configuration_is_the_same_from_the_cache(cache: Path, tmp_path: Path, monkeypatch) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_bytes(RAW.replace(b"n = 3\nx = 1.5\nb = true\n", b""))
    first = config.find(project)
    config._load.cache_clear()
    _fresh_process(monkeypatch)
    assert config.find(project) == first and first.select == ("WG0",)


def test_invalid_configuration_is_still_a_config_error(cache: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.wgmma-lsp\n")
    config._load.cache_clear()
    with pytest.raises(config.ConfigError, match="invalid TOML"):
        config.find(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool]\nwgmma-lsp = "x"\n')
    config._load.cache_clear()
    with pytest.raises(config.ConfigError, match="must be a table"):
        config.find(tmp_path)
