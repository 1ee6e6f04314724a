"""A memoised call's replay gives the calling code its own objects, as CPython does
(interpret/replay_objects.py).

The analysis runs a function once per distinct arguments and replays that run for an equal call
(interpret/memo.py for the document's functions, foreign_memo.py for another module's,
hover_memo.py in the hover pass). Its key holds lists, dicts, sets and objects by their
contents: `ident(a)`, `ident(b)`, `ident(c)` with three equal lists are one key. CPython gives each
call back its own list, and each call of `make()` a new one; a replay must too, or the analysis
claims values CPython contradicts. Each program (memo_identity_cases.py) calls its functions three
times or more (another module's memo replays from the third equal call) and is run under CPython
and through the analysis: every value the analysis records for a name `main` binds once is
CPython's value of it when `main` returns (python_programs.check_main).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest
from memo_identity_cases import CASES
from python_programs import Tally, _NoSpoils, check_main, compare_value, run_cpython

from wgmma_lsp.analysis import analyze
from wgmma_lsp.interpret.interp_calls import CallsMixin
from wgmma_lsp.interpret.values import DictVal, TupleVal
from wgmma_lsp.program import Program

#: Lists of another module that `main` changes: a record of them keeps the value they had
#: (another module's objects are shared by every analysis and never changed in place, see
#: interpret/mutation.py), with or without a memo; not what these tests are about.
CHANGES_ANOTHER_MODULES_LIST = {"a-global-called-with-that-global", "a-default-list"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_documents_functions(name: str) -> None:
    tally = Tally()
    assert check_main(CASES[name].lstrip(), tally) == []
    assert tally.raised == 0


def _split(program: str, package: str) -> tuple[str, str]:
    """The program as two modules: its functions and classes, and `main` star-importing them."""
    tree = ast.parse(program)
    lines = program.splitlines()
    main = next(s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == "main")
    helpers = "\n".join(lines[:main.lineno - 1] + lines[main.end_lineno:]) + "\n"
    imports = [ast.get_source_segment(program, s) for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
    main_module = "\n".join([*imports, f"from {package}.helpers import *", "", ""]
                            + lines[main.lineno - 1:main.end_lineno]) + "\n"
    return helpers, main_module


@pytest.mark.parametrize("name", sorted(set(CASES) - CHANGES_ANOTHER_MODULES_LIST))
def test_another_modules_functions(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = "memo_identity_pkg"
    helpers, main = _split(CASES[name].lstrip(), package)
    (tmp_path / package).mkdir()
    (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / package / "helpers.py").write_text(helpers)
    monkeypatch.syspath_prepend(str(tmp_path))
    tally = Tally()
    try:
        disagreements = check_main(main, tally, str(tmp_path / package / "main.py"),
                                   program=Program((str(tmp_path),)))
    finally:
        for m in [m for m in sys.modules if m.startswith(package)]:
            del sys.modules[m]
    assert disagreements == []
    assert tally.raised == 0


def _behind_a_flag(program: str) -> str:
    """`main`'s body behind `if flag:` in `check(flag=False)`, which a test calls as it is: only
    the hover pass runs that body (its flags' defaults flipped), with its own memo."""
    lines = program.splitlines()
    start = lines.index("def main():")
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i].startswith(" ")), len(lines))
    body = ["    " + ln if ln.strip() else ln for ln in lines[start + 1:end]]
    return "\n".join(lines[:start] + ["def check(flag=False):", "    if flag:", *body, "    return {}",
                                      *lines[end:], "", "", "def test_check():", "    check()", ""])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_hover_pass(name: str) -> None:
    program = _behind_a_flag(CASES[name].lstrip())
    namespace = run_cpython(program)
    assert namespace is not None
    local = namespace["check"](True)
    check = next(s for s in ast.parse(program).body if isinstance(s, ast.FunctionDef) and s.name == "check")
    flagged = check.body[0]
    assert isinstance(flagged, ast.If)
    lines = {s.targets[0].id: s.lineno - 1 for s in flagged.body
             if isinstance(s, ast.Assign) and isinstance(s.targets[0], ast.Name)}
    tally = Tally()
    for span, rec in analyze(program, "/hover_memo_test.py").records.items():
        if rec.kind == "store" and lines.get(rec.name) == span.line:
            for v in rec.values:
                if not (isinstance(v, (TupleVal, DictVal)) and v.spoiled):
                    compare_value(v, local[rec.name], rec.name, tally, _NoSpoils())
    assert tally.disagreements == []


REPLAYED = '''
def make(n):
    return [n]

def ident(xs):
    return xs

def main():
    a = [1]
    made = [make(1), make(1), make(1)]
    same = [ident(a), ident(a), ident(a)]
    other = [ident([2]), ident([2]), ident([2])]
    return locals()
'''


def test_equal_calls_are_still_replayed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo keeps its use: a call whose result the run made is replayed (its objects made
    anew), and so is one given the very objects the run was given; one given equal but other
    objects runs."""
    replayed: list[str] = []
    replay = CallsMixin.memo_replay

    def counted(self, hit, func, call):  # type: ignore[no-untyped-def]
        replayed.append(func.name)
        return replay(self, hit, func, call)
    monkeypatch.setattr(CallsMixin, "memo_replay", counted)
    tally = Tally()
    assert check_main(REPLAYED.lstrip(), tally) == []
    assert sorted(replayed) == ["ident", "ident", "make", "make"]
