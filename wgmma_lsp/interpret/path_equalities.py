"""What an `if` proves about sizes on the path it takes: `if n - x.shape[0] == 0: return x`.

An undecided comparison of two sizes (`padding == 0` with `padding = 8*cdiv(T, 8) - T`) sends
the interpreter down both branches. On the branch where they are equal, a value computed from
one of them is just as well a value of the other: JAX sees the same number either way. Without
that, the join after the `if` forgets the size (`x` of `T` rows returned on one path,
`jnp.pad(x, ...)` of `8*cdiv(T, 8)` rows on the other), and every shape built from it is `?`.

So a branch holding `a == b` keeps the equation `a - b == 0` with what it hands on (what it
returns, what it binds), and where paths join, a size of that branch that differs from the
other path's by a multiple of the equation is the other path's size (`T` is `8*cdiv(T, 8)`
there). Nothing else changes: values recorded on the branch keep their own spelling, and a
function called there is not told (its results are memoised for calls where it may not hold).
"""

from __future__ import annotations

from dataclasses import replace

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.dims import Dim, Sym
from wgmma_lsp.interpret.values import ArrayVal, Const, ShapeDtypeVal, SymInt, TupleVal, Value, join


def size_of(v: Value) -> Dim:
    """A value compared as a size: an int or a symbolic int (not an unknown, nor a bool)."""
    if isinstance(v, Const) and type(v.value) is int:
        return v.value
    if isinstance(v, SymInt):
        return v.dim
    return None


def difference(left: Value, right: Value) -> Sym | None:
    """`left - right` when both are sizes and the comparison is undecided, else None."""
    a, b = size_of(left), size_of(right)
    if a is None or b is None or D.equal(a, b) is not None:
        return None
    d = D.sub(a, b)
    return d if isinstance(d, Sym) else None


def proportional(diff: Dim, eq: Sym) -> bool:
    """`diff` is a whole multiple of `eq` (so `eq == 0` makes it 0)."""
    if not isinstance(diff, Sym) or len(diff.terms) != len(eq.terms):
        return False
    (name, c0), (name_e, e0) = diff.terms[0], eq.terms[0]
    if name != name_e or c0 % e0:
        return False
    k = c0 // e0
    return all(n == m and c == k * e for (n, c), (m, e) in zip(diff.terms, eq.terms)) \
        and diff.const == k * eq.const


def reconcile_dim(x: Dim, y: Dim, eqs: tuple[Sym, ...]) -> Dim:
    """`x`, from a path holding `eqs`, as `y` (another path's) where the equations make them equal."""
    if x is None or y is None or D.equal(x, y) is not None:
        return x
    diff = D.sub(x, y)
    return y if any(proportional(diff, eq) for eq in eqs) else x


def reconcile(v: Value, other: Value, eqs: tuple[Sym, ...], depth: int = 0) -> Value:
    """`v` (from a path holding `eqs`) spelt with `other`'s sizes where the equations make them
    equal, in the immutable values that carry sizes (arrays, ShapeDtypeStructs, symbolic ints,
    tuples of them); anything else as it is — lists and dicts are objects paths may share."""
    if not eqs or depth > 6 or v is other:
        return v
    if isinstance(v, SymInt) and isinstance(other, (SymInt, Const)):
        d = reconcile_dim(v.dim, size_of(other), eqs)
        return v if d == v.dim else other
    if isinstance(v, ArrayVal) and isinstance(other, ArrayVal) and v.shape is not None \
            and other.shape is not None and len(v.shape) == len(other.shape):
        shape = tuple(reconcile_dim(x, y, eqs) for x, y in zip(v.shape, other.shape))
        return v if shape == v.shape else replace(v, shape=shape)
    if isinstance(v, ShapeDtypeVal) and isinstance(other, ShapeDtypeVal):
        array = reconcile(v.array, other.array, eqs, depth + 1)
        return v if array is v.array else ShapeDtypeVal(array)  # type: ignore[arg-type]
    if type(v) is TupleVal and type(other) is TupleVal and not v.is_list and not other.is_list \
            and len(v.items) == len(other.items):
        items = tuple(reconcile(x, y, eqs, depth + 1) for x, y in zip(v.items, other.items))
        return v if all(a is b for a, b in zip(items, v.items)) else TupleVal(items)
    return v


def join_all(values: list[Value], eqs: list[tuple[Sym, ...]]) -> Value:
    """The join of the values several paths hand on, each path holding its equations."""
    out, out_eqs = values[0], eqs[0]
    for v, v_eqs in zip(values[1:], eqs[1:]):
        out = join_paths(out, out_eqs, v, v_eqs)
        out_eqs = ()  # the join holds on both paths
    return out


def join_paths(a: Value, eqs_a: tuple[Sym, ...], b: Value, eqs_b: tuple[Sym, ...]) -> Value:
    """`join(a, b)` of the values two paths hand on, each holding its own equations."""
    if eqs_a:
        a = reconcile(a, b, eqs_a)
    if eqs_b:
        b = reconcile(b, a, eqs_b)
    return join(a, b)
