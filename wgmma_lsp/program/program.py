"""The program layer: the user's modules an analysis imports, each read, parsed and interpreted
once, its summary (the values of its module-level names) kept by content and reused.

Shaped after pyright's program/sourceFile split (a file's parse and bind cached, checking on
demand), rust-analyzer's salsa (a query's result memoised by its inputs, checked against their
current revision before reuse) and mypy's incremental cache (a module's result is valid while the
content hashes of it and of everything it imported are unchanged):

- a module's text comes from the editor when the document is open (`Program.overlay`), else from
  disk (re-read when its size or mtime changes, or when the server is told it changed);
- a `Summary` is keyed by (path, content digest) and records the digests of every user module
  it read, transitively; it is reused only while all of them are current;
- every analysis runs in a `Session`, which bounds the work: the import chain's depth, a
  module's size, the number of modules it may interpret and the characters it may read. What a
  bound cuts is unknown (never an error) and is said in a log line; an import cycle gives the
  names of the module still being initialised as unknown, as Python would fail to import them;
- what is kept is bounded: at most MAX_SUMMARIES summaries, MAX_DISK_TEXTS texts read from
  disk and the dependencies of MAX_DOCUMENTS documents (each the oldest dropped first; a dropped
  summary or text is read again when next needed, a dropped document is one nobody analysed for
  the longest time);
- a cancellation (a newer version of the analysed document) is not a bound: it stops the
  analysis at once, keeps nothing of the module being interpreted (no summary, no dependants)
  and says nothing; the next analysis interprets that module again.

User code is never imported or executed: modules are found by file lookup (`lookup`), and their
code only runs in the abstract interpreter.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field

from wgmma_lsp import logs
from wgmma_lsp import observed
from wgmma_lsp.bounded import put_newest, trim
from wgmma_lsp import kept_trees
from wgmma_lsp.interpret.origin import ModuleOrigin, active_importer, set_active_importer
from wgmma_lsp.interpret.values import UNKNOWN, Const, Unknown, UserModuleVal, Value
from wgmma_lsp.program import lookup

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Callable, Iterator

log = logs.logger()

MAX_IMPORT_DEPTH = 12  # a chain of user-module imports deeper than this is cut
MAX_MODULE_CHARS = 500_000  # larger modules are not interpreted (their names are unknown)
MAX_MODULES_PER_ANALYSIS = 64  # modules one analysis may interpret (reused summaries are free)
MAX_CHARS_PER_ANALYSIS = 4_000_000  # characters one analysis may parse for other modules
MODULE_STEPS = 100_000  # interpreter steps for one module's top-level code
MAX_SUMMARIES = 2_000  # summaries kept (oldest dropped first)
MAX_DISK_TEXTS = 2_000  # texts of modules read from disk kept (oldest dropped first)
MAX_DOCUMENTS = 10_000  # documents whose dependencies are kept (for re-analysis on change)

# A module whose summary cannot be reused (it read the analysed document: a test module of the
# kernel module being edited) is interpreted again by each analysis: its text, unchanged, is not
# parsed again (tokamax's ragged_dot op module: 11 ms an analysis) — wgmma_lsp/kept_trees.py.


@dataclass(frozen=True)
class Text:
    """A module's source text and its digest."""
    text: str
    digest: str


@dataclass(eq=False)
class Summary:
    """One user module, interpreted once: its module-level names and what it depended on."""

    path: str
    name: str
    digest: str
    names: dict[str, Value]
    star_modules: list[str]  # canonical JAX modules it imports with `*` (re-exported)
    deps: dict[str, str]  # path -> digest of every user module it read, transitively
    origin: ModuleOrigin
    complete: bool = True  # False: a cycle or a bound cut it (then used by one analysis only)


digest_of = kept_trees.digest_of


class Program:
    """The user's modules, shared by every analysis of one server (or CLI run)."""

    def __init__(self, roots: tuple[str, ...] = ()) -> None:
        self.roots: tuple[str, ...] = tuple(os.path.abspath(r) for r in roots)
        # Open documents' texts by path (the editor's text wins over the disk's); None: not open.
        self.overlay: Callable[[str], str | None] | None = None
        self._lock = threading.RLock()
        self._disk: dict[str, tuple[tuple[int, int], Text]] = {}
        self._summaries: dict[tuple[str, str], Summary] = {}
        self._analysed: dict[str, dict[str, str]] = {}  # document path -> modules it read
        self.built = 0  # modules interpreted (for tests and benchmarks)
        self.reused = 0  # summaries reused

    # -- inputs --------------------------------------------------------------------------
    def text(self, path: str) -> Text | None:
        if self.overlay is not None:
            try:
                open_text = self.overlay(path)
            except Exception:
                open_text = None
            if open_text is not None:
                return Text(open_text, digest_of(open_text))
        try:
            st = observed.stat(path)
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._disk.get(path)
        if hit is not None and hit[0] == key:
            return hit[1]
        if st.st_size > MAX_MODULE_CHARS * 4:
            return Text("", "too-large:" + str(st.st_size))
        try:
            with open(path, encoding="utf-8", errors="replace") as f:  # observed: stamped above
                text = f.read()
        except OSError:
            return None
        t = Text(text, digest_of(text))
        with self._lock:
            put_newest(self._disk, path, (key, t), MAX_DISK_TEXTS)  # the oldest read dropped first
        return t

    def changed(self, path: str) -> set[str]:
        """A file changed (saved, or changed on disk): forget its cached text. Returns the
        documents whose last analysis read it (they should be analysed again)."""
        path = os.path.abspath(path)
        with self._lock:
            self._disk.pop(path, None)
        return self.dependants(path)

    def dependants(self, path: str) -> set[str]:
        path = os.path.abspath(path)
        with self._lock:
            return {doc for doc, deps in self._analysed.items() if path in deps and doc != path}

    def forget_document(self, path: str) -> None:
        with self._lock:
            self._analysed.pop(os.path.abspath(path), None)

    # -- summaries -----------------------------------------------------------------------
    def cached(self, path: str, digest: str) -> Summary | None:
        with self._lock:
            return self._summaries.get((path, digest))

    def store(self, summary: Summary) -> None:
        with self._lock:
            self._summaries[(summary.path, summary.digest)] = summary
            trim(self._summaries, MAX_SUMMARIES)

    @contextmanager
    def session(self, path: str | None, source: str | None = None) -> Iterator["Session"]:
        """The import session of one analysis, active on this thread while it runs."""
        session = Session(self, path)
        previous = set_active_importer(session)
        try:
            yield session
        finally:
            set_active_importer(previous)
        # Only a finished analysis says what the document depends on: a cancelled one read only
        # part of it (the previous analysis' dependencies stay until the next one finishes).
        if path:
            with self._lock:
                put_newest(self._analysed, os.path.abspath(path), dict(session.read), MAX_DOCUMENTS)


@dataclass
class _Frame:
    """What a module summary being built depends on."""
    deps: dict[str, str] = field(default_factory=dict)
    partial: bool = False


class Session:
    """One analysis' view of the program: resolves imports to summaries, within its bounds."""

    def __init__(self, program: Program, path: str | None) -> None:
        self.program = program
        self.root = os.path.abspath(path) if path else None
        self.stack: list[str] = [self.root] if self.root else []  # modules being initialised
        self.frames: list[_Frame] = [_Frame()]
        self.built = 0
        self.chars = 0
        self.notes: list[str] = []
        self._digests: dict[str, Text | None] = {}
        self._here: dict[str, Summary | None] = {}
        self._roots: dict[str | None, tuple[str, ...]] = {}
        self._own_pkg: dict[str | None, tuple[str, str] | None] = {}
        self._cut_logged: set[str] = set()
        # The analysed module's names once its module code ran to its end (`module_ran`): from
        # then on another module importing it gets them, as Python's sys.modules gives it.
        self.root_names: dict[str, Value] | None = None

    def module_ran(self, names: dict[str, Value]) -> None:
        """The analysed module's code has run: a module imported from now on (a test module of
        its package, its op module) that imports it gets these names, not an import cycle."""
        self.root_names = names

    @property
    def read(self) -> dict[str, str]:
        """Every user module this analysis read: path -> content digest."""
        return self.frames[0].deps

    # -- the interpreter's questions (interpret.origin.Importer) ----------------------------
    def import_from(self, from_path: str | None, module: str | None, level: int,
                    name: str) -> Value | None:
        if level == 0:
            if not module:
                return None
            target = lookup.find_absolute(module, self._search_roots(from_path), self._own(from_path))
            if target is None:
                return None
            return self._name_of(target, module, name)
        base = lookup.relative_base(from_path, level)
        if base is None:
            return None
        if module:
            target = lookup.find_relative(from_path, level, module)
            return self._name_of(target, module, name) if target is not None else None
        # `from . import x`: a name of the package's __init__, else its submodule x (a folder
        # without `__init__.py`: a namespace package, whose names are its submodules).
        init = os.path.join(base, "__init__.py")
        if observed.isfile(init):
            return self._name_of(init, os.path.basename(base), name)
        sub = lookup.find_in((base,), name)
        return self.module_value(sub, name) if sub is not None else None

    def import_module(self, from_path: str | None, dotted: str) -> Value | None:
        target = lookup.find_absolute(dotted, self._search_roots(from_path), self._own(from_path))
        return self.module_value(target, dotted) if target is not None else None

    def import_star(self, from_path: str | None, module: str | None,
                    level: int) -> tuple[dict[str, Value], list[str]] | None:
        target = (lookup.find_absolute(module, self._search_roots(from_path), self._own(from_path))
                  if level == 0 and module else lookup.find_relative(from_path, level, module))
        if target is None:
            return None
        if isinstance(target, lookup.Namespace):
            return {}, []  # no names of its own (its submodules are bound by their imports)
        s = self.summary(target, module or os.path.basename(os.path.dirname(target)))
        if s is None:
            return {}, []
        public = s.names.get("__all__")
        from wgmma_lsp.interpret.values import TupleVal

        if isinstance(public, TupleVal) and all(isinstance(i, Const) and isinstance(i.value, str)
                                                for i in public.items):
            wanted = [i.value for i in public.items]  # type: ignore[union-attr]
            return {k: s.names[k] for k in wanted if k in s.names}, list(s.star_modules)
        return {k: v for k, v in s.names.items() if not k.startswith("_")}, list(s.star_modules)

    # -- modules ---------------------------------------------------------------------------
    def _search_roots(self, from_path: str | None) -> tuple[str, ...]:
        roots = self._roots.get(from_path)
        if roots is None:
            roots = self._roots[from_path] = lookup.search_roots(from_path, self.program.roots)
        return roots

    def _own(self, from_path: str | None) -> tuple[str, str] | None:
        if from_path not in self._own_pkg:
            self._own_pkg[from_path] = lookup.own_package(from_path)
        return self._own_pkg[from_path]

    def _name_of(self, target: str | lookup.Namespace, module: str, name: str) -> Value:
        """`from module import name`, `module` found at `target`: a name the module binds, else
        its submodule; a namespace package's names are its submodules alone."""
        if isinstance(target, lookup.Namespace):
            sub = lookup.find_in(target.portions, name)
            return self.module_value(sub, f"{module}.{name}") if sub is not None else UNKNOWN
        if lookup.is_package(target):
            sub = lookup.find_in((os.path.dirname(target),), name)
            if sub is not None and self._leaves_submodule(target, name):
                return self.module_value(sub, f"{module}.{name}")
        s = self.summary(target, module)
        v = s.names.get(name) if s is not None else None
        if (v is None or isinstance(v, Unknown)) and lookup.is_package(target):
            sub = lookup.find_in((os.path.dirname(target),), name)
            # (a folder without `__init__.py` only for a name the `__init__` leaves unbound: a
            # name bound to what is not known here is not taken for a data folder beside it)
            if sub is not None and (v is None or not isinstance(sub, lookup.Namespace)):
                return self.module_value(sub, f"{module}.{name}")
        return v if v is not None else UNKNOWN

    def _leaves_submodule(self, init: str, name: str) -> bool:
        """`from pkg import name` is the submodule `pkg/name.py` without running the `__init__`
        (see init_bindings); the `__init__`'s text is a dependency all the same."""
        init = os.path.abspath(init)
        text = self._text(init)
        if text is None:
            return False
        self._use(init, text.digest, {})
        from wgmma_lsp.program import init_bindings  # (only for `from pkg import sub`)

        return init_bindings.leaves_submodule(text.text, text.digest, name,
                                              os.path.basename(os.path.dirname(init)))

    def module_value(self, path: str | lookup.Namespace, name: str) -> Value:
        """The module found at `path` (a namespace package: a module with no file, whose
        attributes are its submodules)."""
        if isinstance(path, lookup.Namespace):
            names: dict[str, Value] = {"__name__": Const(name)}
            file = path.portions[0]
        else:
            s = self.summary(path, name)
            if s is None:
                return UNKNOWN
            names, file = s.names, path
        submodule = None
        search = lookup.submodule_path(path)
        if search:

            def submodule(attr: str, search: tuple[str, ...] = search, name: str = name,
                          bound: dict[str, Value] = names) -> Value | None:
                session = active_importer()
                sub = lookup.find_in(search, attr)
                if sub is None or not isinstance(session, Session) \
                        or (isinstance(sub, lookup.Namespace) and attr in bound):
                    return None  # (a name bound to what is not known is no data folder beside it)
                return session.module_value(sub, f"{name}.{attr}")
        return UserModuleVal(name, file, names, submodule)

    def _text(self, path: str) -> Text | None:
        if path not in self._digests:
            self._digests[path] = self.program.text(path)
        return self._digests[path]

    def _current(self, deps: dict[str, str]) -> bool:
        for p, d in deps.items():
            t = self._text(p)
            if t is None or t.digest != d:
                return False
        return True

    def _use(self, path: str, digest: str, deps: dict[str, str], partial: bool = False) -> None:
        top = self.frames[-1]
        top.deps[path] = digest
        top.deps.update(deps)
        top.partial = top.partial or partial

    def _cut(self, path: str, why: str) -> None:
        self.frames[-1].partial = True
        if path not in self._cut_logged:
            self._cut_logged.add(path)
            note = f"{why}: names from {path} are unknown"
            self.notes.append(note)
            log.info("program: %s (analysing %s)", note, self.root or "<untitled>")

    def summary(self, path: str, name: str) -> Summary | None:
        path = os.path.abspath(path)
        if path == self.root and self.root_names is not None:
            # (this analysis' own values: what imports it is not kept for another analysis)
            self.frames[-1].partial = True
            return Summary(path, name, "", self.root_names, [], {}, None, complete=False)  # type: ignore[arg-type]
        if path in self.stack:
            chain = " -> ".join(os.path.basename(p) for p in self.stack[self.stack.index(path):] + [path])
            self._cut(path, f"import cycle {chain}")
            return None
        if path in self._here:
            s = self._here[path]
            if s is not None:
                self._use(path, s.digest, s.deps, not s.complete)
            return s
        text = self._text(path)
        if text is None:
            return None
        cached = self.program.cached(path, text.digest)
        # A summary built by another analysis that read this analysis' own module holds that
        # module's values, not this analysis' (Python has one module object, the document's):
        # it is built again here (partial: kept for this analysis only).
        if cached is not None and self._current(cached.deps) and self.root not in cached.deps:
            self.program.reused += 1
            self._here[path] = cached
            self._use(path, cached.digest, cached.deps)
            return cached
        if len(self.stack) > MAX_IMPORT_DEPTH:
            self._cut(path, f"import chain deeper than {MAX_IMPORT_DEPTH}")
            return None
        if len(text.text) > MAX_MODULE_CHARS or text.digest.startswith("too-large:"):
            self._cut(path, f"module larger than {MAX_MODULE_CHARS} characters")
            self._here[path] = None
            return None
        if self.built >= MAX_MODULES_PER_ANALYSIS or self.chars + len(text.text) > MAX_CHARS_PER_ANALYSIS:
            self._cut(path, f"budget of {MAX_MODULES_PER_ANALYSIS} modules / {MAX_CHARS_PER_ANALYSIS} "
                            "characters per analysis spent")
            return None
        self.built += 1
        self.chars += len(text.text)
        s = self._build(path, name, text)
        self._here[path] = s
        self._use(path, s.digest, s.deps, not s.complete)
        if s.complete:
            self.program.store(s)
        return s

    def _build(self, path: str, name: str, text: Text) -> Summary:
        from wgmma_lsp.interpret.interp import MAX_STEPS, Budget, Cancelled, Interpreter
        from wgmma_lsp.spans import LineIndex

        parsed = kept_trees.parsed(path, text.text, text.digest)  # (each analysis interprets a module once)
        lines = LineIndex(text.text)
        origin = ModuleOrigin(path, name, lines)
        self.stack.append(path)
        self.frames.append(_Frame())
        complete = True
        try:
            interp = Interpreter(text.text, parsed.tree, lines, path, origin=origin, importer=self)
            origin.volatile = interp.volatile
            interp.steps = MAX_STEPS - MODULE_STEPS
            # Imported, not run as a script: its `if __name__ == "__main__":` block does not run.
            interp.module_env.vars["__name__"] = Const(name)
            try:
                interp.run_module()
            except Cancelled:
                # A newer version of the analysed document: not a bound. Nothing of this module
                # is kept (no summary, not even one used by this analysis alone); the caller's
                # analysis stops here and the next one interprets the module again.
                raise
            except Budget:
                complete = False
                log.info("program: step budget spent in the top-level code of %s", path)
            except RecursionError:
                complete = False
        finally:
            frame = self.frames.pop()
            self.stack.pop()
        self.program.built += 1
        env = interp.module_env
        seen: set[int] = set()
        for v in env.vars.values():
            _share(v, 0, seen)
        return Summary(path, name, text.digest, env.vars, list(env.star_modules), frame.deps,
                       origin, complete and not frame.partial)


def _share(v: object, depth: int, seen: set[int]) -> None:
    """Mark the instances a summary holds as shared (see InstanceVal.shared)."""
    from wgmma_lsp.interpret.values import (ClassVal, DictVal, FuncVal, InstanceVal, PartialVal,
                                            TupleVal)

    if depth > 8 or id(v) in seen:
        return
    seen.add(id(v))
    if isinstance(v, InstanceVal):
        v.shared = True
        children: list = list(v.attrs.values())
    elif isinstance(v, (TupleVal, DictVal)):
        object.__setattr__(v, "born", 0)  # never changed in place (interpret/mutation.py)
        children = list(v.items) if isinstance(v, TupleVal) else [x for _, x in v.items]
    elif isinstance(v, FuncVal):
        children = list(v.defaults) + list(v.kw_defaults.values())
    elif isinstance(v, ClassVal):
        children = [x for _, x in v.fields] + list(v.methods.values())
    elif isinstance(v, PartialVal):
        children = list(v.args) + list(v.kwargs.values())
    else:
        return
    for c in children:
        _share(c, depth + 1, seen)


_default: Program | None = None
_default_lock = threading.Lock()


def default_program() -> Program:
    """The program every analysis of this process shares. Its search root is the working
    directory (what `python -m` puts on `sys.path`; the CLI runs from the project); the server
    replaces it with the editor's workspace folders and sets the overlay."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Program(roots=(os.getcwd(),))
        return _default


