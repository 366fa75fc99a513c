"""Kernels and shape rules of the scan, sort and search ops (`ag.cumsum`, `ag.cumprod`,
`ag.sort`, `ag.argsort`, `ag.searchsorted`; `dialects/ag/extra_ops.py`).

Accepts those ops (through `ag-to-loops`, which calls the kernels registered here) and
leaves `scf.for`/`scf.if` loops over `memref.load`/`memref.store`, `arith` ops and, for
the sorts, two temporary `i64` buffers of one row's length (`memref.alloc`/`dealloc`).

- `cumsum`/`cumprod`: for every position of the other axes, one loop along the axis
  carrying the running sum or product.
- `argsort`: a bottom-up merge sort of positions, stable, per row: the positions
  `0..n-1`, then passes of width 1, 2, 4, ... merging neighbouring runs into a scratch
  row and copying it back. Elements compare by `before` (NaN after every number, as
  NumPy), and a tie takes the left run's element, so equal elements keep their order.
  `sort` sorts the positions of a row into a scratch row and gathers the elements.
- `searchsorted`: a branch-free binary search per value, `bit_length(n)` halvings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, i64
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.loops import ag_scalar
from arignote.lowering.loops.ag_kernels import KERNELS
from arignote.lowering.loops.ag_shapes import SHAPE_RULES, RuleResult, same_rule
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Dim,
    as_index,
    for_loop,
    index_constant,
    load,
    loop_nest,
    store,
)

Row = Callable[[Builder, SSAValue], list[SSAValue]]
"""The full indices of element `k` (an `index`) of the row being worked on."""


# --- small index helpers ---------------------------------------------------------------


def _cmp(b: Builder, predicate: str, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(arith.CmpiOp(x, y, predicate)).result


def _sel(b: Builder, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(arith.SelectOp(cond, x, y)).result


def _min(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return _sel(b, _cmp(b, "slt", x, y), x, y)


def _add(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(arith.AddiOp(x, y)).result


def _to_index(b: Builder, x: SSAValue) -> SSAValue:
    return b.insert(arith.IndexCastOp(x, IndexType())).result


def _to_i64(b: Builder, x: SSAValue) -> SSAValue:
    return b.insert(arith.IndexCastOp(x, i64)).result


def _not(b: Builder, x: SSAValue) -> SSAValue:
    return b.insert(arith.XOrIOp(x, ag_scalar.constant(b, 1, x.type))).result


def before(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    """`x` sorts strictly before `y`: NumPy's order, where NaN comes after every number
    (and two NaNs are equal); bools compare false < true."""
    t = x.type
    if ag.is_bool(t):
        return _cmp(b, "ult", x, y)
    if not ag.is_float(t):
        return _cmp(b, "slt", x, y)
    less = b.insert(arith.CmpfOp(x, y, "olt")).result
    x_number = b.insert(arith.CmpfOp(x, x, "ord")).result
    y_nan = b.insert(arith.CmpfOp(y, y, "uno")).result
    return b.insert(arith.OrIOp(less, b.insert(arith.AndIOp(x_number, y_nan)).result)).result


def _other_axes(b: Builder, x: Buffer, axis: int) -> list[SSAValue]:
    return [as_index(b, d) for i, d in enumerate(x.dims) if i != axis]


def _row(ivs: Sequence[SSAValue], axis: int) -> Row:
    def at(_: Builder, k: SSAValue) -> list[SSAValue]:
        indices = list(ivs)
        indices.insert(axis, k)
        return indices

    return at


def _count_loop(b: Builder, n: SSAValue, body: Callable[[Builder, SSAValue], None]) -> None:
    def step(inner: Builder, k: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        body(inner, k)
        return ()

    for_loop(b, index_constant(b, 0), n, index_constant(b, 1), (), step)


def _bit_length(b: Builder, n: SSAValue) -> SSAValue:
    """`n.bit_length()` for an `index` `n >= 0`: the number of halvings that take a
    range of `n + 1` candidates to one, and of doublings from 1 that reach `n`."""

    def step(inner: Builder, p: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
        one = index_constant(inner, 1)
        power = inner.insert(arith.ShLIOp(one, p)).result
        reached = _cmp(inner, "sle", power, n)
        return [_sel(inner, reached, _add(inner, acc[0], one), acc[0])]

    (bits,) = for_loop(
        b,
        index_constant(b, 0),
        index_constant(b, 62),
        index_constant(b, 1),
        [index_constant(b, 0)],
        step,
    )
    return bits


# --- cumsum / cumprod ------------------------------------------------------------------


def emit_cumulative(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """For each position of the other axes, a loop along `axis` carrying the running
    sum (product) and storing it at every step."""
    assert isinstance(op, ag.CumulativeOp)
    (x,), axis = ins, op.axis_value
    is_sum = isinstance(op, ag.CumSumOp)
    combine = ag_scalar.BINARY[ag.AddOp if is_sum else ag.MulOp]
    n = as_index(b, x.dims[axis])

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        at = _row(ivs, axis)

        def step(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
            total = combine(body, acc[0], load(body, x, at(body, k)))
            store(body, total, out, at(body, k))
            return [total]

        init = ag_scalar.constant(inner, 0 if is_sum else 1, x.element_type)
        for_loop(inner, index_constant(inner, 0), n, index_constant(inner, 1), [init], step)

    loop_nest(b, _other_axes(b, x, axis), row)


# --- argsort / sort --------------------------------------------------------------------


@dataclass(frozen=True)
class Lanes:
    """One row being sorted: its keys and, for `argsort`, their original positions
    (`i64`), moved together."""

    keys: SSAValue
    positions: SSAValue | None

    def pick(self, b: Builder, other: Lanes, first: SSAValue) -> Lanes:
        """`self` where `first` holds, else `other` (a choice between memrefs)."""
        keys = _sel(b, first, self.keys, other.keys)
        if self.positions is None or other.positions is None:
            return Lanes(keys, None)
        return Lanes(keys, _sel(b, first, self.positions, other.positions))


def _take(
    b: Builder,
    lanes: tuple[Lanes, Lanes],
    right: SSAValue,
    heads: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
    k: SSAValue,
) -> None:
    """`dst[k] = src[j]` if `right` else `src[i]`, in every lane; `heads` are `i`, `j`
    and the keys already read there."""
    src, dst = lanes
    i, j, key_i, key_j = heads
    b.insert(memref.StoreOp.get(_sel(b, right, key_j, key_i), dst.keys, [k]))
    if src.positions is None or dst.positions is None:
        return
    a = b.insert(memref.LoadOp.get(src.positions, [i])).res
    c = b.insert(memref.LoadOp.get(src.positions, [j])).res
    b.insert(memref.StoreOp.get(_sel(b, right, c, a), dst.positions, [k]))


def _merge_run(
    b: Builder, src: Lanes, dst: Lanes, bounds: tuple[SSAValue, SSAValue, SSAValue]
) -> None:
    """Merges the sorted runs `src[start:mid]` and `src[mid:end]` into `dst[start:end]`;
    a tie takes the left run's element (stable). Branch-free: both heads are read (at
    clamped positions) and one is kept."""
    start, mid, end = bounds
    one = index_constant(b, 1)
    last_left = b.insert(arith.SubiOp(mid, one)).result
    last = b.insert(arith.SubiOp(end, one)).result

    def step(body: Builder, k: SSAValue, ij: Sequence[SSAValue]) -> Sequence[SSAValue]:
        i, j = ij
        at = [_min(body, i, last_left), _min(body, j, last)]
        a = body.insert(memref.LoadOp.get(src.keys, [at[0]])).res
        c = body.insert(memref.LoadOp.get(src.keys, [at[1]])).res
        right_first = body.insert(arith.OrIOp(_cmp(body, "sge", i, mid), before(body, c, a)))
        right_left = _cmp(body, "slt", j, end)
        take_right = body.insert(arith.AndIOp(right_left, right_first.result)).result
        _take(body, (src, dst), take_right, (at[0], at[1], a, c), k)
        step_one = index_constant(body, 1)
        return [
            _sel(body, take_right, i, _add(body, i, step_one)),
            _sel(body, take_right, _add(body, j, step_one), j),
        ]

    for_loop(b, start, end, one, [start, mid], step)


def _merge_sort(b: Builder, first: Lanes, second: Lanes, n: SSAValue, passes: SSAValue) -> Lanes:
    """Sorts the row in `first` by `passes` merge passes of widths 1, 2, 4, ...,
    alternating between `first` and `second`; returns the lanes holding the result."""

    def one_pass(inner: Builder, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        even = _is_even(inner, p)
        src, dst = first.pick(inner, second, even), second.pick(inner, first, even)
        width = inner.insert(arith.ShLIOp(index_constant(inner, 1), p)).result
        double = _add(inner, width, width)

        def run(body: Builder, start: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            mid = _min(body, _add(body, start, width), n)
            end = _min(body, _add(body, start, double), n)
            _merge_run(body, src, dst, (start, mid, end))
            return ()

        for_loop(inner, index_constant(inner, 0), n, double, (), run)
        return ()

    for_loop(b, index_constant(b, 0), passes, index_constant(b, 1), (), one_pass)
    return first.pick(b, second, _is_even(b, passes))


def _is_even(b: Builder, p: SSAValue) -> SSAValue:
    low = b.insert(arith.AndIOp(p, index_constant(b, 1))).result
    return _cmp(b, "eq", low, index_constant(b, 0))


def _row_buffer(b: Builder, n: SSAValue, element: Attribute) -> SSAValue:
    return b.insert(memref.AllocOp([n], [], MemRefType(element, [DYNAMIC_INDEX]))).memref


def emit_sort(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per row: its keys copied into a scratch row (with their positions `0..n-1` for
    `argsort`), merge-sorted between two scratch rows, and the sorted keys (`sort`) or
    positions (`argsort`) stored into the result row. `ceil(log2 n)` passes."""
    assert isinstance(op, ag.AxisOp)
    (x,), axis = ins, op.axis_value
    n = as_index(b, x.dims[axis])
    passes = _bit_length(b, b.insert(arith.SubiOp(n, index_constant(b, 1))).result)
    passes = _sel(b, _cmp(b, "sgt", n, index_constant(b, 1)), passes, index_constant(b, 0))
    with_positions = isinstance(op, ag.ArgSortOp)
    scratch = [
        Lanes(
            _row_buffer(b, n, x.element_type),
            _row_buffer(b, n, i64) if with_positions else None,
        )
        for _ in range(2)
    ]

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        at = _row(ivs, axis)
        first = scratch[0]

        def fill(body: Builder, k: SSAValue) -> None:
            body.insert(memref.StoreOp.get(load(body, x, at(body, k)), first.keys, [k]))
            if first.positions is not None:
                body.insert(memref.StoreOp.get(_to_i64(body, k), first.positions, [k]))

        _count_loop(inner, n, fill)
        result = _merge_sort(inner, first, scratch[1], n, passes)
        source = result.positions if result.positions is not None else result.keys

        def store_row(body: Builder, k: SSAValue) -> None:
            store(body, body.insert(memref.LoadOp.get(source, [k])).res, out, at(body, k))

        _count_loop(inner, n, store_row)

    loop_nest(b, _other_axes(b, x, axis), row)
    for lanes in scratch:
        for buffer in (lanes.keys, lanes.positions):
            if buffer is not None:
                b.insert(memref.DeallocOp.get(buffer))


# --- searchsorted ----------------------------------------------------------------------


def emit_searchsorted(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per value `v`, `lo = 0, hi = n` halved `bit_length(n)` times: the middle element
    goes left of `v` (`before(a, v)`, or `not before(v, a)` for side "right") or not."""
    assert isinstance(op, ag.SearchSortedOp)
    sorted_, values = ins
    n = as_index(b, sorted_.dims[0])
    halvings = _bit_length(b, n)
    last = b.insert(arith.SubiOp(n, index_constant(b, 1))).result
    right = op.right

    def element(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        v = load(inner, values, ivs)

        def halve(body: Builder, _: SSAValue, lohi: Sequence[SSAValue]) -> Sequence[SSAValue]:
            lo, hi = lohi
            one = index_constant(body, 1)
            mid = body.insert(arith.ShRUIOp(_add(body, lo, hi), one)).result
            a = load(body, sorted_, [_min(body, mid, last)])
            go_right = _not(body, before(body, v, a)) if right else before(body, a, v)
            active = _cmp(body, "slt", lo, hi)
            up = body.insert(arith.AndIOp(active, go_right)).result
            down = body.insert(arith.AndIOp(active, _not(body, go_right))).result
            return [_sel(body, up, _add(body, mid, one), lo), _sel(body, down, mid, hi)]

        zero, one = index_constant(inner, 0), index_constant(inner, 1)
        lo, _ = for_loop(inner, zero, halvings, one, [zero, n], halve)
        store(inner, _to_i64(inner, lo), out, ivs)

    loop_nest(b, [as_index(b, d) for d in out.dims], element)


def searchsorted_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """The values' shape; no checks."""
    return list(dims[1]), []


SHAPE_RULES.update(
    {
        ag.CumSumOp: same_rule,
        ag.CumProdOp: same_rule,
        ag.SortOp: same_rule,
        ag.ArgSortOp: same_rule,
        ag.SearchSortedOp: searchsorted_rule,
    }
)
KERNELS.update(
    {
        ag.CumSumOp: emit_cumulative,
        ag.CumProdOp: emit_cumulative,
        ag.SortOp: emit_sort,
        ag.ArgSortOp: emit_sort,
        ag.SearchSortedOp: emit_searchsorted,
    }
)
