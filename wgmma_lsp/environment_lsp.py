"""The server's side of environment.py: which environment's JAX the workspace is analysed with.

At `initialize` the environment is found from the `python` setting (initializationOptions, the
`wgmmaLsp.python` section), the workspace's `[tool.wgmma-lsp] python`, the environment a
workspace folder is installed in (a folder inside its site-packages, when it holds JAX),
`VIRTUAL_ENV`, a `.venv`/`venv` in a workspace folder or its project root; it is logged, and
when it holds no JAX the user is told once (window/showMessage, Info) that the bundled facts
are used. A later `wgmmaLsp.python` from workspace/configuration switches to that environment.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from wgmma_lsp import environment

log = logging.getLogger("wgmma_lsp")


def _folder(uri: str | None) -> Path | None:
    if not uri:
        return None
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" else None


def workspace_roots(params: Any) -> list[Path]:
    """The workspace folders of an InitializeParams (workspaceFolders, else rootUri/rootPath)."""
    roots = [f for f in (_folder(w.uri) for w in (getattr(params, "workspace_folders", None) or []))
             if f is not None]
    root = _folder(getattr(params, "root_uri", None))
    if root is not None:
        roots.append(root)
    if getattr(params, "root_path", None):
        roots.append(Path(params.root_path))
    return list(dict.fromkeys(roots))


def choose(python: Any, roots: list[Path]) -> environment.JaxEnvironment:
    """The analysed environment for a workspace: an explicit `python` (the editor's), else the
    configuration's of the first workspace folder that sets one, else discovery."""
    if isinstance(python, str) and python:
        return environment.discover(python, "the editor's wgmmaLsp.python setting")
    from wgmma_lsp import config

    for root in roots:
        try:
            cfg = config.find(root)
        except config.ConfigError as e:
            log.warning("configuration ignored: %s", e)
            continue
        if cfg.python:
            return environment.discover(cfg.python, f"python in {cfg.path}", base=cfg.root)
    # A workspace folder inside an environment's site-packages (an installed package opened as
    # a folder) runs only with that environment's JAX, as `check` of its files does (cli.py):
    # not with a `.venv` of a project that happens to hold that environment among others.
    for root in roots:
        installed = environment.installed_environment(root)
        if installed is not None:
            return installed
    project = [p for p in (environment.project_root(r) for r in roots) if p is not None]
    return environment.discover(roots=[*roots, *project])


class EnvironmentState:
    """What the server chose and whether the user was told."""

    def __init__(self) -> None:
        self.python: Any = None
        self.roots: list[Path] = []
        self.announced = False

    def initialize(self, python: Any, roots: list[Path]) -> environment.JaxEnvironment:
        self.python, self.roots = python, roots
        env = choose(python, roots)
        environment.activate(env)
        log.info("analysed environment: %s", env.describe())
        return env

    def settings_changed(self, python: Any) -> bool:
        """A new `wgmmaLsp.python`: choose again. Returns whether the JAX changed."""
        if python == self.python or (not python and not self.python):
            return False
        self.python = python
        env = choose(python, self.roots)
        changed = environment.activate(env)
        log.info("analysed environment: %s", env.describe())
        if changed:
            self.announced = False
        return changed

    def message(self) -> str | None:
        """The one Info message to show, or None (JAX found, or already shown)."""
        env = environment.active()
        if self.announced or env.jax_root is not None:
            return None
        self.announced = True
        return (f"wgmma-lsp: {env.describe()} (set wgmmaLsp.python to the project's "
                f"interpreter, or open the folder holding its .venv)")
