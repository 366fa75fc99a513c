"""Shapes, creation and selection (issue 13 item 3), Theano's names and signatures:
`specify_shape`, `addbroadcast`/`unbroadcast`/`patternbroadcast`, `shape_padleft`/
`shape_padright`/`shape_padaxis`, `squeeze`, `stacklists`/`horizontal_stack`/
`vertical_stack`, `split`, `tile`, `repeat`, `roll`, `swapaxes`, `eye`, `identity_like`,
`tri`/`tril`/`triu`, `diag`/`diagonal`/`trace`, `mgrid`/`ogrid`, `choose`,
`nonzero`/`flatnonzero`/`nonzero_values`, `batched_dot`/`batched_tensordot`,
`any`/`all`/`ptp`/`largest`/`smallest`.

Most are compositions of existing `ag` ops (so both backends and the gradient come with
them); three ops are this family's own (`dialects/ag/data_shapes.py`): `ag.specify_shape`
checks a shape at run time, `ag.assert` checks a run-time condition on argument values
(a `ValueError` naming the function), and `ag.flatnonzero` gives the positions of the
nonzero elements, a result whose length is known only at run time.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.configuration import config
from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic, subtensor

_INT_DTYPES = ("int8", "int16", "int32", "int64")


def _var(x: Any) -> Variable:
    return basic.as_tensor_variable(x)


def _python_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _axis(axis: Any, ndim: int, what: str) -> int:
    """`axis` normalized to `0..ndim-1` (an IndexError naming `what` if out of range)."""
    if not _python_int(axis):
        raise TypeError(f"{what}: axis must be an int, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise IndexError(f"{what}: axis {axis} is out of range for a tensor of {ndim} dimensions")
    return int(axis) % ndim


def check(x: Any, condition: Any, message: str) -> Variable:
    """`x`, after a run-time check that the scalar `condition` is true, else a
    `ValueError` with `message` (`ag.assert`; Theano's `Assert`)."""
    v, c = _var(x), _var(condition)
    if c.ndim != 0:
        raise TypeError(f"check: the condition must be a scalar, got {c}")
    if c.dtype != "bool":
        c = basic.neq(c, 0)
    return apply_op(ag.AssertOp(v.value, c.value, message))


# --- shapes and broadcast patterns -------------------------------------------------------


def specify_shape(x: Any, shape: Any) -> Variable:
    """`x`, checked at run time to have `shape` (ints or symbolic integer scalars, or an
    integer vector of known length); a mismatch is a `ValueError`. The result's type
    knows the static lengths (Theano's `specify_shape`)."""
    v = _var(x)
    entries = subtensor._shape_entries(shape, None)
    if len(entries) != v.ndim:
        raise ValueError(
            f"specify_shape: the shape has {len(entries)} entries for a tensor of "
            f"{v.ndim} dimensions"
        )
    dynamic: list[Variable] = []
    static = []
    for e in entries:
        if _python_int(e) and int(e) < 0:
            raise ValueError(f"specify_shape: negative length {e} in shape {shape}")
        static.append(subtensor._entry(e, "a length", dynamic, allow_none=False))
    return subtensor._build(ag.SpecifyShapeOp, v.value, static, [d.value for d in dynamic])


def _axes_list(axes: Sequence[Any], ndim: int, what: str) -> list[int]:
    if len(axes) == 1 and isinstance(axes[0], list | tuple):
        axes = tuple(axes[0])
    return [_axis(a, ndim, what) for a in axes]


def addbroadcast(x: Any, *axes: int) -> Variable:
    """`x` with the given axes broadcastable (static length 1); their length is checked
    to be 1 at run time (Theano's `addbroadcast`)."""
    v = _var(x)
    chosen = _axes_list(axes, v.ndim, "addbroadcast")
    if builtins.all(v.broadcastable[a] for a in chosen):
        return v
    shape = [1 if a in chosen else subtensor.shape_i(v, a) for a in range(v.ndim)]
    return specify_shape(v, shape)


def unbroadcast(x: Any, *axes: int) -> Variable:
    """`x` with the given axes no longer broadcastable (their length becomes run-time
    only; Theano's `unbroadcast`)."""
    v = _var(x)
    chosen = [a for a in _axes_list(axes, v.ndim, "unbroadcast") if v.broadcastable[a]]
    if not chosen:
        return v
    shape = [basic.shape_i(v, a) if a in chosen else subtensor.shape_i(v, a) for a in range(v.ndim)]
    return subtensor.reshape(v, shape)


def patternbroadcast(x: Any, broadcastable: Sequence[bool]) -> Variable:
    """`x` with the broadcast pattern `broadcastable` (Theano's `patternbroadcast`)."""
    v = _var(x)
    if len(broadcastable) != v.ndim:
        raise ValueError(
            f"patternbroadcast: the pattern {tuple(broadcastable)} has {len(broadcastable)} "
            f"entries for a tensor of {v.ndim} dimensions"
        )
    add = [a for a, b in enumerate(broadcastable) if b and not v.broadcastable[a]]
    drop = [a for a, b in enumerate(broadcastable) if not b and v.broadcastable[a]]
    if add:
        v = addbroadcast(v, *add)
    return unbroadcast(v, *drop) if drop else v


def shape_padleft(t: Any, n_ones: int = 1) -> Variable:
    """`t` with `n_ones` broadcastable axes in front."""
    v = _var(t)
    return basic.dimshuffle(v, *(["x"] * n_ones), *range(v.ndim))


def shape_padright(t: Any, n_ones: int = 1) -> Variable:
    """`t` with `n_ones` broadcastable axes at the end."""
    v = _var(t)
    return basic.dimshuffle(v, *range(v.ndim), *(["x"] * n_ones))


def shape_padaxis(t: Any, axis: int) -> Variable:
    """`t` with a broadcastable axis inserted at `axis` (negative counts from the end of
    the result, as `numpy.expand_dims`)."""
    v = _var(t)
    position = _axis(axis, v.ndim + 1, "shape_padaxis")
    pattern: list[Any] = list(range(v.ndim))
    pattern.insert(position, "x")
    return basic.dimshuffle(v, *pattern)


def squeeze(x: Any) -> Variable:
    """`x` without its broadcastable axes (Theano's `squeeze`: the axes known to have
    length 1, not those that happen to at run time)."""
    v = _var(x)
    return basic.dimshuffle(v, *[a for a in range(v.ndim) if not v.broadcastable[a]])


def swapaxes(y: Any, axis1: int, axis2: int) -> Variable:
    """`y` with axes `axis1` and `axis2` exchanged."""
    v = _var(y)
    a, b = _axis(axis1, v.ndim, "swapaxes"), _axis(axis2, v.ndim, "swapaxes")
    pattern = list(range(v.ndim))
    pattern[a], pattern[b] = pattern[b], pattern[a]
    return basic.dimshuffle(v, *pattern)


# --- stacking, splitting, repeating ----------------------------------------------------


def stacklists(arg: Any) -> Variable:
    """Nested lists of tensors stacked into one tensor of the same nesting
    (`stacklists([[a, b], [c, d]])` has shape `(2, 2) + a.shape`)."""
    if isinstance(arg, list | tuple):
        return subtensor.stack([stacklists(item) for item in arg])
    return _var(arg)


def horizontal_stack(*args: Any) -> Variable:
    """Matrices joined along their columns (Theano's `horizontal_stack`; at least two)."""
    if len(args) < 2:
        raise ValueError("horizontal_stack: needs at least two tensors")
    values = [_var(a) for a in args]
    if builtins.any(v.ndim != 2 for v in values):
        raise TypeError("horizontal_stack: the arguments must be matrices")
    return subtensor.concatenate(values, axis=1)


def vertical_stack(*args: Any) -> Variable:
    """Tensors joined along their first axis (Theano's `vertical_stack`; at least two)."""
    if len(args) < 2:
        raise ValueError("vertical_stack: needs at least two tensors")
    return subtensor.concatenate([_var(a) for a in args], axis=0)


def _int_vector(values: Any, what: str) -> Variable:
    v = values if isinstance(values, Variable) else None
    if v is None:
        items = list(values) if isinstance(values, list | tuple) else [values]
        if builtins.all(_python_int(i) for i in items):
            v = basic.constant(np.asarray(items, dtype="int64"))
        else:
            v = subtensor.stack([basic.cast(i, "int64") for i in items])
    if v.ndim != 1 or v.dtype not in _INT_DTYPES:
        raise TypeError(f"{what}: expected an integer vector, got {v} of type {v.type}")
    return basic.cast(v, "int64")


def split(x: Any, splits_size: Any, n_splits: int, axis: int = 0) -> list[Variable]:
    """`x` cut along `axis` into `n_splits` parts of lengths `splits_size` (an integer
    vector, symbolic or not; Theano's `split`). The lengths must be non-negative, sum
    to `x.shape[axis]` and number `n_splits`, checked at run time (`ValueError`)."""
    v = _var(x)
    if not _python_int(n_splits) or n_splits < 1:
        raise ValueError(f"split: n_splits must be a positive int, got {n_splits!r}")
    axis = _axis(axis, v.ndim, "split")
    if isinstance(splits_size, list | tuple) and len(splits_size) != n_splits:
        raise ValueError(f"split: {len(splits_size)} sizes given for n_splits={n_splits}")
    sizes = _int_vector(splits_size, "split")
    sizes = specify_shape(sizes, [n_splits])
    ok = basic.and_(
        basic.eq(basic.sum(sizes), subtensor.shape_i(v, axis)),
        basic.eq(basic.min(sizes), basic.min(basic.abs(sizes))),
    )
    message = "the split sizes must be non-negative and sum to the length of the split axis"
    v = check(v, ok, f"split: {message}")
    parts = []
    start: Any = 0
    for k in range(n_splits):
        stop = start + sizes[k]
        parts.append(subtensor.getitem(v, (slice(None),) * axis + (slice(start, stop),)))
        start = stop
    return parts


def tile(x: Any, reps: Any, ndim: int | None = None) -> Variable:
    """`x` repeated `reps[i]` times along each axis `i` (NumPy's `tile`; `reps` an int,
    a list of ints or symbolic integer scalars, or a symbolic integer vector with
    `ndim`). `x` gains leading axes when `reps` is longer."""
    v = _var(x)
    entries = _reps_entries(reps, ndim)
    ndim = max(v.ndim, len(entries)) if ndim is None else ndim
    if ndim < v.ndim or ndim < len(entries):
        raise ValueError("tile: ndim must be at least x.ndim and len(reps)")
    entries = [1] * (ndim - len(entries)) + entries
    v = shape_padleft(v, ndim - v.ndim)
    for r in entries:
        if _python_int(r) and r < 0:
            raise ValueError(f"tile: negative repetition count {r}")
    lengths = [subtensor.shape_i(v, a) for a in range(ndim)]
    pattern: list[Any] = [p for a in range(ndim) for p in ("x", a)]
    alloc_shape = [e for a in range(ndim) for e in (entries[a], lengths[a])]
    tiled = subtensor.alloc(basic.dimshuffle(v, *pattern), *alloc_shape)
    return subtensor.reshape(tiled, [r * n for r, n in zip(entries, lengths, strict=True)])


def _reps_entries(reps: Any, ndim: int | None) -> list[Any]:
    if isinstance(reps, list | tuple):
        for r in reps:
            if not (_python_int(r) or subtensor._is_int_scalar(r)):
                raise ValueError(f"tile: the elements of reps must be integers, got {r!r}")
        return list(reps)
    r = _var(reps)
    if r.dtype not in _INT_DTYPES:
        raise ValueError("tile: the elements of reps must be of an integer dtype")
    if r.ndim == 0:
        return [reps]
    if ndim is None:
        raise ValueError("tile: if reps is a symbolic vector, ndim must be given")
    # Theano's rule: a vector shorter than ndim is padded with leading ones
    count = basic.shape_i(r, 0)
    r = check(
        basic.cast(r, "int64"), basic.le(count, ndim), "tile: reps has more than ndim entries"
    )
    pad = basic.maximum(basic.sub(ndim, count), 0)  # (the check above reports a longer one)
    padded = subtensor.concatenate([subtensor.ones([pad], "int64"), r])
    return [padded[k] for k in range(ndim)]


def repeat(x: Any, repeats: Any, axis: int | None = None) -> Variable:
    """Each element of `x` repeated `repeats` times along `axis` (the flattened `x` when
    None), NumPy's `repeat`: `repeats` an int or integer scalar, or an integer vector of
    one count per element along `axis` (checked at run time, as is the counts' sign)."""
    v = _var(x)
    if axis is None:
        v, axis = subtensor.flatten(v), 0
    if _python_int(axis) and not -v.ndim <= axis < v.ndim:
        raise ValueError("Axis should not exceed x.ndim-1.")  # Theano's text
    axis = _axis(axis, v.ndim, "repeat")
    r = basic.as_tensor_variable(repeats) if not _python_int(repeats) else None
    if r is not None and r.ndim > 1:
        raise ValueError("The dimension of repeats should not exceed 1.")  # Theano's text
    if r is not None and r.dtype not in _INT_DTYPES:
        raise TypeError(f"repeat: repeats must be an integer scalar or vector, got {r}")
    if r is None or r.ndim == 0:
        return _repeat_each(v, repeats, axis)
    return _repeat_counts(v, r, axis)


def _repeat_each(v: Variable, count: Any, axis: int) -> Variable:
    if _python_int(count) and count < 0:
        raise ValueError(f"repeat: negative repetition count {count}")
    if not _python_int(count):
        count = check(count, basic.ge(count, 0), "repeat: the count must not be negative")
    pattern: list[Any] = list(range(v.ndim))
    pattern.insert(axis + 1, "x")
    lengths = [subtensor.shape_i(v, a) for a in range(v.ndim)]
    shape = lengths[: axis + 1] + [count] + lengths[axis + 1 :]
    out = subtensor.alloc(basic.dimshuffle(v, *pattern), *shape)
    merged = lengths[:axis] + [lengths[axis] * count] + lengths[axis + 1 :]
    return subtensor.reshape(out, merged)


def _repeat_counts(v: Variable, counts: Variable, axis: int) -> Variable:
    """Element `i` along `axis` taken `counts[i]` times: row `i` of the mask
    `arange(max(counts)) < counts[:, None]` has `counts[i]` true entries, so the flat
    positions of the mask's true entries, divided by its width, list each `i` that
    many times, in order."""
    counts = basic.cast(counts, "int64")
    counts = specify_shape(counts, [subtensor.shape_i(v, axis)])
    padded = subtensor.concatenate([counts, basic.constant(np.zeros(1, dtype="int64"))])
    counts = check(counts, basic.ge(basic.min(padded), 0), _NEGATIVE_COUNTS)
    width = basic.maximum(basic.max(padded), 1)
    mask = basic.lt(
        basic.dimshuffle(subtensor.arange(width), "x", 0), basic.dimshuffle(counts, 0, "x")
    )
    rows = basic.floor_div(flatnonzero(mask), width)
    return subtensor.take(v, rows, axis=axis)


_NEGATIVE_COUNTS = "repeat: the repetition counts must not be negative"


def roll(x: Any, shift: Any, axis: int | None = None) -> Variable:
    """`x` shifted cyclically by `shift` along `axis` (the flattened `x` when None),
    NumPy's `roll`; `shift` may be symbolic."""
    v = _var(x)
    if axis is None:
        if v.ndim != 1:
            flat = roll(subtensor.flatten(v), shift, 0)
            return subtensor.reshape(flat, [subtensor.shape_i(v, a) for a in range(v.ndim)])
        axis = 0
    axis = _axis(axis, v.ndim, "roll")
    n = subtensor.shape_i(v, axis)
    if isinstance(n, int) and n == 0:
        return v
    if not (_python_int(shift) or subtensor._is_int_scalar(shift)):
        raise TypeError(f"roll: shift must be an int or an integer scalar, got {shift!r}")
    if _python_int(shift) and isinstance(n, int):
        s: Any = int(shift) % n
    else:  # an empty axis rolls to itself: divide by max(n, 1)
        s = basic.mod(basic.cast(_var(shift), "int64"), basic.maximum(n, 1))
    front = (slice(None),) * axis + (slice(n - s, None),)
    back = (slice(None),) * axis + (slice(0, n - s),)
    return subtensor.concatenate([subtensor.getitem(v, front), subtensor.getitem(v, back)], axis)


# --- creation --------------------------------------------------------------------------


def _grid_lines(n: Any, m: Any, k: Any) -> tuple[Variable, Variable]:
    """`i + k` as a column and `j` as a row, for `i < n`, `j < m` (int64)."""
    rows = subtensor.arange(basic.cast(_var(n), "int64"), dtype="int64")
    cols = subtensor.arange(basic.cast(_var(m), "int64"), dtype="int64")
    shifted = basic.add(rows, basic.cast(_var(k), "int64"))
    return basic.dimshuffle(shifted, 0, "x"), basic.dimshuffle(cols, "x", 0)


def _scalar_args(what: str, **values: Any) -> None:
    for name, v in values.items():
        if _python_int(v):
            continue
        if not subtensor._is_int_scalar(v):
            raise TypeError(f"{what}: {name} must be an int or an integer scalar, got {v!r}")


def eye(n: Any, m: Any = None, k: Any = 0, dtype: str | None = None) -> Variable:
    """An `n` by `m` (default `n`) matrix with ones on diagonal `k` (above the main one
    for `k > 0`) and zeros elsewhere, of `dtype` (default floatX); the arguments may be
    symbolic integer scalars."""
    m = n if m is None else m
    _scalar_args("eye", n=n, m=m, k=k)
    rows, cols = _grid_lines(n, m, k)
    return basic.cast(basic.eq(rows, cols), dtype or config.floatX)


def identity_like(x: Any) -> Variable:
    """The identity matrix of the shape and dtype of the matrix `x`."""
    v = _var(x)
    if v.ndim != 2:
        raise TypeError(f"identity_like: expected a matrix, got {v.ndim} dimensions")
    return eye(basic.shape_i(v, 0), basic.shape_i(v, 1), 0, v.dtype)


def tri(N: Any, M: Any = None, k: Any = 0, dtype: str | None = None) -> Variable:  # noqa: N803
    """An `N` by `M` (default `N`) matrix with ones at and below diagonal `k` (`T[i, j]`
    is 1 for `j <= i + k`), of `dtype` (default floatX)."""
    M = N if M is None else M  # noqa: N806 - NumPy's names
    _scalar_args("tri", N=N, M=M, k=k)
    rows, cols = _grid_lines(N, M, k)
    return basic.cast(basic.ge(rows, cols), dtype or config.floatX)


def _triangle(m: Any, k: Any, lower: bool, what: str) -> Variable:
    v = _var(m)
    if v.ndim < 2:
        raise ValueError(f"{what}: expected at least 2 dimensions, got {v.ndim}")
    n, w = basic.shape_i(v, v.ndim - 2), basic.shape_i(v, v.ndim - 1)
    rows, cols = _grid_lines(n, w, k if lower else basic.sub(_var(k), 1))
    keep = basic.ge(rows, cols)
    if not lower:
        keep = basic.TABLE_FUNCTIONS["invert"](keep)
    return basic.switch(keep, v, basic.constant(0, dtype=v.dtype))


def tril(m: Any, k: Any = 0) -> Variable:
    """`m` with the elements above diagonal `k` of its last two axes zeroed (NumPy's
    `tril`: a NaN above the diagonal becomes 0)."""
    return _triangle(m, k, True, "tril")


def triu(m: Any, k: Any = 0) -> Variable:
    """`m` with the elements below diagonal `k` of its last two axes zeroed."""
    return _triangle(m, k, False, "triu")


def diagonal(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The diagonal `offset` of the 2-d slices of `a` over `axis1` and `axis2`, as the
    last axis of the result (NumPy's `diagonal`; Theano's `ExtractDiag`)."""
    v = _var(a)
    if v.ndim < 2:
        raise ValueError(f"diagonal: expected at least 2 dimensions, got {v.ndim}")
    if not _python_int(offset):
        raise TypeError(f"diagonal: offset must be an int, got {offset!r}")
    a1, a2 = _axis(axis1, v.ndim, "diagonal"), _axis(axis2, v.ndim, "diagonal")
    if a1 == a2:
        raise ValueError("diagonal: axis1 and axis2 cannot be the same")
    rest = [a for a in range(v.ndim) if a not in (a1, a2)]
    moved = basic.dimshuffle(v, *rest, a1, a2)
    row0, col0 = max(-offset, 0), max(offset, 0)
    n, m = basic.shape_i(v, a1), basic.shape_i(v, a2)
    length = basic.maximum(basic.minimum(basic.sub(n, row0), basic.sub(m, col0)), 0)
    i = subtensor.arange(length, dtype="int64")
    rows, cols = basic.add(i, row0), basic.add(i, col0)
    return subtensor.getitem(moved, (Ellipsis, rows, cols))


def _alloc_diag(v: Variable, k: int) -> Variable:
    """The square matrix with `v` on diagonal `k` and zeros elsewhere."""
    padded = v
    if k:
        zeros = subtensor.zeros([abs(k)], dtype=v.dtype)
        padded = subtensor.concatenate([v, zeros])
    n = subtensor.shape_i(padded, 0)
    rows, cols = _grid_lines(n, n, k)
    line = basic.dimshuffle(padded, 0, "x") if k >= 0 else basic.dimshuffle(padded, "x", 0)
    return basic.switch(basic.eq(rows, cols), line, basic.constant(0, dtype=v.dtype))


def diag(v: Any, k: int = 0) -> Variable:
    """For a vector, the square matrix with `v` on diagonal `k` (Theano's `AllocDiag`);
    for a tensor of 2 or more dimensions, its diagonal `k` (`diagonal`)."""
    x = _var(v)
    if not _python_int(k):
        raise TypeError(f"diag: k must be an int, got {k!r}")
    if x.ndim == 1:
        return _alloc_diag(x, int(k))
    if x.ndim >= 2:
        return diagonal(x, k)
    raise ValueError("diag: the input must have at least one dimension")


def trace(a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """The sum of `diagonal(a, offset, axis1, axis2)` (NumPy's `trace`)."""
    d = diagonal(a, offset, axis1, axis2)
    return basic.sum(d, axis=-1, dtype=d.dtype if d.dtype.startswith("float") else None)


class _NdGrid:
    """`mgrid[0:5, 0:3]` (dense: a list of `ndim` tensors of the full shape) and
    `ogrid[...]` (open: each one broadcastable except along its own axis), from
    `arange` of each slice (a complex step, NumPy's point count, is not supported)."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key: Any) -> list[Variable]:
        slices = key if isinstance(key, tuple) else (key,)
        lines = []
        for s in slices:
            if not isinstance(s, slice) or isinstance(s.step, complex):
                raise NotImplementedError(
                    f"mgrid/ogrid: expected slices start:stop:step, got {s!r}"
                )
            lines.append(subtensor.arange(s.start or 0, s.stop, 1 if s.step is None else s.step))
        ndim = len(lines)
        result = []
        for a, line in enumerate(lines):
            pattern = ["x"] * ndim
            pattern[a] = 0
            open_line = basic.dimshuffle(line, *pattern)
            if self.sparse:
                result.append(open_line)
                continue
            shape = [subtensor.shape_i(other, 0) for other in lines]
            result.append(subtensor.alloc(open_line, *shape))
        return result


mgrid = _NdGrid(sparse=False)
ogrid = _NdGrid(sparse=True)


# --- selection -------------------------------------------------------------------------


def flatnonzero(a: Any) -> Variable:
    """The int64 positions of the nonzero elements of the flattened `a` (NaN is nonzero;
    `ag.flatnonzero`); a run-time length."""
    v = _var(a)
    if v.ndim == 0:
        raise ValueError("flatnonzero: Nonzero only supports non-scalar arrays")
    return apply_op(ag.FlatNonzeroOp(v.value))


def nonzero(a: Any, return_matrix: bool = False) -> Any:
    """The indices of the nonzero elements of `a`: a tuple of one int64 vector per axis
    (NumPy's `nonzero`), or with `return_matrix` a matrix of shape `(ndim, count)`."""
    v = _var(a)
    if v.ndim == 0:
        raise ValueError("nonzero: Nonzero only supports non-scalar arrays")
    flat = flatnonzero(v)
    result = []
    stride: Any = 1
    for axis in reversed(range(v.ndim)):
        n = subtensor.shape_i(v, axis)
        index = basic.floor_div(flat, stride) if not (_python_int(stride) and stride == 1) else flat
        result.insert(0, basic.mod(index, n) if axis else index)
        stride = n * stride if not _python_int(n) else stride * n
    if return_matrix:
        return subtensor.stack(result)
    return tuple(result)


def nonzero_values(a: Any) -> Variable:
    """The nonzero elements of `a`, in row-major order (`a.flatten()[flatnonzero(a)]`)."""
    v = _var(a)
    return subtensor.getitem(subtensor.flatten(v), flatnonzero(v))


def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Variable:
    """`choices[a[i]][i]` for each `i` of the broadcast shape of `a` and the choices
    (NumPy's `choose`): `choices` a list of tensors or a tensor whose first axis lists
    them; `mode` "raise" (an index outside `[0, n)` is a `ValueError` at run time),
    "wrap" or "clip"."""
    if out is not None:
        raise ValueError("choose: the out argument is not supported (as in Theano)")
    index = _var(a)
    if index.dtype not in _INT_DTYPES:
        raise TypeError(f"choose: a must hold integers, got dtype {index.dtype}")
    if isinstance(choices, list | tuple):
        stacked = subtensor.stack(_broadcast_all([_var(c) for c in choices]))
    else:
        stacked = _var(choices)
    index = _choice_index(basic.cast(index, "int64"), subtensor.shape_i(stacked, 0), mode)
    return _gather_choices(stacked, index)


def _choice_index(index: Variable, n: Any, mode: str) -> Variable:
    """`index` checked (`raise`), wrapped or clipped into `[0, n)`."""
    if mode == "raise":
        inside = basic.and_(basic.ge(index, 0), basic.lt(index, n))
        outside = basic.sum(basic.TABLE_FUNCTIONS["invert"](inside))
        return check(index, basic.eq(outside, 0), "choose: invalid entry in choice array")
    if mode == "wrap":
        return basic.mod(index, n)
    if mode == "clip":
        return basic.clip(index, 0, basic.sub(n, 1))
    raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")


def _gather_choices(stacked: Variable, index: Variable) -> Variable:
    """`stacked[index[i], i]` for each `i` of the broadcast shape of `index` and
    `stacked[0]`: advanced indexing with `index` and one `arange` per axis (a 0 where
    `stacked` is broadcast along the axis)."""
    rank = max(index.ndim, stacked.ndim - 1)
    index = shape_padleft(index, rank - index.ndim)
    stacked = basic.dimshuffle(
        stacked, 0, *(["x"] * (rank + 1 - stacked.ndim)), *range(1, stacked.ndim)
    )
    lengths = _broadcast_lengths([index, subtensor.getitem(stacked, 0)])
    grids: list[Any] = []
    for axis, n_axis in enumerate(lengths):
        if stacked.broadcastable[axis + 1]:
            grids.append(0)
            continue
        pattern: list[Any] = ["x"] * rank
        pattern[axis] = 0
        grids.append(basic.dimshuffle(subtensor.arange(n_axis, dtype="int64"), *pattern))
    return subtensor.getitem(stacked, (subtensor.alloc(index, *lengths), *grids))


def _broadcast_lengths(values: Sequence[Variable]) -> list[Any]:
    """The broadcast shape of `values` (right-aligned), static where a type knows it."""
    rank = max(v.ndim for v in values)
    lengths: list[Any] = []
    for axis in range(rank):
        present = [
            v
            for v in values
            if axis - rank + v.ndim >= 0 and not v.broadcastable[axis - rank + v.ndim]
        ]
        if not present:
            lengths.append(1)
            continue
        lengths.append(subtensor.shape_i(present[0], axis - rank + present[0].ndim))
    return lengths


def _broadcast_all(values: Sequence[Variable]) -> list[Variable]:
    """`values` broadcast to their common shape and promoted to one dtype."""
    promoted = basic._promoted(values)
    lengths = _broadcast_lengths(promoted)
    return [subtensor.alloc(v, *lengths) for v in promoted]


# --- reductions and comparisons --------------------------------------------------------


def any(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Whether any element over `axis` is nonzero (NaN is), a bool tensor; `False` over
    an empty axis."""
    v = _var(x)
    return basic.gt(basic.sum(basic.neq(v, 0), axis, keepdims=keepdims), 0)


def all(x: Any, axis: Any = None, keepdims: bool = False) -> Variable:  # noqa: A001
    """Whether every element over `axis` is nonzero (NaN is), a bool tensor; `True`
    over an empty axis."""
    v = _var(x)
    return basic.eq(basic.sum(basic.eq(v, 0), axis, keepdims=keepdims), 0)


def ptp(a: Any, axis: Any = None) -> Variable:
    """The range `max - min` over `axis` (all axes by default)."""
    return basic.sub(basic.max(a, axis), basic.min(a, axis))


def largest(*args: Any) -> Variable:
    """The elementwise largest of the arguments (Theano's: `switch(a > b, a, b)` for
    two, else the maximum of their stack)."""
    if len(args) == 2:
        a, b = args
        return basic.switch(basic.gt(a, b), a, b)
    return basic.max(subtensor.stack(_broadcast_all([_var(a) for a in args])), axis=0)


def smallest(*args: Any) -> Variable:
    """The elementwise smallest of the arguments (see `largest`)."""
    if len(args) == 2:
        a, b = args
        return basic.switch(basic.lt(a, b), a, b)
    return basic.min(subtensor.stack(_broadcast_all([_var(a) for a in args])), axis=0)


# --- batched products ------------------------------------------------------------------


def batched_dot(a: Any, b: Any) -> Variable:
    """`result[i] = dot(a[i], b[i])` over the first (batch) axis (Theano's
    `batched_dot`): a vector operand multiplies elementwise; 2- and 3-dimensional
    operands are matrix/vector products per batch (a broadcast product summed over the
    contracted axis); more dimensions go through `batched_tensordot`."""
    x, y = basic._promoted(basic._operands(a, b))
    if x.ndim == 0 or y.ndim == 0:
        raise TypeError("batched_dot: each operand must have a batch axis")
    if x.ndim == 1:
        return basic.mul(basic.dimshuffle(x, 0, *(["x"] * (y.ndim - 1))), y)
    if y.ndim == 1:
        return basic.mul(x, basic.dimshuffle(y, 0, *(["x"] * (x.ndim - 1))))
    if x.ndim > 3 or y.ndim > 3:
        return batched_tensordot(x, y, [[x.ndim - 1], [max(1, y.ndim - 2)]])
    # x: (B, [n,] m), y: (B, m[, k]): broadcast to (B, [n,] m[, k]) and sum over m
    xs = basic.dimshuffle(x, *range(x.ndim), *(["x"] if y.ndim == 3 else []))
    ys = basic.dimshuffle(y, 0, *(["x"] if x.ndim == 3 else []), *range(1, y.ndim))
    product = basic.mul(xs, ys)
    return basic.sum(product, axis=x.ndim - 1, dtype=product.dtype)


def batched_tensordot(x: Any, y: Any, axes: Any = 2) -> Variable:
    """`tensordot` of `x[i]` and `y[i]` for each `i` of the batch axis 0 (Theano's
    `batched_tensordot`): `axes` an int (the last `axes` axes of `x` with axes
    `1..axes` of `y`) or two lists of axes (counted with the batch axis)."""
    a, b = basic._promoted([_var(x), _var(y)])
    if _python_int(axes):
        n = int(axes)
        if n < 0 or n >= a.ndim or n >= b.ndim:
            raise ValueError(f"batched_tensordot: axes={n} is invalid for ranks {a.ndim}, {b.ndim}")
        a_axes, b_axes = list(range(a.ndim - n, a.ndim)), list(range(1, n + 1))
    else:
        a_axes = [_axis(i, a.ndim, "batched_tensordot") for i in np.atleast_1d(axes[0])]
        b_axes = [_axis(i, b.ndim, "batched_tensordot") for i in np.atleast_1d(axes[1])]
        if len(a_axes) != len(b_axes) or 0 in a_axes or 0 in b_axes:
            raise ValueError(
                "batched_tensordot: the axis lists must have one length and exclude axis 0"
            )
    a_free = [i for i in range(1, a.ndim) if i not in a_axes]
    b_free = [i for i in range(1, b.ndim) if i not in b_axes]
    batch = subtensor.shape_i(a, 0)
    free_a = [subtensor.shape_i(a, i) for i in a_free]
    free_b = [subtensor.shape_i(b, i) for i in b_free]
    a3 = subtensor.reshape(
        basic.dimshuffle(a, 0, *a_free, *a_axes), [batch, subtensor._product(free_a), -1]
    )
    b3 = subtensor.reshape(
        basic.dimshuffle(b, 0, *b_axes, *b_free), [batch, -1, subtensor._product(free_b)]
    )
    return subtensor.reshape(batched_dot(a3, b3), [batch, *free_a, *free_b])
