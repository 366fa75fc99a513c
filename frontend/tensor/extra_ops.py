"""Theano's `theano.tensor.extra_ops`: `cumsum`, `cumprod`, `diff`, `bincount`,
`searchsorted`, `unique` (`Unique`), `to_one_hot`, `fill_diagonal`,
`fill_diagonal_offset`, `ravel_multi_index`, `unravel_index`, `compress`, `bartlett`,
`squeeze`, `repeat`, `cpu_contiguous`, and `inverse_permutation` /
`permute_row_elements` (in Theano's `tensor.basic`).

`cumsum`, `cumprod` and `searchsorted` are `ag` ops (`ag.cumsum`, `ag.cumprod`,
`ag.searchsorted`); the rest are compositions of them, of `ag.argsort` and of the
indexing ops, so both linkers and the gradient come with them. Results whose length
depends on the values (`unique`, `bincount`, `compress`, `repeat` with a vector of
repeats) are sized at run time: a count (a `sum` or `max`) gives the length of an
`arange`, and `searchsorted` over a running count (`cumsum`) finds the position of
each kept element, in O(n log n).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from arignote.configuration import config
from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic
from arignote.tensor import subtensor as st
from arignote.tensor.shape_ops import repeat, squeeze  # noqa: F401 - Theano also has them here
from arignote.tensor.sort import _axis, argsort, flat

_INT_DTYPES = ("int8", "int16", "int32", "int64")


def _integer(v: Variable, what: str) -> None:
    if v.dtype not in _INT_DTYPES:
        raise TypeError(f"'{v.dtype}' object cannot be interpreted as an index ({what})")


# --- cumsum / cumprod ------------------------------------------------------------------


def _cumulative(op_class: type[ag.CumulativeOp], x: Any, axis: Any) -> Variable:
    v = basic.as_tensor_variable(x)
    if v.dtype == "bool":  # NumPy counts bools as integers
        v = basic.cast(v, "int64")
    if axis is None:
        v, axis = flat(v), 0
    elif not isinstance(axis, int) or not -v.ndim <= axis < v.ndim:
        raise ValueError(f"axis(={axis}) out of bounds")
    return apply_op(op_class(v.value, axis % v.ndim))


def cumsum(x: Any, axis: int | None = None) -> Variable:
    """The cumulative sum along `axis` (`None`: of the flattened `x`), in `x`'s dtype
    (bools count as int64), `numpy.cumsum`."""
    return _cumulative(ag.CumSumOp, x, axis)


def cumprod(x: Any, axis: int | None = None) -> Variable:
    """The cumulative product along `axis` (`None`: of the flattened `x`), in `x`'s
    dtype (bools count as int64), `numpy.cumprod`. Its gradient is Theano's (it divides
    by `x`, so it is undefined where `x` is 0)."""
    return _cumulative(ag.CumProdOp, x, axis)


def reverse(x: Variable, axis: int) -> Variable:
    """`x` reversed along `axis`."""
    return st.getitem(x, (slice(None),) * axis + (slice(None, None, -1),))


def cumulative_grad(op: Any, x: Variable, out: Variable, g: Variable) -> Variable:
    """Theano's `CumOp.grad`: the reversed cumulative sum of the reversed gradient
    (times the cumulative product, divided by `x`, for `cumprod`)."""
    axis = op.axis_value
    if isinstance(op, ag.CumProdOp):
        return reverse(cumsum(reverse(out * g, axis), axis), axis) / x
    return reverse(cumsum(reverse(g, axis), axis), axis)


class CumOp:
    """`CumOp(axis=None, mode="add")(x)`: `cumsum` (`mode="add"`) or `cumprod` (`"mul"`)."""

    def __init__(self, axis: int | None = None, mode: str = "add"):
        if mode not in ("add", "mul"):
            raise ValueError(f'CumOp: Unknown mode "{mode}"')
        self.axis, self.mode = axis, mode

    def __call__(self, x: Any) -> Variable:
        return (cumsum if self.mode == "add" else cumprod)(x, self.axis)


# --- diff / squeeze / cpu_contiguous ---------------------------------------------------


def diff(x: Any, n: int = 1, axis: int = -1) -> Variable:
    """The `n`-th discrete difference along `axis`, `out[i] = x[i + 1] - x[i]` applied
    `n` times (`numpy.diff`; bools give `x[i + 1] != x[i]`)."""
    v = basic.as_tensor_variable(x)
    if not isinstance(n, int) or n < 0:
        raise ValueError(f"diff: order must be non-negative but got {n!r}")
    if v.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, v.ndim, "diff")
    head = (slice(None),) * ax
    for _ in range(n):
        later, earlier = v[(*head, slice(1, None))], v[(*head, slice(None, -1))]
        v = basic.neq(later, earlier) if v.dtype == "bool" else later - earlier
    return v


class DiffOp:
    """`DiffOp(n=1, axis=-1)(x)`: `diff(x, n, axis)`."""

    def __init__(self, n: int = 1, axis: int = -1):
        self.n, self.axis = n, axis

    def __call__(self, x: Any) -> Variable:
        return diff(x, self.n, self.axis)


class CpuContiguous:
    """Theano's `CpuContiguous`: `x` in C-contiguous memory. Every arignote array is,
    so the result is `x`."""

    def __call__(self, x: Any) -> Variable:
        return basic.as_tensor_variable(x)


cpu_contiguous = CpuContiguous()


# --- searchsorted ----------------------------------------------------------------------


def searchsorted(x: Any, v: Any, side: str = "left", sorter: Any = None) -> Variable:
    """For each element of `v`, the int64 position in the ascending vector `x` (or
    `x[sorter]`) where it would be inserted to keep the order: the first such position
    (`side="left"`) or the last (`"right"`), `numpy.searchsorted` (NaN sorts last)."""
    if side not in ag.SEARCH_SIDES:
        raise ValueError(f"'{side}' is an invalid value for keyword 'side'")
    a = basic.as_tensor_variable(x, ndim=1)
    values = basic.as_tensor_variable(v)
    if sorter is not None:
        order = basic.as_tensor_variable(sorter)
        if order.ndim != 1 or order.dtype not in _INT_DTYPES:
            raise TypeError(f"sorter must be an integer vector, got {order.type}")
        a = st.getitem(a, order)
    a, values = basic._promoted([a, values])
    return apply_op(ag.SearchSortedOp(a.value, values.value, side))


class SearchsortedOp:
    """`SearchsortedOp(side="left")(x, v, sorter=None)`: `searchsorted(x, v, side, sorter)`."""

    def __init__(self, side: str = "left"):
        if side not in ag.SEARCH_SIDES:
            raise ValueError(f"'{side}' is an invalid value for keyword 'side'")
        self.side = side

    def __call__(self, x: Any, v: Any, sorter: Any = None) -> Variable:
        return searchsorted(x, v, self.side, sorter)


# --- run-time-sized results: positions of counted elements -----------------------------


def _positions(flags: Variable) -> Variable:
    """The int64 positions of the true elements of the bool vector `flags`, in order:
    with `c` the running count of true elements, the `k`-th true element is the first
    position where `c` reaches `k`."""
    counts = cumsum(basic.cast(flags, "int64"))
    total = basic.sum(basic.cast(flags, "int64"))
    return searchsorted(counts, st.arange(1, total + 1), side="left")


def flatnonzero(a: Any) -> Variable:
    """The int64 positions of the nonzero elements of the flattened `a`."""
    return _positions(basic.neq(flat(basic.as_tensor_variable(a)), 0))


def compress(condition: Any, x: Any, axis: int | None = None) -> Variable:
    """The slices of `x` along `axis` (`None`: elements of the flattened `x`) where
    the vector `condition` is nonzero (`numpy.compress`); a `condition` shorter than
    the axis keeps none of the rest."""
    return st.take(basic.as_tensor_variable(x), flatnonzero(condition), axis=axis)


def bincount(
    x: Any, weights: Any = None, minlength: Any = None, assert_nonneg: bool = False
) -> Variable:
    """The number of occurrences of each value `0..max(x)` in the integer vector `x`
    (at least `minlength` bins), or the sum of `weights` for each (`numpy.bincount`).
    As in Theano, a negative value counts from the end (`assert_nonneg=True` makes it an
    error)."""
    v = basic.as_tensor_variable(x)
    if v.ndim != 1:
        raise TypeError("Inputs must be of dimension 1.")
    _integer(v, "bincount")
    if assert_nonneg:
        v = _assert_nonnegative(v)
    # max(x) + 1 bins; zero for an empty x, whose maximum does not exist.
    length = basic.max(st.concatenate([basic.cast(v, "int64"), basic.constant([-1])])) + 1
    if minlength is not None:
        length = basic.maximum(length, minlength)
    if weights is None:
        return st.inc_subtensor(st.getitem(st.zeros([length], dtype=v.dtype), v), 1)
    w = basic.as_tensor_variable(weights)
    return st.inc_subtensor(st.getitem(st.zeros([length], dtype=w.dtype), v), w)


def _assert_nonnegative(v: Variable) -> Variable:
    """`v`, checked at run time: its first negative element, used as an index into an
    empty vector, raises the bounds check's `IndexError` ("index -3 is out of bounds
    for axis 0 with size 0")."""
    negative = st.getitem(v, _positions(basic.lt(v, 0)))
    probe = st.getitem(st.zeros([0], dtype="int64"), negative)
    return v + basic.cast(basic.sum(probe), v.dtype)


# --- unique ----------------------------------------------------------------------------


def unique(
    ar: Any,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
) -> Variable | list[Variable]:
    """The sorted distinct elements of the flattened `ar` (`numpy.unique`; NaNs count
    as one value, as NumPy >= 1.21), and as asked the int64 position of each one's first
    occurrence, the position of each element of `ar` among them, and their counts."""
    if axis is not None:
        raise NotImplementedError("unique: axis (unique slices) is not supported yet")
    values = flat(basic.as_tensor_variable(ar))
    order = argsort(values, kind="mergesort")
    s = st.getitem(values, order)
    later, earlier = s[1:], s[:-1]
    differs = basic.neq(later, earlier)
    if s.dtype in ("float32", "float64"):
        both_nan = basic.and_(basic.isnan(later), basic.isnan(earlier))  # type: ignore[attr-defined]
        differs = basic.and_(differs, basic.invert(both_nan))  # type: ignore[attr-defined]
    size = st.shape_i(values, 0)
    starts = st.concatenate([st.alloc(True, basic.minimum(size, 1)), differs])
    first = _positions(starts)
    outputs = [st.getitem(s, first)]
    if return_index:
        outputs.append(st.getitem(order, first))
    if return_inverse:
        group = cumsum(basic.cast(starts, "int64")) - 1
        outputs.append(st.set_subtensor(st.getitem(st.zeros([size], "int64"), order), group))
    if return_counts:
        last = basic.dimshuffle(basic.cast(basic.as_tensor_variable(size), "int64"), "x")
        outputs.append(st.concatenate([first, last])[1:] - first)
    return outputs[0] if len(outputs) == 1 else outputs


class Unique:
    """Theano's `Unique(return_index, return_inverse, return_counts, axis)(x)`: the list
    of `unique`'s results (one variable when only the values are asked for)."""

    def __init__(
        self,
        return_index: bool = False,
        return_inverse: bool = False,
        return_counts: bool = False,
        axis: int | None = None,
    ):
        self.return_index, self.return_inverse = return_index, return_inverse
        self.return_counts, self.axis = return_counts, axis

    def __call__(self, x: Any) -> Variable | list[Variable]:
        return unique(x, self.return_index, self.return_inverse, self.return_counts, self.axis)


# --- repeat ----------------------------------------------------------------------------


class RepeatOp:
    """`RepeatOp(axis=None)(x, repeats)`: `repeat(x, repeats, axis)`."""

    def __init__(self, axis: int | None = None):
        self.axis = axis

    def __call__(self, x: Any, repeats: Any) -> Variable:
        return repeat(x, repeats, self.axis)


# --- one-hot, diagonals ----------------------------------------------------------------


def to_one_hot(y: Any, nb_class: Any, dtype: str | None = None) -> Variable:
    """A matrix whose row `i` is the one-hot encoding of `y[i]` among `nb_class`
    classes, of `dtype` (`floatX` by default); Theano's composition
    `set_subtensor(zeros[arange(n), y], 1)`."""
    v = basic.as_tensor_variable(y)
    if v.ndim != 1:
        raise TypeError(f"to_one_hot: y must be a vector of integers, got {v.type}")
    _integer(v, "to_one_hot")
    n = st.shape_i(v, 0)
    out = st.zeros([n, nb_class], dtype=dtype or config.floatX)
    return st.set_subtensor(st.getitem(out, (st.arange(n), v)), 1)


def _diagonal_value(a: Variable, val: Any, what: str) -> Variable:
    value = basic.as_tensor_variable(val)
    if value.ndim != 0:
        raise TypeError(f"{what}: second parameter must be a scalar")
    if basic._promoted([a, value])[0].dtype != a.dtype:
        raise TypeError(f"{what}: type of second parameter must be the same as the first's")
    return basic.cast(value, a.dtype)


def fill_diagonal(a: Any, val: Any) -> Variable:
    """A copy of `a` (2 or more dimensions; beyond 2 of equal lengths, as NumPy) with
    `a[i, i, ..., i]` set to the scalar `val` for `i < min(a.shape)`. The gradient is
    Theano's: zero on the diagonal for `a`, the diagonal's sum for `val`."""
    v = basic.as_tensor_variable(a)
    if v.ndim < 2:
        raise TypeError("FillDiagonal: first parameter must have at least two dimensions")
    value = _diagonal_value(v, val, "FillDiagonal")
    length: Any = st.shape_i(v, 0)
    for i in range(1, v.ndim):
        length = basic.minimum(length, st.shape_i(v, i))
    diagonal = st.arange(length)
    return st.set_subtensor(st.getitem(v, (diagonal,) * v.ndim), value)


def fill_diagonal_offset(a: Any, val: Any, offset: Any) -> Variable:
    """A copy of the matrix `a` with its diagonal `offset` (above the main one for
    `offset > 0`, below for `< 0`) set to the scalar `val`, not wrapped (Theano's
    `fill_diagonal_offset`)."""
    v = basic.as_tensor_variable(a)
    if v.ndim != 2:
        raise TypeError("FillDiagonalOffset: first parameter must have exactly two dimensions")
    value = _diagonal_value(v, val, "FillDiagonalOffset")
    k = basic.as_tensor_variable(offset)
    if k.ndim != 0:
        raise TypeError("FillDiagonalOffset: third parameter must be a scalar")
    if k.dtype not in _INT_DTYPES:
        raise TypeError(
            "FillDiagonalOffset: type of third parameter must be as integer use "
            "theano.tensor.cast( input, 'int32/int64')"
        )
    k = basic.cast(k, "int64")
    height, width = st.shape_i(v, 0), st.shape_i(v, 1)
    room = basic.switch(basic.ge(k, 0), width - k, height + k)
    length = basic.maximum(basic.minimum(basic.minimum(width, height), room), 0)
    steps = st.arange(length)
    rows = steps + basic.maximum(-k, 0)
    cols = steps + basic.maximum(k, 0)
    return st.set_subtensor(st.getitem(v, (rows, cols)), value)


class FillDiagonal:
    """Theano's `fill_diagonal_` op: `FillDiagonal()(a, val)`."""

    def __call__(self, a: Any, val: Any) -> Variable:
        return fill_diagonal(a, val)


class FillDiagonalOffset:
    """Theano's `fill_diagonal_offset_` op: `FillDiagonalOffset()(a, val, offset)`."""

    def __call__(self, a: Any, val: Any, offset: Any) -> Variable:
        return fill_diagonal_offset(a, val, offset)


fill_diagonal_ = FillDiagonal()
fill_diagonal_offset_ = FillDiagonalOffset()


# --- bartlett --------------------------------------------------------------------------


def bartlett(M: Any) -> Variable:  # noqa: N803 - Theano's name
    """The Bartlett (triangular) window of `M` points as float64 (`numpy.bartlett`):
    `1 - |2k - (M - 1)| / (M - 1)`, `[1.]` for `M == 1`, empty for `M < 1`."""
    m = basic.as_tensor_variable(M)
    if m.ndim != 0:
        raise TypeError("Bartlett only works on scalar input")
    if m.dtype not in _INT_DTYPES:
        raise TypeError("Bartlett only works on integer input")
    m = basic.cast(m, "int64")
    k = basic.cast(st.arange(basic.maximum(m, 0)), "float64")
    span = basic.cast(m - 1, "float64")
    return 1.0 - basic.abs(2.0 * k - span) / basic.maximum(span, 1.0)


class Bartlett:
    """Theano's `bartlett_` op: `Bartlett()(M)`."""

    def __call__(self, M: Any) -> Variable:  # noqa: N803 - Theano's name
        return bartlett(M)


bartlett_ = Bartlett()


# --- ravel_multi_index / unravel_index -------------------------------------------------


def _dims_list(dims: Any, ndim: int | None) -> list[Variable]:
    """`dims` as a list of int64 scalars (its length known from a constant, a Python
    sequence, a vector of static length, or `ndim`)."""
    if isinstance(dims, list | tuple):
        entries = [basic.as_tensor_variable(d) for d in dims]
        for d in entries:
            _integer(d, "dims")
        return [basic.cast(d, "int64") for d in entries]
    v = basic.as_tensor_variable(dims)
    _integer(v, "dims")
    if v.ndim != 1:
        raise TypeError("dims must be a 1D array")
    length = ag.tensor_type(v.value).get_shape()[0]
    if length == ag.DYNAMIC:
        if ndim is None:
            raise ValueError(
                f"The length of the provided dimension list ({dims}) cannot be automatically "
                "determined, so arignote is not able to know what the number of dimensions "
                "of the unraveled index will be. You can provide the 'ndim' keyword argument "
                "to 'unravel_index' to avoid this problem."
            )
        length = ndim
    return [basic.cast(v[i], "int64") for i in range(length)]


def _checked(index: Variable, bound: Variable) -> Variable:
    """`index`, with a run-time `IndexError` when an element is outside `[0, bound)`
    (a negative one is reported as `bound`): it indexes `arange(bound)`."""
    inside = basic.switch(basic.lt(index, 0), bound, index)
    return st.getitem(st.arange(bound), inside)


def ravel_multi_index(
    multi_index: Sequence[Any], dims: Any, mode: str = "raise", order: str = "C"
) -> Variable:
    """The flat int64 positions of the coordinates `multi_index` (one integer array per
    dimension) in an array of shape `dims` (`numpy.ravel_multi_index`): `mode` `"raise"`
    (an `IndexError` for a coordinate out of range), `"wrap"` or `"clip"`; `order`
    `"C"` (row-major) or `"F"`."""
    if not isinstance(multi_index, tuple | list):
        raise TypeError("multi_index must be a tuple or a list.")
    if mode not in ("raise", "wrap", "clip") or order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: bad mode {mode!r} or order {order!r}")
    coords = [basic.as_tensor_variable(i) for i in multi_index]
    for c in coords:
        _integer(c, "multi_index")
    shape = _dims_list(dims, len(coords))
    if len(shape) != len(coords):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(shape)}")
    fixed = [_bounded(basic.cast(c, "int64"), d, mode) for c, d in zip(coords, shape, strict=True)]
    axes = list(range(len(fixed))) if order == "F" else list(reversed(range(len(fixed))))
    flat: Any = 0
    stride: Any = 1
    for axis in axes:
        flat = flat + fixed[axis] * stride
        stride = stride * shape[axis]
    return basic.cast(flat, "int64")


def _bounded(c: Variable, d: Variable, mode: str) -> Variable:
    if mode == "wrap":
        return c % d
    if mode == "clip":
        return basic.minimum(basic.maximum(c, 0), d - 1)
    return _checked(c, d)


def unravel_index(
    indices: Any, dims: Any, order: str = "C", ndim: int | None = None
) -> tuple[Variable, ...]:
    """The coordinates (a tuple of int64 arrays shaped like `indices`) of the flat
    positions `indices` in an array of shape `dims` (`numpy.unravel_index`); a position
    outside the array is an `IndexError`. `ndim` gives the length of a symbolic `dims`."""
    if order not in ("C", "F"):
        raise ValueError(f"unravel_index: order must be 'C' or 'F', got {order!r}")
    v = basic.as_tensor_variable(indices)
    _integer(v, "indices")
    shape = _dims_list(dims, ndim)
    size: Any = 1
    for d in shape:
        size = size * d
    rest = _checked(basic.cast(v, "int64"), basic.as_tensor_variable(size))
    axes = list(reversed(range(len(shape)))) if order == "C" else list(range(len(shape)))
    coords: dict[int, Variable] = {}
    for axis in axes:
        coords[axis] = rest % shape[axis]
        rest = rest // shape[axis]
    return tuple(coords[a] for a in range(len(shape)))


# --- permutations (Theano's tensor.basic) ----------------------------------------------


def inverse_permutation(perm: Any) -> Variable:
    """The inverse of the permutation vector `perm` (of each row, for a matrix or more):
    `out[perm[i]] = i`."""
    p = basic.as_tensor_variable(perm)
    _integer(p, "inverse_permutation")
    if p.ndim == 0:
        raise TypeError("inverse_permutation: perm must be a vector (or rows of them)")
    axis = p.ndim - 1
    positions = basic.cast(st.arange(st.shape_i(p, axis)), p.dtype)
    positions = basic.fill(p, positions)
    zeros = basic.zeros_like(p)
    target = _gather_key(zeros, p, axis)
    return st.set_subtensor(st.getitem(zeros, target), positions)


def _gather_key(x: Variable, indices: Variable, axis: int) -> tuple[Any, ...]:
    key: list[Any] = []
    for a in range(x.ndim):
        if a == axis:
            key.append(indices)
            continue
        pattern: list[Any] = ["x"] * x.ndim
        pattern[a] = 0
        key.append(basic.dimshuffle(st.arange(st.shape_i(x, a)), *pattern))
    return tuple(key)


def permute_row_elements(x: Any, y: Any, inverse: Any = 0) -> Variable:
    """The elements of each row (last axis) of `x` permuted by the matching row of the
    integer `y` (`out[..., i] = x[..., y[..., i]]`; with `inverse`, `out[..., y[..., i]]
    = x[..., i]`). `x` and `y` broadcast over their leading axes."""
    v = basic.as_tensor_variable(x)
    p = basic.as_tensor_variable(y)
    _integer(p, "permute_row_elements")
    if v.ndim == 0 or p.ndim == 0:
        raise TypeError("permute_row_elements: x and y need at least one dimension")
    if inverse:
        p = inverse_permutation(p)
    rank = max(v.ndim, p.ndim)
    if v.ndim < rank:
        v = basic.dimshuffle(v, *(["x"] * (rank - v.ndim)), *range(v.ndim))
    if p.ndim < rank:
        p = basic.dimshuffle(p, *(["x"] * (rank - p.ndim)), *range(p.ndim))
    key: list[Any] = []
    for a in range(rank - 1):
        pattern: list[Any] = ["x"] * rank
        pattern[a] = 0
        if v.broadcastable[a] and not p.broadcastable[a]:  # x's one row serves every row
            positions = st.arange(st.shape_i(p, a)) * 0
        else:
            positions = st.arange(st.shape_i(v, a))
        key.append(basic.dimshuffle(positions, *pattern))
    return st.getitem(v, (*key, p))
