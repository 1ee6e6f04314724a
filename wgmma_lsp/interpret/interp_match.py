"""`match` statements (PEP 634), as CPython runs them: the cases in order, the first whose
pattern matches (and whose guard holds) runs, nothing after it.

Each pattern is decided on the subject where the interpreter knows the answer: a value pattern
(`case jnp.float16:`, `case Precision.HIGH:`) by `==`, a singleton (`case None:`) by `is`, an
or-pattern alternative by alternative, a capture or `_` always, a sequence pattern on a known
tuple or list (never on a string, bytes or a dict), a mapping pattern on a known dict, a class
pattern by `isinstance` and then its attributes (positional sub-patterns through
`__match_args__`, or the subject itself for `int(x)`, `str(x)` and the other builtin types that
match themselves). Where a pattern or a guard is not decided, the case may run: its body runs on
a path of its own and the later cases on another, joined after (`if`/`else`, interp_statements).
A capture binds its name on the path where its pattern matched.

tokamax's `to_dot_algorithm_preset` picks the precision preset by `match dtype: case
jnp.float16: ... match precision: case Precision.DEFAULT | None: return ...`; every op of it
reaches that function.
"""

from __future__ import annotations

import ast

from wgmma_lsp.interpret import classes, instance_checks
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    ApiVal,
    ClassVal,
    Const,
    DictVal,
    TupleVal,
    Value,
    join,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any

#: Builtin types whose class pattern with one positional sub-pattern matches the subject itself.
_SELF_MATCHING = frozenset({"builtins.bool", "builtins.bytearray", "builtins.bytes", "builtins.dict",
                            "builtins.float", "builtins.frozenset", "builtins.int", "builtins.list",
                            "builtins.set", "builtins.str", "builtins.tuple"})

Bindings = dict[str, Value]


class MatchMixin:
    """`match`: each case's pattern decided where the subject is known."""

    def exec_Match(self: Any, s: ast.Match, env: Env) -> None:
        subject = self.eval(s.subject, env)
        self._cases(subject, list(s.cases), env)

    def _cases(self: Any, subject: Value, cases: list[ast.match_case], env: Env) -> None:
        if not cases:
            return
        case, rest = cases[0], cases[1:]
        verdict, bound = self._pattern(case.pattern, subject, env)
        if verdict is False:
            self._cases(subject, rest, env)
            return
        if verdict is True:
            self._bind(bound, env)
            self._guarded(subject, case, rest, env)
            return

        def matched(e: Env) -> None:
            self._bind(bound, e)
            self._guarded(subject, case, rest, e)
        self.branch(env, matched, lambda e: self._cases(subject, rest, e))

    def _guarded(self: Any, subject: Value, case: ast.match_case, rest: list[ast.match_case], env: Env) -> None:
        """The case's pattern matched: its body runs if its guard holds, else the later cases."""
        if case.guard is None:
            self.exec_block(case.body, env)
            return
        holds = self.truth(self.eval(case.guard, env))
        if holds is True:
            self.exec_block(case.body, env)
        elif holds is False:
            self._cases(subject, rest, env)
        else:
            self.branch(env, lambda e: self.exec_block(case.body, e), lambda e: self._cases(subject, rest, e))

    def _bind(self: Any, bound: Bindings, env: Env) -> None:
        for name, value in bound.items():
            env.vars[name] = value if name not in self.volatile else UNKNOWN

    def _pattern(self: Any, p: ast.pattern, subject: Value, env: Env) -> tuple[bool | None, Bindings]:
        """Whether `p` matches `subject` (None: not decided), and what it binds when it does."""
        if isinstance(p, ast.MatchAs):
            if p.pattern is None:
                return True, ({p.name: subject} if p.name else {})
            verdict, bound = self._pattern(p.pattern, subject, env)
            return verdict, ({**bound, p.name: subject} if p.name else bound)
        if isinstance(p, ast.MatchValue):
            return self.truth(self.compare(ast.Eq(), subject, self.eval(p.value, env))), {}
        if isinstance(p, ast.MatchSingleton):
            return self.truth(self.compare(ast.Is(), subject, Const(p.value))), {}
        if isinstance(p, ast.MatchOr):
            return self._alternatives(p.patterns, subject, env)
        if isinstance(p, ast.MatchSequence):
            return self._sequence(p, subject, env)
        if isinstance(p, ast.MatchMapping):
            return self._mapping(p, subject, env)
        if isinstance(p, ast.MatchClass):
            return self._class(p, subject, env)
        return None, {}

    def _alternatives(self: Any, patterns: list[ast.pattern], subject: Value, env: Env
                      ) -> tuple[bool | None, Bindings]:
        """`A | B | C`: the first alternative that matches; its bindings (each alternative binds
        the same names): joined over the alternatives that may be the one. One that certainly
        matches makes the whole match, whichever of the undecided ones before it is the one."""
        maybe: list[Bindings] = []
        for alt in patterns:
            verdict, bound = self._pattern(alt, subject, env)
            if verdict is False:
                continue
            maybe.append(bound)
            if verdict is True:
                return True, _joined(maybe)
        return (None if maybe else False), _joined(maybe)

    def _sequence(self: Any, p: ast.MatchSequence, subject: Value, env: Env) -> tuple[bool | None, Bindings]:
        if isinstance(subject, (Const, DictVal)) or _is_set(subject) or _plain_instance(subject):
            return False, {}  # a number, string, bytes, None, dict, set or plain object is no sequence
        if not isinstance(subject, TupleVal) or subject.spoiled:
            return None, {}
        items = list(subject.items)
        stars = [i for i, q in enumerate(p.patterns) if isinstance(q, ast.MatchStar)]
        if not stars:
            if len(items) != len(p.patterns):
                return False, {}
            return self._all(list(zip(p.patterns, items)), env)
        at = stars[0]
        before, after = p.patterns[:at], p.patterns[at + 1:]
        if len(items) < len(before) + len(after):
            return False, {}
        middle = items[len(before):len(items) - len(after)]
        pairs = list(zip(before, items[:len(before)])) + list(zip(after, items[len(items) - len(after):]))
        verdict, bound = self._all(pairs, env)
        star = p.patterns[at]
        assert isinstance(star, ast.MatchStar)
        if star.name and verdict is not False:
            bound = {**bound, star.name: TupleVal(tuple(middle), is_list=True)}
        return verdict, bound

    def _mapping(self: Any, p: ast.MatchMapping, subject: Value, env: Env) -> tuple[bool | None, Bindings]:
        if isinstance(subject, (Const, TupleVal)) or _is_set(subject) or _plain_instance(subject):
            return False, {}
        if not isinstance(subject, DictVal) or subject.spoiled:
            return None, {}
        held = dict(subject.items) if all(_plain_key(k) for k, _ in subject.items) else None
        if held is None:
            return None, {}
        pairs = []
        for key_node, sub in zip(p.keys, p.patterns):
            key = self.eval(key_node, env)
            if not isinstance(key, Const) or not _plain_key(key.value):
                return None, {}
            if key.value not in held:
                return False, {}
            pairs.append((sub, held[key.value]))
        verdict, bound = self._all(pairs, env)
        if p.rest and verdict is not False:
            taken = {self.eval(k, env).value for k in p.keys}  # type: ignore[attr-defined]
            bound = {**bound, p.rest: DictVal(tuple((k, v) for k, v in subject.items if k not in taken))}
        return verdict, bound

    def _class(self: Any, p: ast.MatchClass, subject: Value, env: Env) -> tuple[bool | None, Bindings]:
        cls = self.eval(p.cls, env)
        is_instance = instance_checks.isinstance_of(subject, cls)
        if is_instance is False:
            return False, {}
        pairs: list[tuple[ast.pattern, Value]] = []
        if p.patterns:
            names = _match_args(cls, self)
            if isinstance(cls, ApiVal) and cls.name in _SELF_MATCHING and len(p.patterns) == 1:
                pairs.append((p.patterns[0], subject))
            elif names is None or len(p.patterns) > len(names):
                return None, {}
            else:
                pairs.extend((q, self.getattr(subject, n)) for q, n in zip(p.patterns, names))
        pairs.extend((q, self.getattr(subject, a)) for a, q in zip(p.kwd_attrs, p.kwd_patterns))
        verdict, bound = self._all(pairs, env)
        if is_instance is None:
            return (None if verdict is not False else False), bound
        return verdict, bound

    def _all(self: Any, pairs: list[tuple[ast.pattern, Value]], env: Env) -> tuple[bool | None, Bindings]:
        """Every sub-pattern matches its value: False as soon as one does not."""
        out: Bindings = {}
        verdict: bool | None = True
        for q, v in pairs:
            got, bound = self._pattern(q, v, env)
            if got is False:
                return False, {}
            if got is None:
                verdict = None
            out.update(bound)
        return verdict, out


def _joined(options: list[Bindings]) -> Bindings:
    if not options:
        return {}
    if len(options) == 1:
        return options[0]
    names = set().union(*options)
    out: Bindings = {}
    for name in names:
        values = [o.get(name, UNKNOWN) for o in options]
        v = values[0]
        for w in values[1:]:
            v = join(v, w)
        out[name] = v
    return out


def _is_set(v: Value) -> bool:
    from wgmma_lsp.interpret.values import SetVal

    return isinstance(v, SetVal)


def _plain_instance(v: Value) -> bool:
    """An instance of a program class with no base outside the program (nor an enum, named
    tuple or pydantic model): neither a sequence nor a mapping."""
    from wgmma_lsp.interpret.values import InstanceVal

    return isinstance(v, InstanceVal) and not classes.opaque_bases(v.cls) \
        and not any(c.kind for c in classes.mro(v.cls))


def _plain_key(k: object) -> bool:
    return type(k) in (int, str, bool, float, type(None))


def _match_args(cls: Value, interp: Any) -> list[str] | None:
    """The attribute names positional sub-patterns of a class pattern read (`__match_args__`;
    a dataclass's fields, as `dataclasses` sets it), None when not known."""
    if not isinstance(cls, ClassVal):
        return None
    declared = classes.lookup(cls, "__match_args__", interp)
    if isinstance(declared, TupleVal) and all(isinstance(x, Const) and isinstance(x.value, str)
                                              for x in declared.items):
        return [x.value for x in declared.items]  # type: ignore[attr-defined]
    if declared is None and cls.is_dataclass and not any(c.kind for c in classes.mro(cls)) \
            and not any(_keyword_only(c) for c in classes.mro(cls)):
        return [name for name, _ in classes.dataclass_fields(cls)]
    return None


def _keyword_only(cls: ClassVal) -> bool:
    """Whether the dataclass may make some field keyword-only (not in `__match_args__`):
    `kw_only=` anywhere in its decorators or fields, or a `KW_ONLY` marker."""
    return any("kw_only" in ast.unparse(d) for d in cls.node.decorator_list) or any(
        "kw_only" in ast.unparse(stmt) or "KW_ONLY" in ast.unparse(stmt)
        for stmt in cls.node.body if isinstance(stmt, ast.AnnAssign))
