"""Sorting (Theano's `theano.tensor.sort`): `sort`, `argsort`, `topk`, `argtopk` and
`topk_and_argtopk`, with Theano's op classes `SortOp`, `ArgSortOp` and `TopKOp`.

`sort` and `argsort` are the `ag.sort` and `ag.argsort` ops: a stable merge sort in
native code, NumPy's order (NaN after every number). Every `kind` gives that stable
order (NumPy's `"stable"`; its `"quicksort"` and `"heapsort"` may order equal elements
otherwise, which only `argsort` can show). `topk` takes the last (or first) `|kth|`
positions of `argsort` and gathers them: NaN counts as the largest value, as in
`numpy.partition`.
"""

from __future__ import annotations

from typing import Any

from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic
from arignote.tensor import subtensor as st

_KINDS = ("quicksort", "mergesort", "heapsort", "stable")
_INT_DTYPES = ("int8", "int16", "int32", "int64")


def _axis(axis: Any, ndim: int, what: str) -> int:
    """`axis` (an int in `-ndim..ndim-1`) as a non-negative int."""
    if isinstance(axis, Variable):
        if not isinstance(axis, basic.TensorConstant) or axis.ndim != 0:
            raise TypeError(f"{what}: axis must be an int, None or a constant, got {axis}")
        axis = int(axis.data)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{what}: axis must be an int or None, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{what}: axis {axis} is out of bounds for a tensor of {ndim} dimensions")
    return axis % ndim


def flat(v: Variable) -> Variable:
    """`v` flattened (a vector as it is)."""
    return v if v.ndim == 1 else st.flatten(v)


def _prepared(a: Any, axis: Any, kind: str, order: Any, what: str) -> tuple[Variable, int]:
    v = basic.as_tensor_variable(a)
    if kind not in _KINDS:
        raise ValueError(f"{what}: kind must be one of {', '.join(_KINDS)}, got {kind!r}")
    if order is not None:
        raise ValueError(f"{what}: order applies to structured arrays, which arignote lacks")
    if axis is None:
        return flat(v), 0
    if v.ndim == 0:
        raise ValueError(f"{what}: a 0-d tensor has no axis {axis}; use axis=None")
    return v, _axis(axis, v.ndim, what)


def sort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
    """A sorted copy of `a` along `axis` (`None`: the flattened `a`), ascending, NaNs last
    (`numpy.sort`). The gradient sends each output gradient back to the position its
    element came from."""
    v, ax = _prepared(a, axis, kind, order, "sort")
    return apply_op(ag.SortOp(v.value, ax))


def argsort(a: Any, axis: Any = -1, kind: str = "quicksort", order: Any = None) -> Variable:
    """The int64 positions along `axis` that sort `a` (`None`: the flattened `a`), stable
    (equal elements keep their order), NaNs last (`numpy.argsort(kind="stable")`)."""
    v, ax = _prepared(a, axis, kind, order, "argsort")
    return apply_op(ag.ArgSortOp(v.value, ax))


def take_along_axis(x: Variable, indices: Variable, axis: int) -> Variable:
    """`numpy.take_along_axis`: `out[..., i, ...] = x[..., indices[..., i, ...], ...]`,
    `indices` of `x`'s rank (its other axes of `x`'s lengths, or static 1s that
    broadcast). Integer-array indexing with an `arange` on each other axis."""
    key: list[Any] = []
    for a in range(x.ndim):
        if a == axis:
            key.append(indices)
            continue
        pattern: list[Any] = ["x"] * x.ndim
        pattern[a] = 0
        key.append(basic.dimshuffle(st.arange(st.shape_i(x, a)), *pattern))
    return st.getitem(x, tuple(key))


# --- topk ------------------------------------------------------------------------------


def _kth(kth: Any) -> int | Variable:
    if isinstance(kth, Variable):
        if kth.ndim != 0 or kth.dtype not in _INT_DTYPES:
            raise TypeError(f"topk: kth must be an integer scalar, got {kth} of type {kth.type}")
        if isinstance(kth, basic.TensorConstant):
            kth = int(kth.data)
        else:
            return kth
    if not isinstance(kth, int) or isinstance(kth, bool):
        raise TypeError(f"topk: kth must be an integer, got {kth!r}")
    if kth == 0:
        raise ValueError("topk: kth cannot be zero")
    return kth


def _along(x: Variable, axis: int, part: slice) -> tuple[Any, ...]:
    return (slice(None),) * axis + (part,)


def _topk_positions(x: Variable, kth: int | Variable, axis: int) -> Variable:
    """The positions of the `kth` largest (`kth > 0`, largest first) or `-kth`
    smallest (smallest first) elements along `axis`."""
    order = argsort(x, axis)
    largest = st.getitem(order, _along(x, axis, slice(None, None, -1)))
    n = ag.tensor_type(x.value).get_shape()[axis]
    if isinstance(kth, int) and n != ag.DYNAMIC:
        if abs(kth) > n:
            raise ValueError(f"topk: kth cannot be larger than the size of specified axis {axis}")
        count: int | Variable = abs(kth)
    else:
        count = _checked_count(basic.abs(basic.as_tensor_variable(kth)), st.shape_i(x, axis))
    if isinstance(kth, int):
        return st.getitem(largest if kth > 0 else order, _along(x, axis, slice(None, count)))
    largest = st.getitem(largest, _along(x, axis, slice(None, count)))
    smallest = st.getitem(order, _along(x, axis, slice(None, count)))
    return basic.switch(basic.gt(kth, 0), largest, smallest)


def _checked_count(count: Variable, n: Any) -> Variable:
    """`count`, checked at run time to be in `1..n`: position `count - 1` (`n` for a
    zero count) indexes `arange(n)`, whose bounds check raises `IndexError` (a
    `ValueError`) otherwise."""
    last = basic.switch(basic.eq(count, 0), n, count - 1)
    return st.getitem(st.arange(n), last) + 1


def _topk(x: Any, kth: Any, axis: Any, idx_dtype: str) -> tuple[Variable, Variable]:
    v = basic.as_tensor_variable(x)
    if idx_dtype not in _INT_DTYPES:
        raise TypeError(f"topk: idx_dtype must be an integer dtype, got {idx_dtype!r}")
    k = _kth(kth)
    if axis is None:
        v, ax = flat(v), 0
    else:
        if v.ndim == 0:
            raise ValueError("topk: a 0-d tensor has no axis; use axis=None")
        ax = _axis(axis, v.ndim, "topk")
    positions = _topk_positions(v, k, ax)
    return take_along_axis(v, positions, ax), basic.cast(positions, idx_dtype)


def topk(
    x: Any, kth: Any, axis: Any = -1, sorted: bool = True, idx_dtype: str = "int64"
) -> Variable:
    """The `kth` largest elements along `axis` (`None`: the flattened `x`), largest
    first; a negative `kth` gives the `-kth` smallest, smallest first. The gradient
    goes back to the positions taken."""
    return _topk(x, kth, axis, idx_dtype)[0]


def argtopk(
    x: Any, kth: Any, axis: Any = -1, sorted: bool = True, idx_dtype: str = "int64"
) -> Variable:
    """The positions (`idx_dtype`) of `topk(x, kth, axis)` along `axis`; among equal
    elements the later position comes first for `kth > 0`."""
    return _topk(x, kth, axis, idx_dtype)[1]


def topk_and_argtopk(
    x: Any, kth: Any, axis: Any = -1, sorted: bool = True, idx_dtype: str = "int64"
) -> tuple[Variable, Variable]:
    """`(topk(...), argtopk(...))`."""
    return _topk(x, kth, axis, idx_dtype)


# --- Theano's op classes ---------------------------------------------------------------


class SortOp:
    """`SortOp(kind, order)(a, axis)`: `sort(a, axis, kind, order)`."""

    def __init__(self, kind: str, order: Any = None):
        self.kind, self.order = kind, order

    def __call__(self, a: Any, axis: Any = -1) -> Variable:
        return sort(a, axis, self.kind, self.order)


class ArgSortOp(SortOp):
    """`ArgSortOp(kind, order)(a, axis)`: `argsort(a, axis, kind, order)`."""

    def __call__(self, a: Any, axis: Any = -1) -> Variable:
        return argsort(a, axis, self.kind, self.order)


class TopKOp:
    """`TopKOp(axis, sorted, idx_dtype, return_values, return_indices)(x, kth)`: the
    list of the requested results of `topk_and_argtopk`."""

    def __init__(
        self,
        axis: int = -1,
        sorted: bool = True,
        idx_dtype: str = "int64",
        return_values: bool = True,
        return_indices: bool = True,
    ):
        self.axis, self.sorted, self.idx_dtype = axis, sorted, idx_dtype
        self.return_values, self.return_indices = return_values, return_indices

    def __call__(self, x: Any, kth: Any) -> list[Variable]:
        values, indices = _topk(x, kth, self.axis, self.idx_dtype)
        return [r for r, on in ((values, self.return_values), (indices, self.return_indices)) if on]
