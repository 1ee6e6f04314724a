"""Device meshes and how `jax.shard_map` splits its arguments over them.

Mirrors `jax._src.mesh` / `jax._src.shard_map`:

- a mesh is its axis names and sizes: `jax.make_mesh(axis_shapes, axis_names)`,
  `jax.sharding.Mesh(devices, axis_names)` over `jax.devices()` (one axis of
  `jax.device_count()` devices) or `mesh_utils.create_device_mesh(shape)`; sizes may be
  symbolic (`(jax.device_count(),)`);
- `jax.set_mesh(mesh)` / `jax.sharding.use_mesh(mesh)` make it the mesh of later
  `shard_map`s that name none (kept in the calling scope, as the code that follows sees it);
- `jax.sharding.reshard(x, P(...))` and `jax.device_put(x, NamedSharding(mesh, P(...)))` give
  an array a sharding, which `shard_map`'s default `in_specs=Infer` reads;
- inside `shard_map` each argument is one shard: a dimension split over mesh axes has the global
  size divided by the product of their sizes (`_shard_aval`: JAX requires it to divide evenly;
  when it does not, or cannot be decided, the size stays unknown and nothing is reported here).
"""

from __future__ import annotations

from dataclasses import dataclass

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.call import Call
from wgmma_lsp.interpret.values import (
    UNKNOWN, ArrayVal, Const, TupleVal, Value, Wrapped, as_dim, dim_value,
)
from wgmma_lsp.models.collectives import DEVICE_COUNT
from wgmma_lsp.models.registry import model

#: The hidden name under which `jax.set_mesh` keeps the current mesh in the calling scope.
CURRENT_MESH = "<jax.set_mesh>"


@dataclass(frozen=True)
class ShardedArrayVal(ArrayVal):
    """An array with a known sharding (its PartitionSpec over the current mesh)."""

    spec: Value | None = None


def mesh_value(axes: list[tuple[str, D.Dim]]) -> Value:
    return Wrapped("jax.make_mesh", UNKNOWN, {"axes": TupleVal(tuple(
        TupleVal((Const(a), dim_value(n))) for a, n in axes))})


def mesh_axes(mesh: Value) -> dict[str, D.Dim]:
    """A mesh's axis sizes by name ({} when the mesh is not known)."""
    if not (isinstance(mesh, Wrapped) and mesh.api == "jax.make_mesh"):
        return {}
    out: dict[str, D.Dim] = {}
    for pair in mesh.kwargs["axes"].items:  # type: ignore[attr-defined]
        name, size = pair.items  # type: ignore[attr-defined]
        out[name.value] = as_dim(size)
    return out


def _names(v: Value) -> list[str] | None:
    items = v.items if isinstance(v, TupleVal) else None
    if items is None:
        return None
    out = [n.value for n in items if isinstance(n, Const) and isinstance(n.value, str)]
    return out if len(out) == len(items) else None


def _make(names: list[str] | None, sizes: list[D.Dim] | None) -> Value:
    if names is None or sizes is None or len(names) != len(sizes) or any(s is None for s in sizes):
        return UNKNOWN
    return mesh_value(list(zip(names, sizes)))


@model("jax.make_mesh", "jax.sharding.make_mesh")
def _make_mesh(call: Call) -> Value:
    """`jax.make_mesh(axis_shapes, axis_names, *, axis_types=None, devices=None)`."""
    shapes = call.get(0, "axis_shapes")
    sizes = [as_dim(v) for v in shapes.items] if isinstance(shapes, TupleVal) else None
    return _make(_names(call.get(1, "axis_names")), sizes)


def _device_grid(v: Value) -> list[D.Dim] | None:
    """The shape of a devices array: `jax.devices()` (1-D), `create_device_mesh(shape)`."""
    if isinstance(v, Wrapped) and v.api == "jax.devices":
        return [DEVICE_COUNT]
    if isinstance(v, Wrapped) and v.api == "mesh_utils.create_device_mesh":
        shape = v.kwargs.get("shape")
        if isinstance(shape, TupleVal):
            dims = [as_dim(s) for s in shape.items]
            return dims if all(d is not None for d in dims) else None
    return None


@model("jax.sharding.Mesh")
def _mesh(call: Call) -> Value:
    """`jax.sharding.Mesh(devices, axis_names)`: the devices array's shape, axis by axis."""
    names = call.get(1, "axis_names")
    if isinstance(names, Const) and isinstance(names.value, str):
        names = TupleVal((names,))
    return _make(_names(names), _device_grid(call.get(0, "devices")))


@model("jax.experimental.mesh_utils.create_device_mesh")
def _create_device_mesh(call: Call) -> Value:
    shape = call.get(0, "mesh_shape")
    if not isinstance(shape, TupleVal) or len(call.args) > 1 or call.kwargs.keys() - {"mesh_shape"}:
        return UNKNOWN
    return Wrapped("mesh_utils.create_device_mesh", UNKNOWN, {"shape": shape})


@model("jax.set_mesh", "jax.sharding.set_mesh", "jax.sharding.use_mesh")
def _set_mesh(call: Call) -> Value:
    """`jax.set_mesh(mesh)`: the mesh of the `shard_map`s that follow in this scope."""
    if call.env is not None:
        call.env.vars[CURRENT_MESH] = call.get(0, "mesh")
    return UNKNOWN


def current_mesh(call: Call, given: Value | None) -> Value:
    """The mesh a `shard_map` runs over: its own `mesh=`, else the one `jax.set_mesh` set."""
    if given is not None and not (isinstance(given, Const) and given.value is None):
        return given
    found = call.env.lookup(CURRENT_MESH) if call.env is not None else None
    return found if found is not None else UNKNOWN


@model("jax.sharding.reshard")
def _reshard(call: Call) -> Value:
    """`jax.sharding.reshard(x, spec)`: x with that sharding over the current mesh."""
    x, spec = call.get(0, "xs"), call.get(1, "out_shardings")
    if isinstance(x, ArrayVal):
        return ShardedArrayVal(x.shape, x.dtype, x.layout, spec=_spec_of(spec))
    return UNKNOWN


@model("jax.sharding.NamedSharding")
def _named_sharding(call: Call) -> Value:
    return Wrapped("jax.sharding.NamedSharding", UNKNOWN, {"spec": call.get(1, "spec")})


@model("jax.device_put")
def _device_put(call: Call) -> Value:
    """`jax.device_put(x, NamedSharding(mesh, spec))`: x with that sharding (other devices or
    shardings: x as it was, its sharding unknown)."""
    x, where = call.get(0, "x"), call.get(1, "device", UNKNOWN)
    if not isinstance(x, ArrayVal):
        return UNKNOWN
    spec = _spec_of(where)
    return ShardedArrayVal(x.shape, x.dtype, x.layout, spec=spec, jax=True) if spec is not None \
        else ArrayVal(x.shape, x.dtype, x.layout, jax=True)


def is_partition_spec(v: Value) -> bool:
    return isinstance(v, Wrapped) and v.api == "jax.sharding.PartitionSpec"


def _spec_of(v: Value) -> Value | None:
    if isinstance(v, Wrapped) and v.api == "jax.sharding.NamedSharding":
        v = v.kwargs["spec"]
    return v if is_partition_spec(v) else None


def inferred_spec(v: Value) -> Value:
    """`in_specs=Infer`: an argument's own sharding (unknown when it has none we know)."""
    if isinstance(v, ShardedArrayVal) and v.spec is not None:
        return v.spec
    return UNKNOWN


def exact_div(a: D.Dim, b: D.Dim) -> D.Dim:
    """a / b: exact when b divides a for every value of the symbols (`1024*n / n` is 1024);
    None when b is a number that does not divide a (JAX raises); by its expression when b is
    symbolic and that cannot be decided."""
    if a is None or b is None:
        return None
    if isinstance(b, int):
        if b <= 0:
            return None
        q = D.floordiv(a, b)
        return q if q is not None and D.equal(D.mul(q, b), a) is True else None
    # b symbolic: a constant multiple of b divides exactly; otherwise shard_map itself requires
    # b to divide a (it raises when not), so the shard's size is the quotient, a size named by
    # its expression (`16384 // jax.device_count()`).
    ta, ca = (dict(a.terms), a.const) if isinstance(a, D.Sym) else ({}, a)
    tb, cb = dict(b.terms), b.const
    if ta.keys() == tb.keys():
        # a in terms of b's own names: an exact multiple, or (`64*n + 1` over n) not one
        name = next(iter(tb))
        if ta[name] % tb[name]:
            return None
        k = ta[name] // tb[name]
        if k > 0 and D.equal(D.mul(b, k), a) is True:
            return k
        return None
    return D.floordiv(a, b)


def shard_shape(shape: tuple | None, spec: Value, axes: dict[str, D.Dim]) -> tuple | None:
    """A shard's shape: a dimension whose spec entry is None (or that the spec does not reach)
    keeps its size; one split over mesh axes is divided by their sizes' product (unknown when
    a size is unknown or does not divide it)."""
    if shape is None or not is_partition_spec(spec):
        return None
    entries = spec.kwargs["entries"]
    assert isinstance(entries, TupleVal)
    if len(entries.items) > len(shape):
        return None  # JAX rejects a spec longer than the array's rank
    out = []
    for i, dim in enumerate(shape):
        entry = entries.items[i] if i < len(entries.items) else Const(None)
        if isinstance(entry, Const) and entry.value is None:
            out.append(dim)
            continue
        out.append(exact_div(dim, _axes_product(entry, axes)))
    return tuple(out)


def _axes_product(name: Value, axes: dict[str, D.Dim]) -> D.Dim:
    """The size of one mesh axis (a name) or the product of several (a tuple of names); None
    when a name is not a known axis."""
    names = name.items if isinstance(name, TupleVal) else (name,)
    size: D.Dim = 1
    for n in names:
        if not (isinstance(n, Const) and isinstance(n.value, str) and n.value in axes):
            return None
        size = D.mul(size, axes[n.value])
    return size


def axis_size(name: Value, axes: dict[str, D.Dim]) -> Value:
    """`lax.axis_size(name)` over known mesh axes (a tuple of names: the product)."""
    size = _axes_product(name, axes)
    return dim_value(size) if size is not None else UNKNOWN


