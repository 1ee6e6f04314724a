"""Scopes: a frame's variables, chained to the scope its function closes over."""

from __future__ import annotations

from wgmma_lsp.interpret.values import Value


class Env:
    __slots__ = ("vars", "parent", "star_modules", "origin", "class_scope")

    def __init__(self, parent: "Env | None" = None, origin: object = None) -> None:
        self.vars: dict[str, Value] = {}
        self.parent = parent
        self.star_modules: list[str] = []  # canonical modules imported with `*` here
        # On a module's top scope: the user module it belongs to (interpret.origin.ModuleOrigin),
        # None for the analysed document.
        self.origin = origin
        # A class body's scope: its names are seen by the body's own statements, not by the
        # functions, lambdas and comprehensions defined in it (Python's scoping rule).
        self.class_scope = False

    def lookup(self, name: str) -> Value | None:
        env: Env | None = self
        while env is not None:
            if env is self or not env.class_scope:
                v = env.vars.get(name)
                if v is not None:
                    return v
            env = env.parent
        return None

    def module_env(self) -> "Env":
        env = self
        while env.parent is not None:
            env = env.parent
        return env

    def copy(self) -> "Env":
        e = Env(self.parent, self.origin)
        e.vars = dict(self.vars)
        e.star_modules = list(self.star_modules)
        e.class_scope = self.class_scope
        return e
