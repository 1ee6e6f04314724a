"""Expressions: names, attributes, indexing, operators, comprehensions."""

from __future__ import annotations

import ast
import operator

from wgmma_lsp.interpret import (
    classes, const_fold, dtypes, incomplete, jax_value_equality, loop_steps, mutation, operators, path_equalities,
    resolve, set_elements, silent_memo,
)
from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.ast_walk import push_children
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.dtypes import SymDType
from wgmma_lsp.interpret.env import Env
from wgmma_lsp.interpret.interp_base import MAX_UNROLL, _value_kind
from wgmma_lsp.interpret.observe import Swept, raw
from wgmma_lsp.interpret.values import (
    UNKNOWN,
    UNKNOWN_INT,
    ApiVal,
    ArrayVal,
    BoundMethod,
    ClassVal,
    Const,
    DeclaredOpaque,
    DictVal,
    DTypeVal,
    ForeignName,
    FuncVal,
    InstanceVal,
    ModuleVal,
    Opaque,
    PartialVal,
    RefVal,
    SetVal,
    ShapeDtypeVal,
    SliceVal,
    SymInt,
    TupleVal,
    UserModuleVal,
    Value,
    Wrapped,
    as_dim,
    dim_value,
    is_int_like,
    join,
)
from wgmma_lsp.models import broadcasting, containers, jax_api
from wgmma_lsp.models.arrays import array_binop, array_compare
from wgmma_lsp.models.python import BUILTINS
from wgmma_lsp.models.registry import (API_ATTRIBUTES, ATTRIBUTE_SITES, ATTRIBUTES, COMPARE_SITES, COMPUTED_CONSTANTS,
                                      CONSTANTS, GETITEM, SETITEM)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable

_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_NAME, _CONSTANT = ast.Name, ast.Constant
_CONTAINERS = (TupleVal, DictVal, SetVal)  # (what `eval_Name` reads through `mutation.live`)
# Comparisons of two tuples/lists of plain constants, folded as CPython compares them.
_SEQ_CMPOPS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _fold_compare(op: ast.cmpop, left: Const, right: Const) -> Value:
    """Two constants compared as CPython compares them (unknown where it raises)."""
    fn = _CMPOPS.get(type(op))
    try:
        return Const(fn(left.value, right.value)) if fn else UNKNOWN
    except Exception:  # what CPython raises here (`1 < "a"`): not a value
        return UNKNOWN


def _python_seq(v: TupleVal) -> tuple | list | None:
    """A tuple (list) whose items are all plain constants, as the Python value; else None."""
    if not all(isinstance(x, Const) and isinstance(x.value, (int, float, str, bool, type(None)))
               for x in v.items):
        return None
    items = [x.value for x in v.items]  # type: ignore[attr-defined]
    return items if v.is_list else tuple(items)


class ExpressionsMixin:
    """Expressions: names, attributes, indexing, operators, comprehensions."""

    # -- expressions ------------------------------------------------------------------------
    def eval(self, node: ast.expr | None, env: Env) -> Value:
        if node is None:
            return Const(None)
        self.steps += 1
        if self.steps > self._check_at:
            self.checkpoint()
        kind = type(node)
        try:
            # (a third of the nodes evaluated are names, most of them local: `eval_Name`'s
            # commonest case inlined, and a constant's; anything else from the table)
            if kind is _NAME:
                v = env.vars.get(node.id)  # type: ignore[union-attr]
                if v is None or isinstance(v, _CONTAINERS):
                    return self.eval_Name(node, env)  # type: ignore[arg-type]
                if not self.silent and self.where is None:  # (record's own test, before the call)
                    self.record(node, v, "name", node.id)  # type: ignore[union-attr]
                return v
            if kind is _CONSTANT:
                return Const(node.value)  # type: ignore[union-attr]
            method = self._EVAL.get(kind)
            return method(self, node, env) if method is not None else UNKNOWN
        except RecursionError:  # this expression only: unknown, and a WG904 at it
            return incomplete.too_deep(self, node)

    def eval_Constant(self, n: ast.Constant, env: Env) -> Value:
        return Const(n.value)

    def eval_Name(self, n: ast.Name, env: Env) -> Value:
        v = env.vars.get(n.id)  # (env.lookup's first step, without the call: most names)
        if v is None:
            v = env.lookup(n.id)
            if v is not None and self.captures:  # an enclosing scope's or the module's object
                mutation.read_outside(self, v)
        if v is None:
            v = self.builtin_or_star(n.id, env)
        elif isinstance(v, _CONTAINERS):
            v = mutation.live(self, v)  # a list changed in a way not followed: unknown
        if not self.silent and self.where is None:  # (record's own test, before the call)
            self.record(n, v, "name", n.id)
        return v

    def builtin_or_star(self, name: str, env: Env) -> Value:
        for mod in reversed(env.module_env().star_modules):  # the last `import *` wins
            canon = resolve.canonical_name(mod, name)
            if canon in self.models or canon in CONSTANTS or f"{mod}.{name}" in resolve.SUBMODULES:
                return self.module_attr(mod, name)
        if name in BUILTINS:
            return ApiVal(f"builtins.{name}")
        if name == "NotImplemented":  # what an operator method returns to decline (operators.py)
            return Const(NotImplemented)
        return UNKNOWN

    def module_attr(self, module: str, attr: str) -> Value:
        full = f"{module}.{attr}"
        sub = resolve.SUBMODULES.get(full)
        if sub is not None:
            return ModuleVal(sub)
        canon = resolve.canonical_name(module, attr)
        const = CONSTANTS.get(canon)
        if const is not None:
            return const
        computed = COMPUTED_CONSTANTS.get(canon)
        if computed is not None and (value := computed()) is not None:
            return value
        return ApiVal(canon)

    def eval_Attribute(self, n: ast.Attribute, env: Env) -> Value:
        obj = self.eval(n.value, env)
        v = self.getattr(obj, n.attr, n)
        if not self.silent and self.where is None:  # (record's own test, before the call)
            self.record(n, v, "attr", n.attr)
        return v

    def getattr(self, obj: Value, attr: str, node: ast.AST | None = None) -> Value:
        if obj is UNKNOWN and (hooks := self.program_hooks) is not None \
                and (own := hooks.own_attr(attr)) is not None:  # a test context (entry/op_dispatch.py)
            return own
        # Which of the cases below the value is: their isinstance tests, asked once per type
        # (the value's class narrows what each case reads of it).
        kind = _ATTR_KINDS.get(type(obj))
        if kind is None:
            kind = _attr_kind(obj)
        if kind is ForeignName:
            return ForeignName(f"{obj.name}.{attr}")
        if kind is ModuleVal:
            if obj.origin is not None and node is not None \
                    and jax_api.missing_attribute(node, obj.origin, obj.name, attr, self):
                return UNKNOWN  # AttributeError in the installed JAX
            return self.module_attr(obj.name, attr)
        if kind is UserModuleVal:
            v = obj.attr(attr)
            if self.captures:  # another module's object
                mutation.read_outside(self, v)
            return v
        if kind is ApiVal:
            full = f"{obj.name}.{attr}"
            name = resolve.ALIASES.get(full, full)
            computed = API_ATTRIBUTES.get(obj.name) or API_ATTRIBUTES.get(obj.name.rpartition(".")[0] + ".*")
            if computed is not None and (v := computed(self, obj.name, attr)) is not None:
                return v
            return CONSTANTS.get(name) or ApiVal(name)
        if kind is InstanceVal:
            if obj.shared and attr in self.shared_writes.get(id(obj), ()):
                return self.shared_writes[id(obj)][attr]
            if attr in obj.attrs:
                return mutation.live(self, obj.attrs[attr])
            return classes.instance_attr(self, obj, attr)  # its class's, through the MRO
        if kind is ClassVal:
            return classes.class_attr(self, obj, attr)
        if kind is classes.NamedTupleVal:
            return classes.namedtuple_attr(self, obj, attr)
        if kind is classes.SuperVal:
            return classes.super_attr(self, obj, attr)
        if kind is Opaque:
            for name, value in getattr(obj, "overrides", ()):
                if name == attr:
                    return value
            if attr == "shape":
                return Opaque(f"{obj.name}.shape")
            if attr in ("at",):
                return UNKNOWN
            if attr == "dtype":  # a dtype known by its spelling: `x.dtype`, `config.dtype`
                return DTypeVal(SymDType(f"{obj.name}.dtype"))
            if attr.startswith("_") or attr in ("T", "ndim", "size", "astype", "reshape"):
                return UNKNOWN
            if isinstance(obj, DeclaredOpaque) and classes.int_field(obj.cls, attr):
                return SymInt(D.Sym.var(f"{obj.name}.{attr}"))  # `config.block_k`: an int
            return Opaque(f"{obj.name}.{attr}")
        key = f"{_value_kind(obj)}.{attr}"
        getter = ATTRIBUTES.get(key)
        if getter is not None:
            site = ATTRIBUTE_SITES.get(key)
            if site is not None and node is not None:
                site(self, obj, node)
            return getter(obj)
        if key in self.methods:
            return BoundMethod(obj, attr)
        if mutation.is_mutable(obj):  # a method not modelled may change it (`d.popitem()`,
            mutation.spoil(self, obj)  # `s.clear()`): not known after it
        return UNKNOWN

    def eval_Subscript(self, n: ast.Subscript, env: Env) -> Value:
        obj = self.eval(n.value, env)
        index = self.eval_index(n.slice, env)
        v = self.getitem(obj, index, n)
        if not self.silent and self.where is None:  # (record's own test, before the call)
            self.record(n, v, "subscript")
        return v

    def eval_index(self, node: ast.expr, env: Env) -> Value:
        return self.eval(node, env)

    def getitem(self, obj: Value, index: Value, node: ast.AST | None) -> Value:
        if isinstance(obj, InstanceVal):
            by_method = operators.getitem(self, obj, index, node)  # the class's `__getitem__`
            if by_method is not None:
                return by_method
        if isinstance(obj, TupleVal):
            i = index.value if isinstance(index, Const) else None
            if isinstance(i, int) and not isinstance(i, bool) and -len(obj.items) <= i < len(obj.items):
                return mutation.live(self, obj.items[i])
            if isinstance(index, SliceVal):
                s = _const_slice(index)
                if s is not None:
                    return TupleVal(obj.items[s], obj.is_list)
            return UNKNOWN
        if isinstance(obj, DictVal) and isinstance(index, Const):
            for k, v in obj.items:
                if k == index.value:
                    return mutation.live(self, v)
            return UNKNOWN
        if isinstance(obj, ClassVal):
            return classes.enum_by_name(obj, index) if obj.kind in classes.ENUMS else UNKNOWN
        if isinstance(obj, Opaque):
            i = index.value if isinstance(index, Const) else None
            if isinstance(i, int) and obj.name.endswith(".shape"):
                return SymInt(D.Sym.var(f"{obj.name}[{i}]"))
            return UNKNOWN
        kind = _value_kind(obj)
        model = GETITEM.get(kind)
        if model is not None:
            return model(self, obj, index, node)
        return UNKNOWN

    def setitem(self, obj: Value, index: Value, value: Value, target: ast.Subscript,
                value_node: ast.AST | None, env: Env, aug: bool = False) -> None:
        self.record(target, self.getitem(obj, index, None) if isinstance(obj, RefVal) else UNKNOWN,
                    "subscript")
        self.record(target.value, obj, "name" if isinstance(target.value, ast.Name) else "expr",
                    target.value.id if isinstance(target.value, ast.Name) else None)
        if isinstance(obj, DictVal):  # in place, as CPython does (interpret/mutation.py)
            containers.set_item(self, obj, index, value)
            return
        if isinstance(obj, TupleVal) and obj.is_list:
            containers.set_list_item(self, obj, index, value)
            return
        kind = _value_kind(obj)
        model = SETITEM.get(kind)
        if model is not None:
            model(self, obj, index, value, target, value_node, aug)

    def eval_Call(self, n: ast.Call, env: Env) -> Value:
        func = self.eval(n.func, env)
        args: list[Value] = []
        arg_nodes: list[ast.expr | None] = []
        complete = True
        for a in n.args:
            if isinstance(a, ast.Starred):
                v = self.eval(a.value, env)
                if isinstance(v, Const) and isinstance(v.value, (tuple, range, str)) \
                        and len(v.value) <= MAX_UNROLL:  # `*range(3)`: its items
                    v = TupleVal(tuple(Const(x) for x in v.value))
                if isinstance(v, TupleVal) and complete:
                    args.extend(v.items)
                    arg_nodes.extend([None] * len(v.items))
                else:
                    complete = False
            elif not complete:  # after an unknown `*xs`: its position is not known
                self.eval(a, env)
            else:
                args.append(self.eval(a, env))
                arg_nodes.append(a)
        kwargs: dict[str, Value] = {}
        kw_nodes: dict[str, ast.expr] = {}
        for k in n.keywords:
            v = self.eval(k.value, env)
            if k.arg is None:
                if isinstance(v, DictVal):
                    for key, val in v.items:
                        if isinstance(key, str):
                            kwargs[key] = val
                else:
                    complete = False
            else:
                kwargs[k.arg] = v
                kw_nodes[k.arg] = k.value
        call = Call(self, n, args, kwargs, arg_nodes, kw_nodes, env, complete)
        result = self.call_value(func, call)
        if not self.silent and self.where is None:  # (record's own test, before the call)
            self.record(n, result, "call")
        return result

    def eval_BinOp(self, n: ast.BinOp, env: Env) -> Value:
        return incomplete.eval_binop_chain(self, n, env)  # `a + b + ...`: a loop, not recursion

    def binop(self, op: ast.operator, left: Value, right: Value, node: ast.AST) -> Value:
        if isinstance(left, InstanceVal) or isinstance(right, InstanceVal):
            by_method = operators.binary(self, op, left, right, node)  # `__and__`, `__radd__`...
            if by_method is not None:
                return by_method
        if isinstance(left, Const) and isinstance(right, Const) and type(op) in const_fold.BINOPS:
            try:
                return Const(const_fold.fold(op, left.value, right.value))
            except Exception:  # what CPython raises here (1 / 0, 'a' - 1), or too big: not a value
                return UNKNOWN
        ld, rd = _int_dim(left), _int_dim(right)
        if ld is not None and rd is not None:
            if isinstance(op, ast.Add):
                v = dim_value(D.add(ld, rd))
            elif isinstance(op, ast.Sub):
                v = dim_value(D.sub(ld, rd))
            elif isinstance(op, ast.Mult):
                v = dim_value(D.mul(ld, rd))
            elif isinstance(op, ast.FloorDiv):
                v = dim_value(D.floordiv(ld, rd))
            else:
                v = UNKNOWN
            if v is UNKNOWN and is_int_like(left) and is_int_like(right) and type(op) in _INT_OPS:
                return UNKNOWN_INT  # int op int is an int (non-linear or not a size)
            return v
        if is_int_like(left) and is_int_like(right) and type(op) in _INT_OPS:
            return UNKNOWN_INT
        if isinstance(left, TupleVal) and isinstance(right, TupleVal) and isinstance(op, ast.Add):
            return TupleVal(left.items + right.items, left.is_list)
        if isinstance(left, SetVal) and isinstance(right, SetVal):
            out = set_elements.operate(self, op, left, right)
            if out is not None:
                return out
        if isinstance(left, DictVal) and isinstance(right, DictVal) and isinstance(op, ast.BitOr):
            return DictVal(mutation.dict_items(list(left.items) + list(right.items)))  # `a | b`: a new dict
        if isinstance(left, TupleVal) and isinstance(op, ast.Mult) and isinstance(right, Const) \
                and isinstance(right.value, int) and 0 <= right.value <= MAX_UNROLL:
            return TupleVal(left.items * right.value, left.is_list)
        return loop_steps.binop(op, left, right, array_binop(self, op, left, right, node))

    def eval_UnaryOp(self, n: ast.UnaryOp, env: Env) -> Value:
        v = self.eval(n.operand, env)
        if isinstance(v, InstanceVal):
            by_method = operators.unary(self, n.op, v, n)  # `__neg__`, `__invert__`...
            if by_method is not None:
                return by_method
        if isinstance(v, Const):
            try:
                if isinstance(n.op, ast.USub):
                    return Const(-v.value)
                if isinstance(n.op, ast.UAdd):
                    return Const(+v.value)
                if isinstance(n.op, ast.Not):
                    return Const(not v.value)
                if isinstance(n.op, ast.Invert):
                    return Const(~v.value)
            except Exception:
                return UNKNOWN
        if isinstance(n.op, ast.USub) and isinstance(v, SymInt):
            return dim_value(D.neg(v.dim))
        if isinstance(n.op, (ast.USub, ast.UAdd, ast.Invert)) and is_int_like(v):
            return UNKNOWN_INT
        if isinstance(n.op, ast.Not):
            t = self.truth(v)
            return Const(not t) if t is not None else UNKNOWN
        if isinstance(v, ArrayVal):
            return v
        return UNKNOWN

    def eval_BoolOp(self, n: ast.BoolOp, env: Env) -> Value:
        values = []
        for e in n.values:
            v = self.eval(e, env)
            t = self.truth(v)
            if isinstance(n.op, ast.And) and t is False:
                return v
            if isinstance(n.op, ast.Or) and t is True:
                return v
            values.append((v, t))
        if all(t is not None for _, t in values):
            return values[-1][0]
        return UNKNOWN

    def eval_Compare(self, n: ast.Compare, env: Env) -> Value:
        left = self.eval(n.left, env)
        result: Value = Const(True)
        for op, comp in zip(n.ops, n.comparators):
            right = self.eval(comp, env)
            if isinstance(left, ArrayVal) and isinstance(right, ArrayVal) \
                    and broadcasting.raises(self, op, left, right, n):
                return UNKNOWN  # JAX raises here
            r = self.compare(op, left, right)
            if isinstance(r, ArrayVal):
                result = r
            elif isinstance(r, Const) and isinstance(result, Const):
                result = Const(bool(result.value) and bool(r.value))
            else:
                result = UNKNOWN
                if len(n.ops) == 1 and isinstance(op, (ast.Eq, ast.NotEq)):
                    d = path_equalities.difference(left, right)
                    if d is not None:  # for the `if` this may be the test of
                        self.dim_test = (n, d)
            left = right
        return result

    def compare(self, op: ast.cmpop, left: Value, right: Value) -> Value:
        if type(left) is Const and type(right) is Const:  # (the commonest case: none of the
            return _fold_compare(op, left, right)  # cases before the constants' applies to it)
        if isinstance(left, InstanceVal) or isinstance(right, InstanceVal):
            r = operators.compare(self, op, left, right)  # `__eq__`, `__lt__`, `__contains__`...
            if r is not None:
                return r
            r = classes.compare(self, op, left, right)  # enum members
            if r is not None:
                return r
        if (isinstance(left, SetVal) or isinstance(right, SetVal)) \
                and (answer := set_elements.compared(self, op, left, right)) is not None:
            return answer
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, SetVal):
            found = set_elements.contains(self, right, left)
            return UNKNOWN if found is None else Const(found if isinstance(op, ast.In) else not found)
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, DictVal) and isinstance(left, Const):
            try:  # a key of a dict, as CPython hashes and compares it
                found = left.value in {k: None for k, _ in right.items}
            except TypeError:
                return UNKNOWN
            return Const(found if isinstance(op, ast.In) else not found)
        if isinstance(left, Const) and isinstance(right, Const):
            return _fold_compare(op, left, right)
        if isinstance(left, TupleVal) and isinstance(right, TupleVal) and type(op) in _SEQ_CMPOPS:
            lv, rv = _python_seq(left), _python_seq(right)
            if lv is not None and rv is not None:  # `jax.__version_info__ >= (0, 11)`: as CPython does
                try:
                    return Const(_CMPOPS[type(op)](lv, rv))
                except TypeError:
                    return UNKNOWN
        if isinstance(op, (ast.Is, ast.IsNot)) and (same := _identical(left, right)) is not None:
            if same and isinstance(left, InstanceVal):
                mutation.compared_identity(self, left)
            return Const(same if isinstance(op, ast.Is) else not same)
        if isinstance(op, (ast.Is, ast.IsNot)) and (isinstance(left, Const) and left.value is None
                                                     or isinstance(right, Const) and right.value is None):
            other = right if isinstance(left, Const) and left.value is None else left
            if isinstance(other, (ArrayVal, RefVal, FuncVal, TupleVal, DictVal, ApiVal, ModuleVal, InstanceVal,
                                  ClassVal, PartialVal, BoundMethod, Wrapped, ShapeDtypeVal, DTypeVal)):
                return Const(isinstance(op, ast.IsNot))
            return UNKNOWN
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, DTypeVal) and isinstance(right, DTypeVal):
            same = dtypes.same(left.dtype, right.dtype)  # numpy dtypes compare by name
            return UNKNOWN if same is None else Const(same if isinstance(op, ast.Eq) else not same)
        if isinstance(op, (ast.Eq, ast.NotEq)) and (same := jax_value_equality.equal(left, right)) is not None:
            return Const(same if isinstance(op, ast.Eq) else not same)  # enum members, dataclasses
        if isinstance(op, (ast.Eq, ast.NotEq)) and (same := _container_scalar_equal(left, right)) is not None:
            return Const(same if isinstance(op, ast.Eq) else not same)  # `precision != -1`
        if isinstance(op, (ast.Eq, ast.NotEq)):
            ld, rd = _int_dim(left), _int_dim(right)
            if ld is not None and rd is not None:
                e = D.equal(ld, rd)
                if e is not None:
                    return Const(e if isinstance(op, ast.Eq) else not e)
                return UNKNOWN
        result = loop_steps.compare(op, left, right, array_compare(self, op, left, right))
        for site in COMPARE_SITES:
            site(self, op, left, right, result)
        return result

    def eval_IfExp(self, n: ast.IfExp, env: Env) -> Value:
        t = self.truth(self.eval(n.test, env))
        if t is True:
            self.record_untaken(n.orelse, env)
            return self.eval(n.body, env)
        if t is False:
            self.record_untaken(n.body, env)
            return self.eval(n.orelse, env)
        with self.uncertain():
            a = self.eval(n.body, env)
            b = self.eval(n.orelse, env)
        return join(a, b)

    def record_untaken(self, node: ast.expr, env: Env) -> None:
        """The names an untaken branch of `a if c else b` reads, recorded with what they hold
        here (`acc if activation is None else activation(acc)`: `acc` is the same array in
        both), nothing evaluated; names a lambda or comprehension in it binds are its own."""
        stack: list[ast.AST] = [node]
        while stack:
            x = stack.pop()
            if isinstance(x, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Load):
                v = env.lookup(x.id)
                if v is not None:
                    self.record(x, v, "name", x.id)
                continue
            push_children(stack, x)  # (ast.iter_child_nodes, without its generators)

    def eval_Tuple(self, n: ast.Tuple, env: Env) -> Value:
        return self._seq(n.elts, env, False)

    def eval_List(self, n: ast.List, env: Env) -> Value:
        return self._seq(n.elts, env, True)

    def _seq(self, elts: list[ast.expr], env: Env, is_list: bool) -> Value:
        items: list[Value] = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value, env)
                if isinstance(v, TupleVal):
                    items.extend(v.items)
                    continue
                return UNKNOWN
            items.append(self.eval(e, env))
        return TupleVal(tuple(items), is_list)

    def eval_Set(self, n: ast.Set, env: Env) -> Value:
        """`{a, *xs}`: each element added in turn (interpret/set_elements.py)."""
        items: list[Value] | None = []
        for e in n.elts:
            if isinstance(e, ast.Starred):
                more = set_elements.elements(self, self.eval(e.value, env))
                items = None if more is None or items is None else items + more
            else:
                v = self.eval(e, env)
                items = items + [v] if items is not None else None
        return set_elements.new_set(self, items)

    def eval_Dict(self, n: ast.Dict, env: Env) -> Value:
        items = []
        for k, v in zip(n.keys, n.values):
            if k is None:
                return UNKNOWN
            kv = self.eval(k, env)
            vv = self.eval(v, env)
            if not isinstance(kv, Const):
                return UNKNOWN
            items.append((kv.value, vv))
        return DictVal(mutation.dict_items(items))  # a repeated key: its first place, last value

    def eval_Slice(self, n: ast.Slice, env: Env) -> Value:
        return SliceVal(self.eval(n.lower, env), self.eval(n.upper, env), self.eval(n.step, env))

    def eval_Lambda(self, n: ast.Lambda, env: Env) -> Value:
        defaults = tuple(self.eval(d, env) for d in n.args.defaults)
        kw_defaults = {p.arg: self.eval(d, env) for p, d in zip(n.args.kwonlyargs, n.args.kw_defaults)
                       if d is not None}  # `lambda *args, f=f: ...`
        f = FuncVal(n, env, "<lambda>", defaults, kw_defaults)
        if self._closure_scopes is not None:
            self._closure_scopes.add(env)
        if self.where is self.home:
            self.defined[id(n)] = f
            if self.captures:
                silent_memo.note_defined(self, id(n))
        return f

    def eval_JoinedStr(self, n: ast.JoinedStr, env: Env) -> Value:
        """An f-string: computed when every part is a known int, float, str, bool or None. Made
        of a sweep's values, it is one of them (interpret/observe.py): reading it reads them, and
        making it does not (`print(f"{tile_m=}")` does not look at tile_m)."""
        parts: list[str] | None = []
        tags: frozenset = frozenset()
        for v in n.values:
            if isinstance(v, ast.FormattedValue):
                x = self.eval(v.value, env)
                spec = self.eval(v.format_spec, env) if v.format_spec is not None else Const("")
                if isinstance(x, (InstanceVal, DTypeVal, TupleVal)) and isinstance(spec, Const) \
                        and isinstance(spec.value, str):
                    shown = operators.formatted(self, x, v.conversion, spec.value)  # a shape, `__str__`...
                    if shown is not None:
                        if parts is not None:
                            parts.append(shown)
                        continue
                if parts is None or not isinstance(x, Const) or not isinstance(spec, Const) \
                        or type(raw(x)) not in (int, float, str, bool, type(None)) \
                        or not isinstance(raw(spec), str) or len(raw(spec)) > 8:
                    parts = None
                    continue
                for c in (x, spec):
                    if isinstance(c, Swept):
                        tags |= c.tags
                value = raw(x)
                value = repr(value) if v.conversion == ord("r") else str(value) \
                    if v.conversion == ord("s") else ascii(value) if v.conversion == ord("a") else value
                try:
                    parts.append(format(value, raw(spec)))
                except (ValueError, TypeError):
                    parts = None
            elif isinstance(v, ast.Constant) and parts is not None:
                parts.append(str(v.value))
        if parts is None:
            return UNKNOWN
        return Swept("".join(parts), tags, self.obs) if tags else Const("".join(parts))

    def eval_NamedExpr(self, n: ast.NamedExpr, env: Env) -> Value:
        v = self.eval(n.value, env)
        self.assign(n.target, v, env, n.value)
        return v

    def eval_Starred(self, n: ast.Starred, env: Env) -> Value:
        self.eval(n.value, env)
        return UNKNOWN

    def _comprehension(self, n: ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp,
                       env: Env, elt: Callable[[Env], Value]) -> list[Value] | None:
        """The values `elt` gives for each iteration of the comprehension's generators (nested,
        with their `if`s), run as CPython runs them in one scope of their own; None when the
        iterations are not all known (then the body is analysed once with unknown targets)."""
        inner = Env(env)  # one scope: a lambda made in it sees the last values when called later
        out: list[Value] = []
        if any(g.is_async for g in n.generators) or not self._generate(n.generators, 0, inner, elt, out):
            with self.uncertain():
                for g in n.generators:
                    self.assign(g.target, UNKNOWN, inner, None)
                    for cond in g.ifs:
                        self.eval(cond, inner)
                elt(inner)
            return None
        return out

    def _generate(self, gens: list[ast.comprehension], i: int, inner: Env,
                  elt: Callable[[Env], Value], out: list[Value]) -> bool:
        if i == len(gens):
            out.append(elt(inner))
            return len(out) <= MAX_UNROLL
        g = gens[i]
        items = self.iter_items(self.eval(g.iter, inner if i else inner.parent))  # type: ignore[arg-type]
        if items is None or len(items) > MAX_UNROLL:
            return False
        for item in items:
            self.assign(g.target, item, inner, None)
            keep = True
            for cond in g.ifs:
                t = self.truth(self.eval(cond, inner))
                if t is None:
                    return False
                if not t:
                    keep = False
                    break
            if keep and not self._generate(gens, i + 1, inner, elt, out):
                return False
        return True

    def eval_ListComp(self, n: ast.ListComp, env: Env) -> Value:
        out = self._comprehension(n, env, lambda e: self.eval(n.elt, e))
        return TupleVal(tuple(out), True) if out is not None else UNKNOWN

    eval_GeneratorExp = eval_ListComp  # (a generator: as the list of what it yields)

    def eval_SetComp(self, n: ast.SetComp, env: Env) -> Value:
        return set_elements.new_set(self, self._comprehension(n, env, lambda e: self.eval(n.elt, e)))

    def eval_DictComp(self, n: ast.DictComp, env: Env) -> Value:
        out = self._comprehension(n, env, lambda e: TupleVal((self.eval(n.key, e), self.eval(n.value, e))))
        if out is None:
            return UNKNOWN
        pairs = []
        for kv in out:
            k = kv.items[0]  # type: ignore[attr-defined]
            if not isinstance(k, Const):
                return UNKNOWN
            try:
                hash(k.value)
            except TypeError:
                return UNKNOWN
            pairs.append((k.value, kv.items[1]))  # type: ignore[attr-defined]
        return DictVal(mutation.dict_items(pairs))

    def eval_Await(self, n: ast.Await, env: Env) -> Value:
        self.eval(n.value, env)
        return UNKNOWN


#: getattr's cases, in the order it tests them (the first class the value is an instance of).
_ATTR_CASES: tuple[type, ...] = (ForeignName, ModuleVal, UserModuleVal, ApiVal, InstanceVal, ClassVal,
                                 classes.NamedTupleVal, classes.SuperVal, Opaque)
_ATTR_KINDS: dict[type, type] = {}  # a value type -> its case in getattr (Value: none of them)


def _attr_kind(obj: Value) -> type:
    kind = next((c for c in _ATTR_CASES if isinstance(obj, c)), Value)
    _ATTR_KINDS[type(obj)] = kind
    return kind


#: Operators whose result on two Python ints is an int.
_INT_OPS = frozenset({ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift, ast.RShift,
                      ast.BitAnd, ast.BitOr, ast.BitXor})


def _const_slice(s: SliceVal) -> slice | None:
    parts = []
    for v in (s.start, s.stop, s.step):
        if isinstance(v, Const) and (v.value is None or isinstance(v.value, int)):
            parts.append(v.value)
        else:
            return None
    return slice(*parts)


_SCALARS = (bool, int, float, complex, str, bytes, type(None))


def _container_scalar_equal(left: Value, right: Value) -> bool | None:
    """`==` between a tuple, list, dict or set and a Python scalar: False (neither type defines an
    equality with the other; CPython falls back to identity)."""
    for a, b in ((left, right), (right, left)):
        if isinstance(a, (TupleVal, DictVal, SetVal)) and isinstance(b, Const) and type(b.value) in _SCALARS:
            return False
    return None


def _identical(left: Value, right: Value) -> bool | None:
    """`left is right` for classes, functions and API objects: a class statement's run is one
    class; an API name is one object (two names may be one: `jnp.ndarray is jax.Array`, not
    decided); the program's classes, functions and instances are no JAX or builtin object, and
    no constant."""
    objects = (ClassVal, FuncVal, InstanceVal)  # (an object the program made: never a constant)
    if isinstance(left, objects) and isinstance(right, Const) or isinstance(right, objects) and isinstance(left, Const):
        return False  # `logits_scale is AUTO` for `logits_scale=1.0`
    if isinstance(left, InstanceVal) or isinstance(right, InstanceVal):
        if isinstance(left, (ClassVal, FuncVal)) or isinstance(right, (ClassVal, FuncVal)):
            return False  # (an instance made by calling a class is not a class statement's class)
        return True if left is right else None
    kinds = (ClassVal, ApiVal, FuncVal)
    if not (isinstance(left, kinds) and isinstance(right, kinds)):
        return None
    if isinstance(left, ClassVal) and isinstance(right, ClassVal):
        return left is right
    if isinstance(left, ApiVal) and isinstance(right, ApiVal):
        a, b = jax_value_equality.member(left), jax_value_equality.member(right)
        if a is not None and b is not None:
            return a == b  # an enum's members are one object each (`plgpu.SMEM is MemorySpace.SMEM`)
        return True if left == right else None
    if isinstance(left, FuncVal) and isinstance(right, FuncVal):
        return None  # (two runs of one `def` are two functions)
    return False


def _int_dim(v: Value) -> D.Dim:
    if isinstance(v, Const) and isinstance(v.value, bool):
        return None
    if isinstance(v, (Const, SymInt)):
        return as_dim(v)
    if isinstance(v, Opaque):
        return D.Sym.var(v.name)
    return None
