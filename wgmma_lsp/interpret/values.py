"""Abstract values: what the interpreter knows about each Python and JAX value.

Arrays are like `jax.core.ShapedArray` (shape and dtype, either possibly unknown); refs carry
their inner array, memory space, kind (plain ref, WGMMA accumulator, TMEM, barrier) and the
transforms applied through `.at[...]` / `transpose_ref`. `UNKNOWN` silences every check.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field, replace

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.dims import Dim, Sym
from wgmma_lsp.interpret.dtypes import DType
from wgmma_lsp.spans import Span

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (CONTRIBUTING.md, Speed)
if TYPE_CHECKING:
    from typing import Any, Callable


_BORN = itertools.count(1)


def next_born() -> int:
    """A serial number: objects made from now on have this one or a higher one."""
    return next(_BORN)


class Value:
    """Base of every abstract value."""

    def describe(self) -> str:
        return "unknown"


@dataclass(frozen=True)
class Unknown(Value):
    """A value nothing is known about: silences every check."""
    def describe(self) -> str:
        return "unknown"


UNKNOWN = Unknown()


@dataclass(frozen=True)
class UnknownInt(Unknown):
    """A Python int whose value is not known: a loop index joined over its iterations,
    `int(x)` or `len(x)` of an unknown x, int arithmetic beyond linear sizes. It silences every
    check as UNKNOWN does; it only takes part in JAX arithmetic as the weakly typed int it is
    (`start + i` of an int32 array is int32), and is never a size."""

    def describe(self) -> str:
        return "int"


UNKNOWN_INT = UnknownInt()


@dataclass(frozen=True)
class ForeignName(Unknown):
    """A name from a module the program does not read — an installed third-party package
    (`qwix.QArray` after `import qwix`): unknown as any value, its attributes too, except what
    its class's source proves for `isinstance` (interpret/foreign_classes.py)."""

    name: str


def is_int_like(v: "Value") -> bool:
    """A Python int, known, symbolic or unknown (not a bool)."""
    return (isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool)) \
        or isinstance(v, (SymInt, UnknownInt))


@dataclass(frozen=True)
class Opaque(Value):
    """An unknown value with a name (an unbound parameter, `cfg.tile_m`): sizes print by name."""

    name: str

    def describe(self) -> str:
        return f"unknown ({self.name})"


@dataclass(frozen=True)
class DeclaredOpaque(Opaque):
    """An unknown parameter annotated with a class of the program (`config: Config`): an
    `int`-annotated field of a dataclass or pydantic model read off it is an int known by its
    name (`config.block_k`, interpret/classes.py: `int_field`); anything else as `Opaque`."""

    cls: Any = field(default=None, compare=False, kw_only=True)


@dataclass(frozen=True)
class OpaqueReplaced(Opaque):
    """`dataclasses.replace(cfg, f=v)` of an unknown `cfg`: the replaced fields are known (or
    unknown), the others still print by name (`cfg.tile_m`)."""

    overrides: tuple[tuple[str, Value], ...] = ()


@dataclass(frozen=True, init=False)
class Const(Value):
    """A Python constant: int, float, bool, str, None, Ellipsis, or a slice of constants."""

    value: Any

    def __init__(self, value: Any) -> None:
        # (the generated frozen `__init__` sets the field through object.__setattr__: this is
        # the commonest value made, one per constant evaluated)
        self.__dict__["value"] = value

    def describe(self) -> str:
        return repr(self.value)

    def __eq__(self, other: object) -> bool:
        # As CPython tells values apart: `1`, `True` and `1.0` are equal there but not the same
        # value (a join of `1` and `True` is neither).
        if not isinstance(other, Const):
            return NotImplemented
        a, b = self.value, other.value
        return type(a) is type(b) and a == b

    def __hash__(self) -> int:
        return hash((type(self.value), self.value))


@dataclass(frozen=True)
class SymInt(Value):
    """A Python int known only symbolically."""

    dim: Sym

    def describe(self) -> str:
        return f"int ({self.dim})"


@dataclass(frozen=True)
class SliceVal(Value):
    """A slice `start:stop:step`."""
    start: Value
    stop: Value
    step: Value


@dataclass(frozen=True)
class TupleVal(Value):
    """A tuple, or a list (`is_list`). A list is mutable, as in Python: its methods and item
    assignments change this object in place (interpret/mutation.py), so that every name bound to
    it sees the change; a change the interpreter cannot follow exactly spoils it (`spoiled`:
    every later read of it is unknown)."""

    items: tuple[Value, ...]
    is_list: bool = False
    born: int = field(default_factory=next_born, compare=False, repr=False, kw_only=True)
    spoiled: bool = field(default=False, compare=False, repr=False, kw_only=True)

    def describe(self) -> str:
        inner = ", ".join(i.describe() for i in self.items)
        return f"[{inner}]" if self.is_list else f"({inner}{',' if len(self.items) == 1 else ''})"


@dataclass(frozen=True)
class DictVal(Value):
    """A dict with known keys, in insertion order; mutable in place as a list is (see TupleVal)."""

    items: tuple[tuple[Any, Value], ...]
    born: int = field(default_factory=next_born, compare=False, repr=False, kw_only=True)
    spoiled: bool = field(default=False, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True)
class SetVal(Value):
    """A set (a frozenset: `frozen`): its distinct elements, each once (models/sets.py). Their
    order is not claimed — CPython's follows hashes the interpreter does not compute — so
    nothing iterates a set of two or more elements in an order. Mutable in place as a list is
    (see TupleVal)."""

    items: tuple[Value, ...]
    frozen: bool = False
    born: int = field(default_factory=next_born, compare=False, repr=False, kw_only=True)
    spoiled: bool = field(default=False, compare=False, repr=False, kw_only=True)

    def describe(self) -> str:
        if not self.items:
            return "frozenset()" if self.frozen else "set()"
        inner = "{" + ", ".join(i.describe() for i in self.items) + "}"
        return f"frozenset({inner})" if self.frozen else inner


@dataclass(frozen=True)
class DTypeVal(Value):
    """A dtype as a value (`jnp.float16`). `instance`: known to be a `numpy.dtype` object
    (`x.dtype`, `jnp.dtype(...)`), not a scalar type such as `jnp.float16` — the two are `==`
    but hash apart, so only an instance is a set element the interpreter follows
    (interpret/set_elements.py). Not part of `==` here."""
    dtype: DType
    instance: bool = field(default=False, compare=False)

    def describe(self) -> str:
        return f"dtype {self.dtype}"


@dataclass(frozen=True)
class TransformVal(Value):
    """A ref transform: Mosaic GPU's tiling, swizzle and transpose, or a view's indexing.

    Structured (not text), so that lowering-time rules over tiling/swizzle/transposes can be
    written against it."""

    kind: str  # "tiling", "swizzle", "transpose", "index", "unknown"
    params: tuple[Any, ...] = ()

    def describe(self) -> str:
        if self.kind == "tiling":
            return f"tiling {tuple(self.params)}"
        if self.kind == "swizzle":
            return f"swizzle {self.params[0] if self.params else '?'}"
        if self.kind == "transpose":
            return f"transpose {tuple(self.params)}" if self.params else "transpose"
        if self.kind == "index":
            return "at[...]"
        if self.kind == "reshape":
            return f"reshape {tuple(self.params)}"
        if self.kind == "peer":
            return "remote_ref"
        return "unknown transform"


@dataclass(frozen=True)
class ArrayVal(Value):
    """An array value (a traced `jax.Array`): shape and dtype, each possibly unknown."""

    shape: tuple[Dim, ...] | None
    dtype: DType | None
    layout: str | None = None  # e.g. "WGMMA" after layout_cast; None: unknown
    # Known to be a `jax.Array` (made by `jnp.asarray`, `jax.random.*`, `jax.device_put`, ...),
    # not a NumPy array: `isinstance(x, jax.Array)` is decided for it. False: not known.
    jax: bool = field(default=False, kw_only=True)

    @property
    def ndim(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def aval(self) -> str:
        """JAX's short spelling: `float32[64,128]`."""
        dt = str(self.dtype) if self.dtype is not None else "?"
        if self.shape is None:
            return f"{dt}[...]"
        return f"{dt}[{D.format_dims(self.shape)}]"

    def describe(self) -> str:
        return self.aval()


@dataclass(frozen=True)
class RefVal(Value):
    """A Pallas ref. `base` is the un-transformed ref when this is a view made by `.at[...]`."""

    inner: ArrayVal
    space: str | None  # "smem", "gmem", "regs", "tmem", "default"; None: unknown
    kind: str = "plain"  # "plain", "acc" (WGMMA accumulator), "tmem", "barrier"
    transforms: tuple[TransformVal, ...] = ()
    base: "RefVal | None" = None
    origin: Span | None = field(default=None, compare=False)
    origin_desc: str = field(default="", compare=False)
    # The expression that gave the buffer its memory space and transforms (`plgpu.SMEM(...)`,
    # `plgpu.BlockSpec(...)`): where fixes add transforms.
    spec_span: Span | None = field(default=None, compare=False)
    # Facts of the allocation a ref type carries (TMEM `collective`, a barrier's
    # `orders_tensor_core`), as (name, bool) pairs; read them through `attr()`.
    attrs: tuple[tuple[str, bool], ...] = ()

    @property
    def shape(self) -> tuple[Dim, ...] | None:
        return self.inner.shape

    def attr(self, name: str) -> bool | None:
        """A fact of the underlying allocation; None when unknown."""
        for k, v in self.root().attrs:
            if k == name:
                return v
        return None

    @property
    def dtype(self) -> DType | None:
        return self.inner.dtype

    @property
    def is_accumulator(self) -> bool:
        return self.kind == "acc"

    def root(self) -> "RefVal":
        return self.base.root() if self.base is not None else self

    def aval(self) -> str:
        """The aval JAX prints for the (un-transformed) ref: `Ref<smem>{bfloat16[64,64]}`."""
        r = self.root()
        if r.kind == "acc":
            return f"Accumulator{{{r.inner.aval()}}}"
        space = r.space or "?"
        return f"Ref<{space}>{{{r.inner.aval()}}}"

    def describe(self) -> str:
        if self.base is None:
            return self.aval()
        view = f"Ref<{self.space or '?'}>{{{self.inner.aval()}}}"
        if self.kind == "acc":
            view = f"Accumulator{{{self.inner.aval()}}}"
        own = self.transforms[len(self.root().transforms):] or self.transforms
        return f"{view} (view of {self.root().aval()} through {', '.join(t.describe() for t in own)})"

    def transforms_text(self) -> str:
        """The Mosaic GPU transforms of the underlying buffer (tiling, swizzle), for hovers."""
        own = [t.describe() for t in self.root().transforms if t.kind != "index"]
        return ", ".join(own)


@dataclass(frozen=True)
class AllocSpec(Value):
    """What `run_scoped` allocates: `plgpu.ACC(...)`, `plgpu.SMEM(...)`, `plgpu.TMEM(...)`, ..."""

    kind: str  # "acc", "smem", "gmem", "tmem", "barrier"
    inner: ArrayVal
    init: Value | None = None  # `plgpu.ACC.init(x)`
    span: Span | None = field(default=None, compare=False)
    init_span: Span | None = field(default=None, compare=False)  # x in `plgpu.ACC.init(x)`
    transforms: tuple[TransformVal, ...] = ()
    attrs: tuple[tuple[str, bool], ...] = ()  # see RefVal.attrs
    arrivals: int | None = None  # a barrier's `num_arrivals` (None: unknown or not a barrier)
    # A `plgpu.ClusterBarrier`'s `collective_axes`, when they are names (None: unknown, or another
    # allocation)
    cluster_axes: tuple[str, ...] | None = None

    def describe(self) -> str:
        names = {"acc": "plgpu.ACC", "smem": "plgpu.SMEM", "gmem": "plgpu.GMEM",
                 "tmem": "plgpu.TMEM", "barrier": "plgpu.Barrier"}
        return f"{names.get(self.kind, self.kind)}({self.inner.aval()})"

    def to_ref(self, origin: Span | None, desc: str) -> RefVal:
        if self.kind == "acc":
            return RefVal(self.inner, "regs", "acc", origin=origin, origin_desc=desc)
        kind = self.kind if self.kind in ("tmem", "barrier") else "plain"
        space = "smem" if self.kind == "barrier" else self.kind  # barriers live in SMEM
        return RefVal(self.inner, space, kind, transforms=self.transforms, origin=origin,
                      origin_desc=desc, spec_span=self.span, attrs=self.attrs)


@dataclass(frozen=True)
class ShapeDtypeVal(Value):
    """`jax.ShapeDtypeStruct(shape, dtype)` (and Pallas' variants)."""

    array: ArrayVal

    def describe(self) -> str:
        return f"ShapeDtypeStruct({self.array.aval()})"


@dataclass(frozen=True)
class BlockSpecVal(Value):
    """A `BlockSpec`: block shape, memory space, transforms."""
    block_shape: tuple[Value, ...] | None
    memory_space: str | None
    transforms: tuple[TransformVal, ...] = ()
    index_map: Value | None = field(default=None, compare=False)  # traced with the grid indices
    delay_release: int | None = 0  # None: unknown
    collective_axes: bool | None = False  # non-empty collective_axes=? None: unknown
    span: Span | None = field(default=None, compare=False)


@dataclass(frozen=True, init=False)
class ApiVal(Value):
    """A JAX API object by canonical name, e.g. `plgpu.wgmma`, `pl.run_scoped`, `jnp.float32`."""

    name: str

    def __init__(self, name: str) -> None:
        self.__dict__["name"] = name  # (as Const's: one is made per API attribute read)

    def describe(self) -> str:
        return self.name


@dataclass(frozen=True)
class ModuleVal(Value):
    """A module of the JAX API (or another library) by canonical name."""
    name: str  # canonical module name, e.g. "plgpu", "jnp", "functools"
    # The module path it was imported as (`jax.experimental.pallas.mosaic_gpu`), when known:
    # only the public modules' own attributes are checked against the installed JAX.
    origin: str | None = field(default=None, compare=False)

    def describe(self) -> str:
        return f"module {self.name}"


@dataclass(eq=False)
class UserModuleVal(Value):
    """One of the user's own modules (`import mypkg.allocs as allocs`), read statically by
    `wgmma_lsp.program`: its module-level names, and its submodules when it is a package."""

    name: str  # dotted, as imported
    path: str  # its file (`__init__.py` for a package)
    names: dict[str, Value]
    submodule: Any = None  # (name) -> Value | None, for packages

    def attr(self, name: str) -> Value:
        v = self.names.get(name)
        if v is not None and not isinstance(v, Unknown):
            return v
        if self.submodule is not None:
            sub = self.submodule(name)
            if sub is not None:
                return sub
        return v if v is not None else UNKNOWN

    def describe(self) -> str:
        return f"module {self.name}"


@dataclass(eq=False)
class FuncVal(Value):
    """A user function with the environment it closes over."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    closure: Any  # interpret.env.Env
    name: str
    defaults: tuple[Value, ...] = ()
    kw_defaults: dict[str, Value] = field(default_factory=dict)
    bound_self: Value | None = None

    def describe(self) -> str:
        return f"function {self.name}"


@dataclass(eq=False)
class PartialVal(Value):
    """`functools.partial(func, *args, **kwargs)`."""
    func: Value
    args: tuple[Value, ...]
    kwargs: dict[str, Value]
    arg_spans: tuple[Span | None, ...] = ()

    def describe(self) -> str:
        return f"partial({self.func.describe()})"


@dataclass(eq=False)
class BoundMethod(Value):
    """`obj.name` for a method the models know (`x.astype`, `x.reshape`, `ref.at`)."""

    obj: Value
    name: str


@dataclass(eq=False)
class ClassVal(Value):
    """A class the user's code defines."""
    node: ast.ClassDef
    name: str
    fields: list[tuple[str, Value]]  # dataclass fields with their defaults (UNKNOWN if none)
    methods: dict[str, Value]
    is_dataclass: bool = False
    # Its base classes (values: user classes, API classes, unknowns) and what kind of class the
    # bases make it (interpret/classes.py): "" plain, "enum", "namedtuple", "pydantic".
    bases: tuple[Value, ...] = ()
    kind: str = ""
    frozen: bool = False
    validated: bool = False  # a pydantic dataclass: its __init__ validates (and converts) values
    # Made by another module's summary, which every analysis shares: assignments to its
    # attributes go to the assigning interpreter's `shared_writes` (as InstanceVal.shared).
    shared: bool = False
    compares_fields: bool = False  # a dataclass with eq=True (the default): == compares fields
    # How `jax.tree_util` registered it as a pytree node (models/pytrees.py): "" not registered,
    # "node_class" (its `tree_flatten`/`tree_unflatten`), "dataclass" (fields; `pytree_meta`
    # names the static ones, None: those marked `static` in their `field(metadata=...)`).
    pytree: str = ""
    pytree_data: tuple[str, ...] | None = None
    pytree_meta: tuple[str, ...] | None = None
    born: int = field(default_factory=next_born, repr=False)  # when its class statement ran
    # Its metaclass when it is a class of the user's (interpret/metaclasses.py): what its
    # subclasses' statements call.
    meta: Value | None = field(default=None, repr=False)

    def describe(self) -> str:
        return f"class {self.name}"


@dataclass(eq=False)
class InstanceVal(Value):
    """An object of a user class, with its attributes."""
    cls: ClassVal
    attrs: dict[str, Value]
    # Part of another module's summary, which every analysis shares: attribute writes go to the
    # writing interpreter's `shared_writes`, never into `attrs`.
    shared: bool = False
    born: int = field(default_factory=next_born, repr=False)  # when it was made (see next_born)

    def describe(self) -> str:
        return f"{self.cls.name} instance"


@dataclass(eq=False)
class Wrapped(Value):
    """An API call result that is itself callable, e.g. `pl.pallas_call(kernel, ...)`."""

    api: str
    func: Value
    kwargs: dict[str, Value]
    call_span: Span | None = None


def is_unknown(v: Value) -> bool:
    return isinstance(v, (Unknown, Opaque))


def tree_leaves(v: Value, leaf: Callable[[Value], bool], dicts: bool = True) -> list[Value] | None:
    """The leaves of a tuple/list (and, with `dicts`, dict) pytree, in order; None when the
    structure is unknown or a leaf is not one `leaf` accepts."""
    if isinstance(v, TupleVal):
        out: list[Value] = []
        for x in v.items:
            sub = tree_leaves(x, leaf, dicts)
            if sub is None:
                return None
            out.extend(sub)
        return out
    if dicts and isinstance(v, DictVal):
        return tree_leaves(TupleVal(tuple(x for _, x in v.items)), leaf, dicts)
    return [v] if leaf(v) else None


def as_int(v: Value) -> int | None:
    if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return v.value
    return None


def as_dim(v: Value) -> Dim:
    """A value used as an array dimension: an int, a symbol, or None (unknown)."""
    if isinstance(v, Const) and isinstance(v.value, int) and not isinstance(v.value, bool):
        return v.value
    if isinstance(v, SymInt):
        return v.dim
    if isinstance(v, Opaque):
        return Sym.var(v.name)
    return None  # a traced scalar, or anything else: unknown


def dim_value(d: Dim) -> Value:
    if d is None:
        return UNKNOWN
    if isinstance(d, int):
        return Const(d)
    return SymInt(d)


def as_shape(v: Value) -> tuple[Dim, ...] | None:
    """A value used as a shape: a tuple/list of dims, or a single int."""
    if isinstance(v, TupleVal):
        return tuple(as_dim(i) for i in v.items)
    if isinstance(v, Opaque) and v.name.endswith(".shape"):
        return None  # an unknown array's shape: its rank is unknown too
    d = as_dim(v)
    if d is not None:
        return (d,)
    return None


def join(a: Value, b: Value) -> Value:
    """The least precise value that covers both (used where control flow merges)."""
    if a is b:
        return a
    if getattr(a, "spoiled", False) or getattr(b, "spoiled", False):
        return UNKNOWN  # a container changed in a way not followed (interpret/mutation.py)
    if a == b:
        return a
    if isinstance(a, ArrayVal) and isinstance(b, ArrayVal):
        shape = None
        if a.shape is not None and b.shape is not None and len(a.shape) == len(b.shape):
            shape = tuple(x if D.equal(x, y) else None for x, y in zip(a.shape, b.shape))
        dtype = a.dtype if a.dtype == b.dtype else None
        return ArrayVal(shape, dtype, a.layout if a.layout == b.layout else None, jax=a.jax and b.jax)
    if isinstance(a, RefVal) and isinstance(b, RefVal) and a.kind == b.kind:
        inner = join(a.inner, b.inner)
        assert isinstance(inner, ArrayVal)
        return replace(a, inner=inner, space=a.space if a.space == b.space else None,
                       transforms=a.transforms if a.transforms == b.transforms else (TransformVal("unknown"),),
                       base=a.base if a.base == b.base else None,
                       attrs=a.attrs if a.attrs == b.attrs else ())
    if isinstance(a, TupleVal) and isinstance(b, TupleVal) and len(a.items) == len(b.items) \
            and a.is_list == b.is_list:
        return TupleVal(tuple(join(x, y) for x, y in zip(a.items, b.items)), a.is_list)
    if isinstance(a, Opaque) and isinstance(b, Opaque) and a.name == b.name:
        return a
    if is_int_like(a) and is_int_like(b):
        return UNKNOWN_INT  # two different ints: still an int
    return UNKNOWN


@dataclass(frozen=True)
class DSliceVal(Value):
    """`pl.ds(start, size)` / `pl.Slice`: a dynamic slice of static size."""

    start: Value
    size: Value
    stride: Value = Const(1)

    def describe(self) -> str:
        return f"pl.ds({self.start.describe()}, {self.size.describe()})"


@dataclass(frozen=True)
class ProductVal(TupleVal):
    """`itertools.product(axis, ...)` over known values: its items, and the axes they came from
    (so that a sweep cut short by the budget still tries every value of every axis first)."""

    axes: tuple[int, ...] = ()  # the length of each axis

    def covering_order(self) -> list[int]:
        """Item indices: first a set covering every value of every axis, then the rest."""
        n = len(self.items)
        if not self.axes or n == 0:
            return list(range(n))
        first: list[int] = []
        for i in range(max(self.axes)):
            index = 0
            for length in self.axes:
                index = index * length + i % length
            if index not in first:
                first.append(index)
        seen = set(first)
        return first + [i for i in range(n) if i not in seen]
