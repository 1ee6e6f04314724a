"""The library calls test code builds its inputs with, run as CPython runs them.

tokamax's tests build a kernel's inputs with `numerics.random_initialize((q, k, v))`: pytrees
flattened with an `is_leaf`, a numpy generator spawned per leaf, the leaves initialised in a
`ThreadPoolExecutor`, under `with`, `isinstance` against `ShapeDtypeStruct` and library classes
(`@flax.struct.dataclass`). Each program here runs in CPython (with the installed jax) and
through the interpreter; wherever the interpreter claims a value it must be CPython's, and
each program checks that it claims the values the kernel needs (python_programs.check_program).
Kernel parameters annotated with jaxtyping (`q: Float[Array, "T H D"]`) take the annotated rank
and symbolic sizes when nothing else is known (interpret/array_annotations.py).
"""

from __future__ import annotations

import importlib.util
import textwrap

import pytest

from python_programs import Tally, check_program, run_interpreter

PROGRAMS = {
    "flatten_unflatten": """
        import jax
        tree = (1, {"b": 2.5, "a": None}, [3, "s"])
        leaves, treedef = jax.tree.flatten(tree)
        rebuilt = treedef.unflatten([x for x in leaves])
        n = treedef.num_leaves
        same = jax.tree.unflatten(treedef, leaves)
        structure_leaves = jax.tree.leaves(jax.tree.structure(tree).unflatten(leaves))
    """,
    "is_leaf": """
        import jax
        tree = ([1, 2], (3, [4]), {"k": [5, 6]})
        lists, td = jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, list))
        count = len(lists)
        back = td.unflatten(lists)
        none_leaf = jax.tree.leaves((None, 1), is_leaf=lambda x: x is None)
    """,
    "tree_map": """
        import jax
        tree = {"x": (1, 2), "y": [3, None]}
        doubled = jax.tree.map(lambda v: v * 2, tree)
        summed = jax.tree_util.tree_map(lambda a, b: a + b, tree, doubled)
        leaves = jax.tree.leaves(summed)
        prefix = jax.tree.map(lambda axis, sub: (axis, len(jax.tree.leaves(sub))), (0, None), ([1, 2], (3,)),
                              is_leaf=lambda x: x is None)
        whole = jax.tree.map(lambda axis, sub: sub, 0, (1, [2, 3]))
    """,
    "shape_dtype_structs": """
        import jax
        import jax.numpy as jnp
        q = jax.ShapeDtypeStruct((2, 64, 4, 32), jnp.bfloat16)
        leaves, td = jax.tree.flatten((q, q, None))
        shapes = [x.shape for x in leaves]
        size = q.size
        is_sds = isinstance(q, jax.ShapeDtypeStruct)
        class Initializer:
            pass
        is_init = isinstance(q, (Initializer,))
        mapped = jax.tree.map(lambda x: x.shape[-1], (q, [q]))
        evaluated = jax.eval_shape(lambda x: (x * 2, None, [x]), q)
        ev_shape = evaluated[0].shape
        ev_none = evaluated[1] is None
        ev_list = evaluated[2][0].dtype == jnp.bfloat16
    """,
    "executor_map_and_submit": """
        from concurrent import futures
        def init(a, b):
            return (a, b * 2)
        with futures.ThreadPoolExecutor() as executor:
            results = list(executor.map(init, [1, 2, 3], [4, 5, 6]))
            one = executor.submit(init, 7, b=8).result()
    """,
    "with_user_enter": """
        class Scope:
            def __init__(self, n):
                self.n = n
            def __enter__(self):
                return self.n + 1
            def __exit__(self, *exc):
                return False
        with Scope(41) as value:
            inside = value * 2
    """,
    "numpy_generators": """
        import numpy as np
        rngs = np.random.default_rng(0).spawn(3)
        count = len(rngs)
        shape = rngs[0].standard_normal(size=(2, 3), dtype=np.float32).shape
        ints = rngs[1].integers(0, 10, size=(4,)).shape
    """,
    "random_initialize_like": """
        import numpy as np
        import jax
        import jax.numpy as jnp
        from concurrent import futures

        class ArrayInitializer:
            pass

        def split_merge(pred, xs):
            ins = [x for x in xs if pred(x)]
            outs = [x for x in xs if not pred(x)]
            def merge(a, b):
                a, b = iter(a), iter(b)
                return [next(a) if pred(x) else next(b) for x in xs]
            return ins, outs, merge

        def init(rng, x):
            if isinstance(x, ArrayInitializer):
                return None
            return rng.standard_normal(size=x.shape, dtype=np.float32).astype(x.dtype)

        def random_initialize(tree, seed=0):
            is_leaf = lambda x: isinstance(x, ArrayInitializer)
            flat, treedef = jax.tree.flatten(tree, is_leaf=is_leaf)
            abstract, other, merge = split_merge(lambda x: isinstance(x, jax.ShapeDtypeStruct), flat)
            rngs = np.random.default_rng(seed).spawn(len(abstract))
            with futures.ThreadPoolExecutor() as executor:
                arrays = list(executor.map(init, rngs, abstract))
            return treedef.unflatten(merge(arrays, other))

        q = jax.ShapeDtypeStruct((2, 16, 4, 8), jnp.float32)
        q1, k1, n1 = random_initialize((q, q, None))
        q_shape = q1.shape
        k_dtype_is_f32 = k1.dtype == jnp.float32
    """,
    "introspection": """
        class Op:
            def __call__(self, x, *, y=2, mask=None):
                z = x + y
                params = locals().copy()
                params.pop("self")
                return type(self), params

        def plain(a, b=1):
            c = a + b
            return locals()

        cls, params = Op()(1)
        same_class = cls is Op
        other_class = cls is plain
        names = sorted(params)
        z = params["z"]
        mask = params["mask"]
        loc = plain(5)
        int_type = type(3) is int
        list_type = type([1]) is list
        tuple_type = type((1,)) is tuple
    """,
    "test_argument_plumbing": """
        import functools
        import jax
        import jax.numpy as jnp

        def run(q, *, impl=None, impl_kwargs=None, **kwargs):
            if impl_kwargs is None:
                impl_kwargs = {}
            mask = (impl_kwargs | kwargs).get("mask")
            masked = isinstance(mask, jax.Array)
            merged = impl_kwargs | kwargs
            return masked, merged, functools.partial(impl, **kwargs, **impl_kwargs) is None

        q = jnp.zeros((2, 8), jnp.float32)
        wide = any(x.dtype == jnp.float32 for x in (q, q))
        narrow = all(x.shape[0] == 4 for x in (q,))
        none_in = any([None, 0, False])
        masked, merged, no_partial = run(q, impl=print, impl_kwargs=dict(scale=2.0), atol=1e-3)
        d = {"a": 1}
        d |= {"b": 2}
        union = {"x": 1, "y": 2} | {"y": 3}
        sds_is_none = jax.ShapeDtypeStruct((2,), jnp.float32) is None
        number_is_array = isinstance(3, jax.Array)
        list_is_array = isinstance([q], jax.Array)
    """,
    "signature_bind": """
        import collections
        import inspect

        def fwd(q, k, /, v=3, *rest, scale=1.0, mask=None, config, **extra):
            return q

        class Op:
            def _fwd(self, q, k, *, mask=None, config=None, return_residuals=False):
                return q

            def bind(self, *args, return_residuals=False, **kwargs):
                sig = inspect.signature(self._fwd)
                params = sig.parameters.copy()
                del params["config"]
                sig = sig.replace(parameters=tuple(params.values()))
                ba = sig.bind(*args, return_residuals=return_residuals, **kwargs)
                ba.apply_defaults()
                return ba

        class Sub(Op):
            def bind(self, q, k, *, mask=None, is_causal=False):
                if is_causal:
                    mask = "causal"
                return super().bind(q, k, mask=mask)

        sig = inspect.signature(fwd)
        names = list(sig.parameters)
        ba = sig.bind(0, 1, 2, 5, 6, config="c", other=7)
        args = ba.args
        kwargs = ba.kwargs
        arguments = dict(ba.arguments)
        ba.apply_defaults()
        with_defaults = dict(ba.arguments)
        short = sig.bind(0, 1, config=None)
        short_args = short.args
        short_kwargs = short.kwargs
        op = Sub()
        bound = type(op).bind(self=op, q=1, k=2, is_causal=True)
        sub_args = bound.args
        sub_kwargs = bound.kwargs
        rebuilt = inspect.BoundArguments(bound.signature, collections.OrderedDict(bound.arguments)).kwargs
        defaults = [p.default for p in inspect.signature(Op()._fwd).parameters.values()][2:]

        class AUTO:
            pass

        logits_scale = 1.0
        scale_is_auto = logits_scale is AUTO
        op_is_auto = op is not AUTO
    """,
}

# Values each program must claim (not only: not contradict).
EXPECTED_CLAIMS = {
    "flatten_unflatten": ["rebuilt", "n", "same", "structure_leaves"],
    "is_leaf": ["count", "back", "none_leaf"],
    "tree_map": ["doubled", "summed", "leaves", "prefix", "whole"],
    "shape_dtype_structs": ["shapes", "size", "is_sds", "is_init", "mapped", "ev_shape", "ev_none", "ev_list"],
    "executor_map_and_submit": ["results", "one"],
    "with_user_enter": ["value", "inside"],
    "numpy_generators": ["count", "shape", "ints"],
    "random_initialize_like": ["q_shape", "n1"],
    "introspection": ["same_class", "other_class", "names", "z", "mask", "loc", "int_type", "list_type",
                      "tuple_type"],
    "signature_bind": ["names", "args", "kwargs", "arguments", "with_defaults", "short_args", "short_kwargs",
                       "sub_args", "sub_kwargs", "rebuilt", "defaults", "scale_is_auto", "op_is_auto"],
    "test_argument_plumbing": ["wide", "narrow", "none_in", "masked", "merged", "no_partial", "d", "union",
                               "sds_is_none", "number_is_array", "list_is_array"],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_library_program_has_cpythons_values(name: str) -> None:
    source = textwrap.dedent(PROGRAMS[name])
    tally = Tally()
    wrong = check_program(source, tally)
    assert tally.raised == 0, "CPython raised on the program itself"
    assert not wrong, "\n".join(wrong)
    got, _ = run_interpreter(source)
    from wgmma_lsp.interpret.values import Unknown

    missing = [n for n in EXPECTED_CLAIMS[name] if n not in got or isinstance(got[n], Unknown)]
    assert not missing, f"the interpreter claims no value for {missing}"


def test_an_unknown_node_leaves_the_tree_unknown() -> None:
    """A leaf the analysis cannot classify (an unknown value: it may be a pytree node) makes
    the flattened structure unknown — no guess at how many leaves there are."""
    got, _ = run_interpreter(textwrap.dedent("""
        import jax
        leaves, td = jax.tree.flatten((1, unknown_thing()))
        n = len(leaves)
    """))
    from wgmma_lsp.interpret.values import Const

    assert not isinstance(got.get("n"), Const)


@pytest.mark.skipif(importlib.util.find_spec("flax") is None, reason="flax is not installed here")
def test_flax_struct_dataclass_is_a_frozen_dataclass() -> None:
    source = textwrap.dedent("""
        import flax.struct

        @flax.struct.dataclass
        class Box:
            a: int
            b: int = 3

        box = Box(1)
        total = box.a + box.b
        plain = isinstance((1, 2), Box)
    """)
    tally = Tally()
    assert not check_program(source, tally)
    got, _ = run_interpreter(source)
    from wgmma_lsp.interpret.values import Const

    assert got["total"] == Const(4) and got["plain"] == Const(False)


JAXTYPED = '''
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float, BFloat16, Int, jaxtyped

def kernel(q: Float[Array, "T H D"], k: BFloat16[Array, "t h D"], lens: Int[Array, "#B"],
           rest: Float[Array, "*B n"], maybe: Float[Array, "T"] | None, scalar: Float[Array, ""]):
    head = q.shape[-1]
    return q, k, lens, rest, maybe, scalar
'''


def test_jaxtyping_annotations_declare_rank_and_symbolic_sizes() -> None:
    """An uncalled kernel's annotated parameters hover with the annotation's rank and names;
    what jaxtyping does not pin to one size is unknown, a union is not read."""
    from wgmma_lsp.analysis import analyze

    analysis = analyze(JAXTYPED, "/tmp/jaxtyped_kernel.py")
    shown = {}
    for rec in analysis.records.values():
        if rec.kind == "name" and rec.span.line == 8:  # the return statement
            shown[rec.name] = rec.values[0].describe()
    assert shown["q"] == "q.dtype[T, H, D]"
    assert shown["k"] == "bfloat16[t, h, D]"
    assert shown["lens"] == "int32[?]" or shown["lens"] == "lens.dtype[?]"
    assert shown["rest"] == "rest.dtype[...]"
    assert "maybe" in shown and "[" not in shown["maybe"]
    assert shown["scalar"] == "scalar.dtype[]"


def test_the_annotation_matches_what_jaxtyping_accepts() -> None:
    """The rank and shared sizes read from an annotation are the ones jaxtyping itself checks:
    arrays of that rank whose shared `D` agrees pass, a different rank or a different `D` fail."""
    jaxtyping = pytest.importorskip("jaxtyping")
    import jax.numpy as jnp

    Float, Array = jaxtyping.Float, jaxtyping.Array

    @jaxtyping.jaxtyped(typechecker=None)
    def accepts(q, k) -> bool:
        return isinstance(q, Float[Array, "T H D"]) and isinstance(k, Float[Array, "t h D"])

    assert accepts(jnp.zeros((2, 3, 4)), jnp.zeros((5, 6, 4)))
    assert not accepts(jnp.zeros((2, 3, 4)), jnp.zeros((5, 6, 7)))
    assert not accepts(jnp.zeros((2, 3)), jnp.zeros((5, 6, 3)))


def test_functions_in_a_class_body_do_not_see_its_names() -> None:
    """Python's scoping: a method's body reads module names, not the class body's (a property
    named like the module-level helper it calls)."""
    source = textwrap.dedent("""
        def helper(x):
            return ("module", x)

        class T:
            @property
            def helper(self):
                return helper(1)

            values = [helper for _ in range(1)]

        r = T().helper
    """)
    tally = Tally()
    assert not check_program(source, tally)
    got, _ = run_interpreter(source)
    from wgmma_lsp.interpret.values import TupleVal

    assert isinstance(got["r"], TupleVal)


UNCERTAIN_PATH = '''
import os

def build(skip):
    if skip:
        return None
    specs = []
    for i in range(2):
        specs.append(("spec", i))
    specs.append("last")
    return specs

result = build(os.environ.get("WGMMA_LSP_NEVER_SET_VARIABLE") is not None)
'''


def test_a_list_made_after_an_early_return_changes_exactly() -> None:
    """After `if skip: return` (undecided), the rest of the function runs on some paths only;
    a list made there exists only on those paths, so its appends are followed exactly: the
    value recorded where it is returned is CPython's."""
    from wgmma_lsp.analysis import analyze
    from wgmma_lsp.interpret.values import TupleVal

    from python_programs import compare_value, run_cpython

    namespace = run_cpython(UNCERTAIN_PATH)
    assert namespace is not None
    analysis = analyze(UNCERTAIN_PATH)
    returned = [v for rec in analysis.records.values() if rec.name == "specs" and rec.span.line == 10
                for v in rec.values]
    assert returned and all(isinstance(v, TupleVal) and not v.spoiled for v in returned)
    tally = Tally()
    for v in returned:
        compare_value(v, namespace["result"], "specs", tally, _Live())
    assert not tally.disagreements and tally.agreements


class _Live:
    spoiled_shared: dict = {}


UNCERTAIN_INSTANCE = '''
import os


class Mask:
    def __init__(self, bool_mask=None, *, causal=False):
        object.__setattr__(self, "bool_mask", bool_mask)
        self.causal = causal


def build(skip):
    if skip:
        return None
    mask = Mask(causal=True)
    return mask.causal, mask.bool_mask

result = build(os.environ.get("WGMMA_LSP_NEVER_SET_VARIABLE") is not None)
'''


def test_an_object_made_after_an_early_return_keeps_its_attributes() -> None:
    """After `if skip: return` (undecided), an object made on the rest of the path exists only
    there: what its `__init__` sets (`self.x = ...`, `object.__setattr__`) is its value, as in
    CPython, not a join with nothing."""
    from wgmma_lsp.analysis import analyze

    from python_programs import compare_value, run_cpython

    namespace = run_cpython(UNCERTAIN_INSTANCE)
    assert namespace is not None
    analysis = analyze(UNCERTAIN_INSTANCE)
    got = {rec.name: rec.values for rec in analysis.records.values()
           if rec.name in ("causal", "bool_mask") and rec.span.line == 14}
    assert set(got) == {"causal", "bool_mask"}, got
    tally = Tally()
    for i, name in enumerate(("causal", "bool_mask")):
        assert got[name] and all(type(v).__name__ == "Const" for v in got[name]), got
        for v in got[name]:
            compare_value(v, namespace["result"][i], name, tally, _Live())
    assert not tally.disagreements and tally.agreements == 2
