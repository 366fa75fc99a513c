"""Indexing, reshaping, joining and allocation: `x[...]`, `set_subtensor`,
`inc_subtensor`, `reshape`, `flatten`, `concatenate`/`join`, `stack`, `alloc`, `zeros`,
`ones`, `arange`, `take` and `tensordot` (Theano's names and semantics).

Indices, slice bounds and lengths may be Python ints or symbolic 0-d integers (for
example `x.shape[0]` or an `iscalar`); symbolic ones become 0-d `int64` operands of the
`ag` op, read at run time by the shape function (see `arignote.lowering.loops.ag_indexing`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configuration import config
from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic

_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _is_int_scalar(v: Any) -> bool:
    return isinstance(v, Variable) and v.ndim == 0 and v.dtype in _INT_DTYPES


def _python_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _entry(v: Any, what: str, dynamic: list[Variable], allow_none: bool = True) -> int:
    """The static encoding of one entry; a symbolic one is appended to `dynamic`."""
    if v is None and allow_none:
        return ag.SLICE_NONE
    if _python_int(v):
        return int(v)
    if isinstance(v, Variable):
        if not _is_int_scalar(v):
            raise TypeError(f"{what} must be an integer scalar, got {v} of type {v.type}")
        dynamic.append(basic.cast(v, "int64"))
        return ag.DYNAMIC_VALUE
    raise TypeError(f"{what} must be an int, a symbolic integer scalar or None, got {v!r}")


_SLICE_LIMIT = 2**62
"""A static slice part beyond +-2**62 selects what +-2**62 selects: no axis has that many
elements (an array of them would need more memory than a 64-bit machine addresses).
Clamping keeps every Python int, however large, inside int64 and clear of the encoding's
sentinels (`ag.DYNAMIC_VALUE` and `ag.SLICE_NONE` are -2**63 and -2**63 + 1)."""


def _slice_part(v: Any, what: str, dynamic: list[Variable]) -> int:
    """The encoding of a slice start, stop or step (a static int clamped to
    `+-_SLICE_LIMIT`, which selects the same elements of any axis)."""
    if _python_int(v):
        return max(-_SLICE_LIMIT, min(_SLICE_LIMIT, int(v)))
    return _entry(v, what, dynamic)


def _index(v: Any, axis: int, dynamic: list[Variable]) -> int:
    """The encoding of an integer index; one beyond `+-_SLICE_LIMIT` is out of bounds
    for every axis."""
    if _python_int(v) and not -_SLICE_LIMIT <= v <= _SLICE_LIMIT:
        raise IndexError(f"index {int(v)} is out of bounds for axis {axis}")
    return _entry(v, "an index", dynamic, allow_none=False)


def _build(op_class: type, *args: Any, **kwargs: Any) -> Variable:
    try:
        return apply_op(op_class(*args, **kwargs))
    except ValueError as e:
        message = str(e)
        if "out of bounds" in message:
            raise IndexError(message) from None
        raise


# --- x[...] ------------------------------------------------------------------------------


def _is_advanced(k: Any) -> bool:
    if isinstance(k, Variable):
        return k.ndim > 0 or k.dtype == "bool"
    return isinstance(k, list | np.ndarray) or isinstance(k, bool | np.bool_)


def _is_mask(k: Any) -> bool:
    """A boolean index (NumPy's: a bool array, or a Python bool)."""
    if isinstance(k, Variable):
        return k.dtype == "bool"
    if isinstance(k, bool | np.bool_):
        return True
    return isinstance(k, list | np.ndarray) and np.asarray(k).dtype == np.bool_


def _axes_used(k: Any) -> int:
    """How many axes of the indexed tensor the key entry `k` consumes."""
    if k is None or k is Ellipsis:
        return 0
    if _is_mask(k):
        return k.ndim if isinstance(k, Variable) else np.ndim(k)
    return 1


def _as_index_array(k: Any) -> Variable:
    v = k if isinstance(k, Variable) else basic.constant(np.asarray(k, dtype=np.int64))
    if v.dtype not in _INT_DTYPES:
        raise TypeError(f"an index array must hold integers, got {v} of dtype {v.dtype}")
    return v


def _expand_key(key: Any, ndim: int) -> list[Any]:
    """`key` as a list with the Ellipsis expanded (None entries kept)."""
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(_axes_used(k) for k in items)
    if used > ndim:
        raise IndexError(f"too many indices for a tensor of {ndim} dimensions: {used}")
    if any(k is Ellipsis for k in items):
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items[at : at + 1] = [slice(None)] * (ndim - used)
        return items
    return items + [slice(None)] * (ndim - used)


def getitem(x: Any, key: Any) -> Variable:
    """`x[key]`: basic indexing (ints, slices, None, `...`, with symbolic integer scalars
    anywhere an int goes) or integer-array indexing (`x[ivector]`, `x[rows, cols]`,
    `x[:, ivector]`)."""
    v = basic.as_tensor_variable(x)
    items = _expand_key(key, v.ndim)
    if any(_is_advanced(k) for k in items):
        return _advanced_getitem(v, items)
    kinds, starts, stops, steps = [], [], [], []
    dynamic: list[Variable] = []
    new_axes: list[int] = []  # result positions of None entries
    out_axis = 0
    for k in items:
        if k is None:
            new_axes.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, slice):
            kinds.append(ag.SLICE)
            starts.append(_slice_part(k.start, "a slice start", dynamic))
            stops.append(_slice_part(k.stop, "a slice stop", dynamic))
            steps.append(_slice_part(k.step, "a slice step", dynamic))
            if steps[-1] == 0:
                raise ValueError("slice step cannot be zero")
            out_axis += 1
            continue
        kinds.append(ag.INDEX)
        starts.append(_index(k, len(kinds) - 1, dynamic))
        stops.append(ag.SLICE_NONE)
        steps.append(ag.SLICE_NONE)
    trivial = all(k == ag.SLICE for k in kinds) and set(starts + stops + steps) <= {ag.SLICE_NONE}
    out = (
        v
        if trivial
        else _build(
            ag.SubtensorOp, v.value, kinds, starts, stops, steps, [d.value for d in dynamic]
        )
    )
    if new_axes:
        kept = iter(range(out.ndim))
        pattern = ["x" if i in new_axes else next(kept) for i in range(out.ndim + len(new_axes))]
        out = basic.dimshuffle(out, *pattern)
    return out


def _advanced_getitem(v: Variable, items: list[Any]) -> Variable:
    """Integer-array (and boolean-mask) indexing, with slices and ints beside the arrays:
    the slices first (a basic subtensor, which keeps every axis), then the arrays. The
    result remembers `(v, items)` so that `set_subtensor`/`inc_subtensor` can update it."""
    items = _masks_to_indices(v, items)
    sliced_items = [k if isinstance(k, slice) else slice(None) for k in items]
    sliced = getitem(v, tuple(sliced_items))
    array_items = [slice(None) if isinstance(k, slice) else k for k in items]
    out = _gather(sliced, array_items)
    out._indexed_from = (v, items)  # type: ignore[attr-defined]
    return out


def _masks_to_indices(v: Variable, items: list[Any]) -> list[Any]:
    """`items` with each boolean mask replaced by the index vectors of its nonzero
    entries (NumPy's rule), after a run-time check that the mask's shape is that of the
    axes it indexes (an IndexError-like ValueError otherwise)."""
    if any(k is None for k in items):
        raise AdvancedIndexingError("None (newaxis) combined with integer-array indexing")
    result: list[Any] = []
    axis = 0
    for k in items:
        if not _is_mask(k):
            result.append(k)
            axis += 1
            continue
        mask = k if isinstance(k, Variable) else basic.constant(np.asarray(k, dtype=bool))
        if mask.ndim == 0:
            raise AdvancedBooleanIndexingError("a 0-d boolean index (x[True]) is not supported")
        from arignote.tensor import shape_ops  # (it imports this module)

        lengths = [shape_i(v, a) for a in range(axis, axis + mask.ndim)]
        checked = _checked_mask(mask, lengths)
        result.extend(shape_ops.nonzero(checked))
        axis += mask.ndim
    return result


def _checked_mask(mask: Variable, lengths: Sequence[Any]) -> Variable:
    """`mask`, checked at run time to have the lengths of the axes it indexes."""
    from arignote.tensor import shape_ops

    static = ag.tensor_type(mask.value).get_shape()
    for axis, (m, n) in enumerate(zip(static, lengths, strict=True)):
        if m != ag.DYNAMIC and isinstance(n, int) and m != n:
            raise IndexError(
                f"boolean index did not match indexed array along dimension {axis}; "
                f"dimension is {n} but corresponding boolean dimension is {m}"
            )
    return shape_ops.specify_shape(mask, list(lengths))


def _gather(v: Variable, items: list[Any]) -> Variable:
    """`v[items]` where `items` holds index arrays, ints and full slices only."""
    positions, pattern = _advanced_layout(v, items)
    if not all(_is_advanced(items[i]) or _is_int_index(items[i]) for i in positions):
        raise TypeError(f"unsupported index entries {[items[i] for i in positions]}")
    indices = [_as_index_array(items[i]) for i in positions]
    rest = [a for a in range(v.ndim) if a not in positions]
    moved = (
        basic.dimshuffle(v, *positions, *rest) if positions != list(range(len(positions))) else v
    )
    out = _build(ag.AdvancedSubtensorOp, moved.value, [i.value for i in indices])
    return out if pattern is None else basic.dimshuffle(out, *pattern)


def _advanced_layout(v: Variable, items: list[Any]) -> tuple[list[int], list[int] | None]:
    """The axes the index arrays take, and the dimshuffle that puts the gathered axes
    (first in `ag.advanced_subtensor`'s result) where NumPy puts them: in place of the
    arrays when they are adjacent, else first (None when no move is needed)."""
    positions = [i for i, k in enumerate(items) if not _is_full_slice(k)]
    contiguous = positions == list(range(positions[0], positions[0] + len(positions)))
    first = positions[0] if contiguous else 0
    if first == 0:
        return positions, None
    index_shapes = [_index_rank(items[i]) for i in positions]
    index_rank = max(index_shapes)
    rank = index_rank + v.ndim - len(positions)
    pattern = [
        *range(index_rank, index_rank + first),
        *range(index_rank),
        *range(index_rank + first, rank),
    ]
    return positions, pattern


def _index_rank(k: Any) -> int:
    return k.ndim if isinstance(k, Variable) else np.ndim(k)


def _is_full_slice(k: Any) -> bool:
    return isinstance(k, slice) and k.start is None and k.stop is None and k.step in (None, 1)


def _is_int_index(k: Any) -> bool:
    return _python_int(k) or _is_int_scalar(k)


def take(a: Any, indices: Any, axis: int | None = None, mode: str = "raise") -> Variable:
    """`numpy.take` with integer indices (`axis=None` takes from the flattened `a`);
    `mode` "raise" (an index out of range is an IndexError at run time), "wrap" or
    "clip" (Theano's signature)."""
    v = basic.as_tensor_variable(a)
    if axis is None:
        v, axis = flatten(v), 0
    if not _python_int(axis) or not -v.ndim <= axis < v.ndim:
        raise IndexError(f"take: axis {axis!r} is out of range for {v.ndim} dimensions")
    axis = int(axis) % v.ndim
    index = _as_index_array(indices)
    if mode == "wrap":
        index = basic.mod(index, basic.shape_i(v, axis))
    elif mode == "clip":
        index = basic.clip(basic.cast(index, "int64"), 0, basic.shape_i(v, axis) - 1)
    elif mode != "raise":
        raise ValueError(f"take: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    return getitem(v, (slice(None),) * axis + (index,))


# --- set_subtensor / inc_subtensor -----------------------------------------------------


def _update(x_sub: Variable, y: Any, inc: bool) -> Variable:
    what = "inc_subtensor" if inc else "set_subtensor"
    if isinstance(x_sub, Variable) and hasattr(x_sub, "_indexed_from"):
        return _advanced_update(x_sub, y, inc, what)
    op = x_sub.value.owner if isinstance(x_sub, Variable) else None
    if isinstance(op, ag.SubtensorOp):
        x = x_sub.owner.inputs[0]  # type: ignore[union-attr]
        value = _update_value(y, x, what)
        op_class = ag.IncSubtensorOp if inc else ag.SetSubtensorOp
        kinds, starts, stops, steps = zip(*op.entries(), strict=True)
        return _build(op_class, x.value, value.value, kinds, starts, stops, steps, list(op.dynamic))
    if isinstance(op, ag.AdvancedSubtensorOp):
        x = x_sub.owner.inputs[0]  # type: ignore[union-attr]
        value = _update_value(y, x, what)
        op_class = ag.AdvancedIncSubtensorOp if inc else ag.AdvancedSetSubtensorOp
        return _build(op_class, x.value, value.value, list(op.indices))
    raise TypeError(
        f"{what}: the first argument must be an indexed tensor such as x[1:3] or x[ivector] "
        f"(without a transpose or newaxis of the result), got {x_sub}"
    )


def _advanced_update(x_sub: Variable, y: Any, inc: bool, what: str) -> Variable:
    """The update of an advanced index `x_sub = v[items]`: the arrays scattered into
    the slice of `v` the slices select (`v` itself when there are none), and that slice
    set back into `v`."""
    v, items = x_sub._indexed_from  # type: ignore[attr-defined]
    value = _update_value(y, v, what)
    array_items = [slice(None) if isinstance(k, slice) else k for k in items]
    if all(_is_full_slice(k) or not isinstance(k, slice) for k in items):
        return _scatter(v, array_items, value, inc)
    sliced = getitem(v, tuple(k if isinstance(k, slice) else slice(None) for k in items))
    return _update(sliced, _scatter(sliced, array_items, value, inc), inc=False)


def _inverse(pattern: Sequence[int]) -> list[int]:
    inverse = [0] * len(pattern)
    for i, p in enumerate(pattern):
        inverse[p] = i
    return inverse


def _scatter(v: Variable, items: list[Any], value: Variable, inc: bool) -> Variable:
    """`v` with `v[items]` (index arrays, ints and full slices) set to, or incremented
    by, `value` (broadcast to the indexed shape, in NumPy's layout of `v[items]`)."""
    positions, pattern = _advanced_layout(v, items)
    indices = [_as_index_array(items[i]) for i in positions]
    order = [*positions, *(a for a in range(v.ndim) if a not in positions)]
    moved = basic.dimshuffle(v, *order)
    rank = max(_index_rank(items[i]) for i in positions) + v.ndim - len(positions)
    if value.ndim < rank:
        value = basic.dimshuffle(value, *(["x"] * (rank - value.ndim)), *range(value.ndim))
    if pattern is not None and value.ndim == rank:
        value = basic.dimshuffle(value, *_inverse(pattern))
    op_class = ag.AdvancedIncSubtensorOp if inc else ag.AdvancedSetSubtensorOp
    out = _build(op_class, moved.value, value.value, [i.value for i in indices])
    return basic.dimshuffle(out, *_inverse(order))


def _update_value(y: Any, x: Variable, what: str) -> Variable:
    v = y if isinstance(y, Variable) else basic.constant(y, dtype=x.dtype)
    if v.dtype != x.dtype:
        v = basic.cast(v, x.dtype)
    return v


def set_subtensor(
    x: Variable, y: Any, inplace: bool = False, tolerate_inplace_aliasing: bool = False
) -> Variable:
    """A new tensor: the tensor `x` indexes, with `x`'s elements replaced by `y` (broadcast),
    e.g. `set_subtensor(a[1:3], 0)` (Theano's `set_subtensor`)."""
    return _update(x, y, inc=False)


def inc_subtensor(
    x: Variable,
    y: Any,
    inplace: bool = False,
    set_instead_of_inc: bool = False,
    tolerate_inplace_aliasing: bool = False,
) -> Variable:
    """A new tensor: the tensor `x` indexes, with `y` added to `x`'s elements; repeated
    integer-array indices accumulate (Theano's `inc_subtensor`)."""
    return _update(x, y, inc=not set_instead_of_inc)


# --- reshape / flatten -----------------------------------------------------------------


def shape_i(x: Variable, i: int) -> int | Variable:
    """Dimension `i` of `x`: an int where the type knows it, else a symbolic int64 scalar."""
    static = ag.tensor_type(x.value).get_shape()[i]
    if static != ag.DYNAMIC:
        return static
    shape = getattr(x, "shape", None)
    if shape is not None and not isinstance(shape, tuple):
        return shape[i]
    # No shape op: count the elements of a vector as long as axis i.
    others = [a for a in range(x.ndim) if a != i]
    line = basic.sum(basic.ones_like(x, dtype="int64"), axis=others) if others else x
    return basic.sum(basic.ones_like(line, dtype="int64"))


def _shape_entries(shape: Any, ndim: int | None) -> list[Any]:
    if _python_int(shape) or (isinstance(shape, Variable) and shape.ndim == 0):
        return [shape]
    if isinstance(shape, Variable):
        if shape.ndim != 1 or shape.dtype not in _INT_DTYPES:
            raise TypeError(f"reshape: a symbolic shape must be an integer vector, got {shape}")
        length = ag.tensor_type(shape.value).get_shape()[0]
        if ndim is None:
            if length == ag.DYNAMIC:
                raise ValueError(
                    "reshape: the length of the symbolic shape vector is not known; pass ndim"
                )
            ndim = length
        return [getitem(shape, k) for k in range(ndim)]
    return list(shape)


def reshape(x: Any, newshape: Any, ndim: int | None = None) -> Variable:
    """The elements of `x` in row-major order in the shape `newshape`: ints (one may be
    -1), symbolic integer scalars, or a symbolic integer vector (with `ndim`)."""
    v = basic.as_tensor_variable(x)
    entries = _shape_entries(newshape, ndim)
    if ndim is not None and len(entries) != ndim:
        raise ValueError(f"reshape: shape {newshape} has {len(entries)} entries, ndim is {ndim}")
    dynamic: list[Variable] = []
    static = []
    for e in entries:
        if _python_int(e) and int(e) < -1:
            raise ValueError(f"reshape: invalid length {e} in shape {newshape}")
        static.append(_entry(e, "a length", dynamic, allow_none=False))
    return _build(ag.ReshapeOp, v.value, static, [d.value for d in dynamic])


def flatten(x: Any, ndim: int = 1, outdim: int | None = None) -> Variable:
    """`x` with its axes from `ndim - 1` on merged into one (Theano's `flatten`)."""
    v = basic.as_tensor_variable(x)
    ndim = outdim if outdim is not None else ndim
    if not 1 <= ndim <= max(v.ndim, 1):
        raise ValueError(f"flatten: ndim {ndim} must be in 1..{max(v.ndim, 1)}")
    return reshape(v, [shape_i(v, i) for i in range(ndim - 1)] + [-1])


# --- concatenate / stack ---------------------------------------------------------------


def concatenate(tensor_list: Sequence[Any], axis: int = 0) -> Variable:
    """The tensors joined along `axis` (Theano's `concatenate`); dtypes are promoted and
    the other dimensions must be equal."""
    values = basic._promoted([basic.as_tensor_variable(t) for t in tensor_list])
    if not values:
        raise ValueError("concatenate: needs at least one tensor")
    ndim = values[0].ndim
    if ndim == 0:
        raise ValueError("concatenate: zero-dimensional tensors cannot be concatenated")
    if not -ndim <= axis < ndim:
        raise ValueError(f"concatenate: axis {axis} is out of range for {ndim} dimensions")
    if len(values) == 1:
        return values[0]
    return _build(ag.ConcatenateOp, [t.value for t in values], axis % ndim)


def join(axis: int, *tensors: Any) -> Variable:
    """Theano's `join(axis, *tensors)`."""
    return concatenate(tensors, axis)


def stack(*tensors: Any, axis: int = 0) -> Variable:
    """The tensors (of one shape) stacked along a new axis `axis`: `stack([a, b], axis)`,
    or Theano's older form `stack(a, b, ...)` (along axis 0)."""
    if tensors and isinstance(tensors[0], list | tuple):
        if len(tensors) > 2:
            raise TypeError("stack: expected stack(tensors, axis=0) or stack(*tensors)")
        axis = tensors[1] if len(tensors) == 2 else axis
        tensors = tuple(tensors[0])
    values = [basic.as_tensor_variable(t) for t in tensors]
    if not values:
        raise ValueError("stack: needs at least one tensor")
    ndim = values[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"stack: axis {axis} is out of range for {ndim} dimensions")
    axis %= ndim
    expanded = []
    for t in values:
        pattern: list[Any] = list(range(t.ndim))
        pattern.insert(axis, "x")
        expanded.append(basic.dimshuffle(t, *pattern))
    if len(expanded) == 1:
        return expanded[0]
    return concatenate(expanded, axis)


# --- alloc / zeros / ones / arange -----------------------------------------------------


def alloc(value: Any, *shape: Any) -> Variable:
    """`value` broadcast to `shape` (ints or symbolic integer scalars; Theano's `alloc`)."""
    v = basic.as_tensor_variable(value)
    if len(shape) == 1 and isinstance(shape[0], list | tuple):
        shape = tuple(shape[0])
    dynamic: list[Variable] = []
    static = []
    for e in shape:
        if _python_int(e) and int(e) < 0:
            raise ValueError(f"alloc: negative length {e} in shape {shape}")
        static.append(_entry(e, "a length", dynamic, allow_none=False))
    return _build(ag.AllocOp, v.value, static, [d.value for d in dynamic])


def _filled(value: int, shape: Any, dtype: str | None) -> Variable:
    from arignote.tensor.type import check_dtype

    dtype = check_dtype(dtype or config.floatX)
    if isinstance(shape, Variable) and shape.ndim == 1:
        shape = _shape_entries(shape, None)
    elif _python_int(shape) or isinstance(shape, Variable):
        shape = [shape]
    return alloc(basic.constant(value, dtype=dtype), *shape)


def zeros(shape: Any, dtype: str | None = None) -> Variable:
    """Zeros of `shape` (ints or symbolic integer scalars), `floatX` by default."""
    return _filled(0, shape, dtype)


def ones(shape: Any, dtype: str | None = None) -> Variable:
    """Ones of `shape` (ints or symbolic integer scalars), `floatX` by default."""
    return _filled(1, shape, dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: str | None = None) -> Variable:
    """`[start, start + step, ...]` up to `stop` (exclusive), NumPy's `arange`; the
    bounds may be symbolic scalars. Python ints give int64, Python floats `floatX`, and
    variables their promoted dtype."""
    if stop is None:
        start, stop = 0, start
    parts = [start, stop, step]
    variables = [p for p in parts if isinstance(p, Variable)]
    if any(p.ndim != 0 for p in variables):
        raise TypeError("arange: start, stop and step must be scalars")
    if dtype is None:
        if variables:
            dtype = basic._promoted(basic._operands(*parts))[0].dtype
        elif any(isinstance(p, float) for p in parts):
            dtype = config.floatX
        else:
            dtype = "int64"
    values = [
        basic.cast(p, dtype) if isinstance(p, Variable) else basic.constant(p, dtype=dtype)
        for p in parts
    ]
    if values[0].dtype == "bool":
        raise TypeError("arange: bool is not a supported dtype")
    return _build(ag.ArangeOp, *(p.value for p in values))


# --- tensordot -------------------------------------------------------------------------


def tensordot(a: Any, b: Any, axes: Any = 2) -> Variable:
    """The sum of products over the given axes (NumPy's `tensordot`): `axes` an int (the
    last `axes` of `a` with the first of `b`) or a pair of axis lists. Built from
    dimshuffle, reshape and a matrix product."""
    x, y = basic._promoted([basic.as_tensor_variable(a), basic.as_tensor_variable(b)])
    if _python_int(axes):
        n = int(axes)
        if n < 0 or n > x.ndim or n > y.ndim:
            raise ValueError(f"tensordot: axes={n} is invalid for ranks {x.ndim} and {y.ndim}")
        a_axes, b_axes = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        a_axes, b_axes = (
            ([axes[0]] if _python_int(axes[0]) else list(axes[0])),
            ([axes[1]] if _python_int(axes[1]) else list(axes[1])),
        )
        a_axes = [int(i) % x.ndim for i in a_axes]
        b_axes = [int(i) % y.ndim for i in b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError("tensordot: the two axis lists must have one length")
    a_free = [i for i in range(x.ndim) if i not in a_axes]
    b_free = [i for i in range(y.ndim) if i not in b_axes]
    xt = basic.dimshuffle(x, *a_free, *a_axes)
    yt = basic.dimshuffle(y, *b_axes, *b_free)
    free_a = [shape_i(x, i) for i in a_free]
    free_b = [shape_i(y, i) for i in b_free]
    x2 = reshape(xt, [_product(free_a), -1])
    y2 = reshape(yt, [-1, _product(free_b)])
    return reshape(basic.dot(x2, y2), [*free_a, *free_b])


def _product(values: Sequence[int | Variable]) -> int | Variable:
    total: int | Variable = 1
    for v in values:
        total = v if isinstance(total, int) and total == 1 else total * v
    return total


# --- Theano's advanced-indexing names (theano.tensor.subtensor) -------------------------


class AdvancedIndexingError(TypeError, NotImplementedError):
    """An index combination arignote does not support (Theano's exception for advanced
    indexing it cannot do; also a NotImplementedError)."""


class AdvancedBooleanIndexingError(AdvancedIndexingError):
    """A boolean index arignote does not support (a 0-d boolean)."""


def advanced_subtensor1(x: Any, ilist: Any) -> Variable:
    """`x[ilist]` for an integer vector `ilist` (Theano's `AdvancedSubtensor1` op)."""
    return basic.as_tensor_variable(x)[ilist]


def advanced_inc_subtensor1(x: Any, y: Any, ilist: Any) -> Variable:
    """`inc_subtensor(x[ilist], y)`: repeated indices add up (Theano's op)."""
    return inc_subtensor(basic.as_tensor_variable(x)[ilist], y)


def advanced_set_subtensor1(x: Any, y: Any, ilist: Any) -> Variable:
    """`set_subtensor(x[ilist], y)` (Theano's op)."""
    return set_subtensor(basic.as_tensor_variable(x)[ilist], y)


def advanced_subtensor(x: Any, *index: Any) -> Variable:
    """`x[index]` with index arrays, slices and integers (Theano's `AdvancedSubtensor`)."""
    return basic.as_tensor_variable(x)[tuple(index)]


def advanced_inc_subtensor(x: Any, y: Any, *index: Any) -> Variable:
    return inc_subtensor(basic.as_tensor_variable(x)[tuple(index)], y)


def advanced_set_subtensor(x: Any, y: Any, *index: Any) -> Variable:
    return set_subtensor(basic.as_tensor_variable(x)[tuple(index)], y)


advanced_boolean_subtensor = advanced_subtensor
advanced_boolean_inc_subtensor = advanced_inc_subtensor
advanced_boolean_set_subtensor = advanced_set_subtensor
