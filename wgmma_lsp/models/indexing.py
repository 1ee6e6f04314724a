"""Static indexing: the shape `x[idx]` has, for arrays and refs alike (NumPy basic indexing)."""

from __future__ import annotations

from wgmma_lsp.interpret import dims as D
from wgmma_lsp.interpret.dims import Dim
from wgmma_lsp.interpret.values import (
    ArrayVal, Const, DSliceVal, SliceVal, SymInt, TupleVal, Value, as_dim,
)


def index_items(index: Value) -> list[Value]:
    if isinstance(index, TupleVal) and not index.is_list:
        return list(index.items)
    return [index]


def _slice_len(s: SliceVal, d: Dim) -> Dim:
    """The length of `x[start:stop:step]` along a dimension of size d (None: unknown)."""
    start, stop, step = s.start, s.stop, s.step
    if not isinstance(step, Const):
        return None
    if step.value not in (None, 1):
        if isinstance(d, int) and isinstance(step.value, int) and all(
                isinstance(x, Const) and (x.value is None or isinstance(x.value, int)) for x in (start, stop)):
            return len(range(d)[slice(start.value, stop.value, step.value)])  # type: ignore[union-attr]
        return None
    lo: Dim = 0 if isinstance(start, Const) and start.value is None else as_dim(start)
    hi: Dim = d if isinstance(stop, Const) and stop.value is None else as_dim(stop)
    if isinstance(d, int) and isinstance(lo, int) and isinstance(hi, int):
        return len(range(d)[lo:hi])  # Python's clamping and negative indices
    if isinstance(lo, int) and lo < 0 or isinstance(hi, int) and hi < 0:
        return None
    return D.sub(hi, lo)


def is_whole(index: Value) -> bool:
    """`x[...]`: the index is a lone Ellipsis."""
    return isinstance(index, Const) and index.value is Ellipsis


def _unit(v: Value) -> bool:
    return isinstance(v, Const) and type(v.value) is int and v.value == 1


def kept_dims(ndim: int, index: Value) -> list[int] | None:
    """For basic indexing of `ndim` dimensions: per result dimension, the indexed dimension it
    is (integer indices drop theirs); None where this is not known (a `None`, an array, two
    ellipses, a step)."""
    items = index_items(index)
    if sum(1 for i in items if isinstance(i, Const) and i.value is Ellipsis) > 1:
        return None
    consumed = sum(1 for i in items if not (isinstance(i, Const) and i.value is Ellipsis))
    if consumed > ndim:
        return None
    out: list[int] = []
    d = 0
    for i in items:
        if isinstance(i, Const) and i.value is Ellipsis:
            out.extend(range(d, d + ndim - consumed))
            d += ndim - consumed
        elif isinstance(i, SliceVal) and isinstance(i.step, Const) and i.step.value in (None, 1) \
                or isinstance(i, DSliceVal) and _unit(i.stride):
            out.append(d)
            d += 1
        elif isinstance(i, Const) and type(i.value) is int or isinstance(i, SymInt) \
                or isinstance(i, ArrayVal) and i.shape == () and i.dtype is not None:
            d += 1  # dropped
        else:
            return None
    out.extend(range(d, ndim))
    return out


def index_shape(shape: tuple[Dim, ...] | None, index: Value) -> tuple[Dim, ...] | None:
    """The result shape of basic indexing, or None if it cannot be known statically."""
    if shape is None:
        return None
    items = index_items(index)
    n_ellipsis = sum(1 for i in items if isinstance(i, Const) and i.value is Ellipsis)
    if n_ellipsis > 1:
        return None
    consumed = sum(1 for i in items if not (isinstance(i, Const) and (i.value is None or i.value is Ellipsis)))
    if consumed > len(shape):
        return None
    expanded: list[Value] = []
    for i in items:
        if isinstance(i, Const) and i.value is Ellipsis:
            expanded.extend([SliceVal(Const(None), Const(None), Const(None))] * (len(shape) - consumed))
        else:
            expanded.append(i)
    out: list[Dim] = []
    dim_i = 0
    for i in expanded:
        if isinstance(i, Const) and i.value is None:
            out.append(1)
            continue
        if dim_i >= len(shape):
            return None
        d = shape[dim_i]
        dim_i += 1
        if isinstance(i, Const) and isinstance(i.value, int) and not isinstance(i.value, bool):
            continue  # an integer index drops the dimension
        if isinstance(i, SymInt):
            continue
        if isinstance(i, ArrayVal):
            if i.shape == () and i.dtype is not None:
                continue  # a scalar (traced) integer index
            return None
        if isinstance(i, SliceVal):
            out.append(_slice_len(i, d))
            continue
        if isinstance(i, DSliceVal):
            out.append(as_dim(i.size))
            continue
        return None
    out.extend(shape[dim_i:])
    return tuple(out)


def is_trivial_index(index: Value, shape: tuple[Dim, ...] | None) -> bool | None:
    """Mirrors `jax._src.pallas.mosaic_gpu.core.is_trivial_index`: does idx select everything?"""
    if shape is None:
        return None

    def full_slice(i: Value, d: Dim) -> bool | None:
        if isinstance(i, SliceVal):
            start_ok = isinstance(i.start, Const) and i.start.value in (0, None)
            step_ok = isinstance(i.step, Const) and i.step.value in (1, None)
            if isinstance(i.stop, Const) and i.stop.value is None:
                stop_ok: bool | None = True
            else:
                stop_ok = D.equal(as_dim(i.stop), d)
            if not isinstance(i.start, Const) or not isinstance(i.step, Const):
                return None
            if not start_ok or not step_ok or stop_ok is False:
                return False
            return stop_ok
        if isinstance(i, DSliceVal):
            s = i.start
            if isinstance(s, Const) and s.value == 0:
                return D.equal(as_dim(i.size), d)
            return None if not isinstance(s, Const) else False
        if isinstance(i, Const):
            return False
        return None

    if isinstance(index, TupleVal) and not index.is_list:
        result: bool | None = True
        for d, i in zip(shape, index.items):
            r = full_slice(i, d)
            if r is False:
                return False
            if r is None:
                result = None
        return result
    if isinstance(index, Const) and index.value is Ellipsis:
        return True
    if len(shape) == 1:
        return full_slice(index, shape[0])
    if isinstance(index, (SliceVal, DSliceVal, Const)):
        return False
    return None


def gather_shape(shape: tuple[Dim, ...] | None, index: Value) -> tuple[Dim, ...] | None:
    """`x[idx]` with one integer array among basic indices (NumPy's advanced indexing, as
    jnp does it): the index array's shape takes the place of the dimension it indexes. Any
    other mix (two arrays, a bool mask, an unknown) gives None."""
    from wgmma_lsp.interpret import dtypes as T
    from wgmma_lsp.interpret.values import ArrayVal, DSliceVal, SliceVal, SymInt

    items = list(index.items) if isinstance(index, TupleVal) and not index.is_list else [index]
    arrays = [k for k, i in enumerate(items) if isinstance(i, ArrayVal)]
    if shape is None or len(arrays) != 1:
        return None
    k = arrays[0]
    idx = items[k]
    assert isinstance(idx, ArrayVal)
    if idx.shape is None or idx.dtype is None or idx.dtype.symbolic or not T.is_integer(idx.dtype) \
            or any(isinstance(i, Const) and i.value is Ellipsis for i in items) or k >= len(shape):
        return None
    # the dimensions before and after the array index are basic: index them as a full slice
    full = SliceVal(Const(None), Const(None), Const(None))
    rest = index_shape(shape, TupleVal(tuple(full if j == k else i for j, i in enumerate(items))))
    if rest is None:
        return None
    # the output dimensions the indices before it make: slices and new axes (ints drop theirs)
    before = 0
    for i in items[:k]:
        if isinstance(i, (SliceVal, DSliceVal)) or (isinstance(i, Const) and i.value is None):
            before += 1
        elif not (isinstance(i, SymInt) or (isinstance(i, Const) and type(i.value) is int)):
            return None
    return (*rest[:before], *idx.shape, *rest[before + 1:])
