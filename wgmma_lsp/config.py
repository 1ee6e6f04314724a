"""Project configuration: `[tool.wgmma-lsp]` in `pyproject.toml`, or a `wgmma-lsp.toml`.

Found by walking up from each checked file (the nearest `wgmma-lsp.toml`, `.wgmma-lsp.toml`,
or `pyproject.toml` with a `[tool.wgmma-lsp]` table wins; in one folder in that order), read by
`wgmma-lsp check` and by the server, where the editor's settings apply on top.

    [tool.wgmma-lsp]
    select = ["WG0"]                 # codes, rule names or code prefixes (default: all)
    ignore = ["WG011"]
    severity = { WG009 = "warning", wait-n-negative = "off" }
    exclude = [".git", "build"]      # replaces the default excludes (gitignore patterns)
    extend-exclude = ["third_party/"]
    per-file-ignores = { "tests/*.py" = ["WG001"], "legacy/" = ["WG0"] }
    lowering-semantics = "lane"      # "lane" or "warpgroup": when a kernel does not say
    sweeps = "all"                   # tuning loops: "all" combinations, or the typing-speed "budget"
                                     # (default: "all" in `wgmma-lsp check`, "budget" in the server)
    trace = ["kernels/matmul.py:matmul(bf16[256,256], bf16[256,512])"]
    docs-base-url = "https://example.org/wgmma-lsp/rules"   # rule links: {url}/{code}
    python = ".venv/bin/python"      # the environment whose JAX is analysed (environment.py;
                                     # relative to this file; default: VIRTUAL_ENV, .venv, own)

Every code is checked: an unknown code, key or value is a `ConfigError` naming it (the CLI
exits 2).
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from wgmma_lsp import toml_cache
from wgmma_lsp.settings import _SEVERITIES, Settings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

CONFIG_NAMES = ("wgmma-lsp.toml", ".wgmma-lsp.toml", "pyproject.toml")
KEYS = {"select", "ignore", "severity", "exclude", "extend-exclude", "per-file-ignores",
        "lowering-semantics", "sweeps", "trace", "respect-gitignore", "docs-base-url",
        "python"}
LOWERING_SEMANTICS = ("lane", "warpgroup")


class ConfigError(Exception):
    """The configuration cannot be used as written (the message names the file and the value)."""


@dataclass(frozen=True)
class Config:
    """One configuration file's `[tool.wgmma-lsp]` settings."""
    path: Path | None = None  # the file it was read from (None: no configuration)
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()
    exclude: tuple[str, ...] | None = None  # None: the defaults
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    lowering_semantics: str | None = None
    sweeps: str | None = None
    trace: tuple[str, ...] = ()
    respect_gitignore: bool = True
    docs_base_url: str | None = None  # rule links (and SARIF helpUri) point to `{url}/{code}`
    python: str | None = None  # the analysed environment's interpreter, relative to `root`
    _pfi: tuple[tuple[Any, tuple[str, ...]], ...] = field(default=(), compare=False, repr=False)

    @property
    def root(self) -> Path | None:
        """The folder the configuration's patterns are relative to."""
        return self.path.parent if self.path is not None else None

    def ignores_for(self, file: Path) -> list[str]:
        """The codes `per-file-ignores` switches off for a file."""
        if self.root is None or not self._pfi:
            return []
        try:
            rel = Path(os.path.abspath(file)).relative_to(Path(os.path.abspath(self.root))).as_posix()
        except ValueError:
            return []
        return [c for spec, codes in self._pfi if spec.match_file(rel) for c in codes]

    def apply(self, settings: Settings, file: Path | None = None) -> Settings:
        """`settings` with this configuration (and, for `file`, its per-file ignores) applied."""
        if self.select is not None:
            settings.select = list(self.select)
        settings.ignore = list(dict.fromkeys([*settings.ignore, *self.ignore,
                                              *(self.ignores_for(file) if file is not None else [])]))
        for key, level in self.severity:
            if level == "off":
                settings.off.add(key)
            else:
                settings.severity[key] = _SEVERITIES[level]
        if self.lowering_semantics is not None:
            settings.lowering_semantics = self.lowering_semantics
        if self.sweeps is not None:
            settings.sweeps = self.sweeps
        if self.docs_base_url is not None:
            settings.docs_base_url = self.docs_base_url
        return settings


def _codes(raw: Any, where: str) -> tuple[str, ...]:
    from wgmma_lsp.rules.registry import is_known_selector

    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{where}: expected a list of rule codes")
    for code in raw:
        if not is_known_selector(code):
            raise ConfigError(f"{where}: unknown rule code or name: {code}")
    return tuple(raw)


def _patterns(raw: Any, where: str) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError(f"{where}: expected a list of patterns")
    return tuple(raw)


def parse(table: dict[str, Any], path: Path | None) -> Config:
    """A configuration from its TOML table (the `[tool.wgmma-lsp]` of a pyproject.toml)."""
    where = str(path) if path is not None else "configuration"
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown setting: {unknown[0]} (known: {', '.join(sorted(KEYS))})")
    kw: dict[str, Any] = {"path": path}
    if "select" in table:
        kw["select"] = _codes(table["select"], f"{where}: select")
    if "ignore" in table:
        kw["ignore"] = _codes(table["ignore"], f"{where}: ignore")
    if "severity" in table:
        sev = table["severity"]
        if not isinstance(sev, dict):
            raise ConfigError(f"{where}: severity: expected a table of code = level")
        _codes(list(sev), f"{where}: severity")
        for code, level in sev.items():
            if not isinstance(level, str) or level.lower() not in (*_SEVERITIES, "off"):
                raise ConfigError(f"{where}: severity: {code} = {level!r}: expected one of "
                                  f"error, warning, information, hint, off")
        kw["severity"] = tuple((c, lvl.lower()) for c, lvl in sev.items())
    if "exclude" in table:
        kw["exclude"] = _patterns(table["exclude"], f"{where}: exclude")
    if "extend-exclude" in table:
        kw["extend_exclude"] = _patterns(table["extend-exclude"], f"{where}: extend-exclude")
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise ConfigError(f"{where}: per-file-ignores: expected a table of pattern = [codes]")
        kw["per_file_ignores"] = tuple((pat, _codes(codes, f"{where}: per-file-ignores: {pat}"))
                                       for pat, codes in pfi.items())
        import pathspec  # only for per-file-ignores (~30 ms to import)

        kw["_pfi"] = tuple((pathspec.GitIgnoreSpec.from_lines([pat]), codes)
                           for pat, codes in kw["per_file_ignores"])
    if "lowering-semantics" in table:
        sem = table["lowering-semantics"]
        if not isinstance(sem, str) or sem.lower() not in LOWERING_SEMANTICS:
            raise ConfigError(f"{where}: lowering-semantics: expected \"lane\" or \"warpgroup\", got {sem!r}")
        kw["lowering_semantics"] = sem.lower()
    if "sweeps" in table:
        from wgmma_lsp.interpret.sweep_budget import MODES

        mode = table["sweeps"]
        if not isinstance(mode, str) or mode.lower() not in MODES:
            raise ConfigError(f"{where}: sweeps: expected \"all\" or \"budget\", got {mode!r}")
        kw["sweeps"] = mode.lower()
    if "trace" in table:
        kw["trace"] = _patterns(table["trace"], f"{where}: trace")
    if "docs-base-url" in table:
        url = table["docs-base-url"]
        if not isinstance(url, str) or "://" not in url:
            raise ConfigError(f"{where}: docs-base-url: expected a URL, got {url!r}")
        kw["docs_base_url"] = url.rstrip("/")
    if "python" in table:
        if not isinstance(table["python"], str) or not table["python"]:
            raise ConfigError(f"{where}: python: expected the path of an interpreter or environment")
        kw["python"] = table["python"]
    if "respect-gitignore" in table:
        if not isinstance(table["respect-gitignore"], bool):
            raise ConfigError(f"{where}: respect-gitignore: expected true or false")
        kw["respect_gitignore"] = table["respect-gitignore"]
    return Config(**kw)


def _config_file_table(data: dict[str, Any]) -> Any:
    return data.get("tool", {}).get("wgmma-lsp", data) if "tool" in data else data


def _table(path: Path) -> dict[str, Any] | None:
    """The wgmma-lsp table of a configuration file (None: a pyproject.toml without one); read
    through toml_cache (`tomllib` is imported only for content not read before)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    pyproject = path.name == "pyproject.toml"
    try:
        if pyproject:
            table = toml_cache.pyproject_table(raw)
        else:
            table = toml_cache.extract(raw, "config:file", _config_file_table)
    except ValueError as e:
        tomllib = sys.modules.get("tomllib")  # imported by the parse that raised, if any
        if tomllib is not None and isinstance(e, tomllib.TOMLDecodeError):
            raise ConfigError(f"{path}: invalid TOML: {e}") from None
        raise
    if pyproject and table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.wgmma-lsp] must be a table")
    return table


@functools.lru_cache(maxsize=256)
def _load(path: str, mtime: float) -> Config | None:
    table = _table(Path(path))
    return None if table is None else parse(table, Path(path))


def load(path: Path) -> Config | None:
    """The configuration in one file (None: a pyproject.toml with no `[tool.wgmma-lsp]`)."""
    try:
        mtime = path.stat().st_mtime
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from None
    return _load(str(path), mtime)


def find(start: Path) -> Config:
    """The nearest configuration above `start` (a file or folder); an empty one if none."""
    folder = Path(os.path.abspath(start))
    if not folder.is_dir():
        folder = folder.parent
    for d in [folder, *folder.parents]:
        for name in CONFIG_NAMES:
            f = d / name
            if f.is_file():
                cfg = load(f)
                if cfg is not None:
                    return cfg
    return Config()


def settings_for(file: Path, base: Settings | None = None,
                 editor: dict[str, Any] | None = None) -> Settings:
    """The settings for one file: the defaults (or `base`), its configuration, then the
    editor's settings (the `wgmmaLsp` section) on top."""
    settings = Settings.from_dict({}) if base is None else _copy(base)
    find(file).apply(settings, file)
    if editor:
        settings.apply_editor(editor)
    return settings


def _copy(s: Settings) -> Settings:
    import copy

    return copy.deepcopy(s)


def _jax_default() -> str:
    from wgmma_lsp.interpret.jax_facts import current

    facts = current()
    bundled = ", from the bundled facts" if facts.source == "bundled" else ""
    return f"(the JAX default: {facts.default_lowering or 'unknown'}, jax {facts.jax_version}{bundled})"


def describe(file: Path, settings: Settings, cfg: Config) -> str:
    """What `check --show-settings FILE` prints."""
    sev = {k: v.name.lower() for k, v in settings.severity.items()}
    sev.update({k: "off" for k in sorted(settings.off)})
    lines = [
        f"file: {file}",
        f"configuration: {cfg.path if cfg.path is not None else '(none: defaults)'}",
        f"select: {', '.join(settings.select) if settings.select else '(all rules)'}",
        f"ignore: {', '.join(settings.ignore) if settings.ignore else '(none)'}",
        f"severity: {', '.join(f'{k}={v}' for k, v in sev.items()) if sev else '(defaults)'}",
        f"per-file-ignores matched: {', '.join(cfg.ignores_for(file)) or '(none)'}",
        f"exclude: {', '.join(cfg.exclude) if cfg.exclude is not None else '(defaults)'}",
        f"extend-exclude: {', '.join(cfg.extend_exclude) or '(none)'}",
        f"respect-gitignore: {str(cfg.respect_gitignore).lower()}",
        f"lowering-semantics: {settings.lowering_semantics or _jax_default()}",
        f"sweeps: {settings.sweeps or '(all in check, budget in the server)'}",
        f"trace entries: {', '.join(cfg.trace) or '(none)'}",
        f"docs-base-url: {settings.docs_base_url or '(the bundled rule docs)'}",
    ]
    return "\n".join(lines)
