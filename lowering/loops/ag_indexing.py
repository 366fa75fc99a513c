"""Shape rules and kernels of the indexing, reshaping, joining and allocation ops.

`ag.subtensor`, `ag.set_subtensor`, `ag.inc_subtensor`, `ag.advanced_subtensor`,
`ag.advanced_set_subtensor`, `ag.advanced_inc_subtensor`, `ag.reshape`,
`ag.concatenate`, `ag.alloc` and `ag.arange`. Their result shapes depend on operand
*values* (slice bounds, indices, lengths), so their rules are *value* shape rules
(`ag_shapes.VALUE_SHAPE_RULES`): they read 0-d operands through a `ShapeContext` and emit
`arith` code at its builder. In `@f__shape` that code, and the checks (an index out of
range, a zero step, an element count that differs, ...), run before any result memory
is touched; `@f` evaluates the same code again and trusts it.

Index arithmetic folds: an `Idx` is an int (known at compile time) or an `index` SSA
value, and the helpers below only emit IR when an operand is not known, so static
slices cost nothing. Importing this module registers the rules and kernels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StridedLayoutAttr,
    i1,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.llvm.llvm_utils import integer_attr
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_kernels import KERNELS, broadcast_indices, copy, elementwise
from arignote.lowering.loops.ag_shapes import (
    VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
    op_label,
    shape_text,
)
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Dim,
    as_index,
    copy_in_order,
    index_constant,
    load,
    loop_nest,
    reduction_nest,
    store,
)
from arignote.lowering.op_builder import build

Idx = int | SSAValue
"""An index-typed quantity: known (int) or an `index` SSA value."""
Cond = bool | SSAValue
"""A condition: known (bool) or an `i1` SSA value."""


# --- folding index arithmetic ----------------------------------------------------------


def _v(b: Builder, x: Idx) -> SSAValue:
    return as_index(b, x)


def add(b: Builder, x: Idx, y: Idx) -> Idx:
    if isinstance(x, int) and isinstance(y, int):
        return x + y
    if x == 0:
        return y
    if y == 0:
        return x
    return b.insert(build(arith.AddiOp, _v(b, x), _v(b, y))).result


def sub(b: Builder, x: Idx, y: Idx) -> Idx:
    if isinstance(x, int) and isinstance(y, int):
        return x - y
    if y == 0:
        return x
    return b.insert(build(arith.SubiOp, _v(b, x), _v(b, y))).result


def mul(b: Builder, x: Idx, y: Idx) -> Idx:
    if isinstance(x, int) and isinstance(y, int):
        return x * y
    if x == 1:
        return y
    if y == 1:
        return x
    return b.insert(build(arith.MuliOp, _v(b, x), _v(b, y))).result


def _truncated_quotient(x: int, y: int) -> int:
    """`x / y` rounded toward zero, as `arith.divsi` (exact for any ints, unlike
    `int(x / y)`, which goes through a float)."""
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


def div(b: Builder, x: Idx, y: Idx) -> Idx:
    """Truncating division; `y` must be nonzero (callers guard it)."""
    if isinstance(x, int) and isinstance(y, int):
        return _truncated_quotient(x, y) if y else 0
    if y == 1:
        return x
    return b.insert(build(arith.DivSIOp, _v(b, x), _v(b, y))).result


def rem(b: Builder, x: Idx, y: Idx) -> Idx:
    """Truncating remainder; `y` must be nonzero (callers guard it)."""
    if isinstance(x, int) and isinstance(y, int):
        return x - y * _truncated_quotient(x, y) if y else 0
    if y == 1:
        return 0
    return b.insert(build(arith.RemSIOp, _v(b, x), _v(b, y))).result


_PY_COMPARE = {
    "eq": lambda x, y: x == y,
    "ne": lambda x, y: x != y,
    "slt": lambda x, y: x < y,
    "sle": lambda x, y: x <= y,
    "sgt": lambda x, y: x > y,
    "sge": lambda x, y: x >= y,
}


def cmp(b: Builder, predicate: str, x: Idx, y: Idx) -> Cond:
    if isinstance(x, int) and isinstance(y, int):
        return _PY_COMPARE[predicate](x, y)
    return b.insert(build(arith.CmpiOp, _v(b, x), _v(b, y), predicate)).result


def _c(b: Builder, c: Cond) -> SSAValue:
    if isinstance(c, bool):
        return b.insert(build(arith.ConstantOp, integer_attr(int(c), i1))).result
    return c


def both(b: Builder, x: Cond, y: Cond) -> Cond:
    if isinstance(x, bool):
        return y if x else False
    if isinstance(y, bool):
        return x if y else False
    return b.insert(build(arith.AndIOp, x, y)).result


def either(b: Builder, x: Cond, y: Cond) -> Cond:
    if isinstance(x, bool):
        return True if x else y
    if isinstance(y, bool):
        return True if y else x
    return b.insert(build(arith.OrIOp, x, y)).result


def negate(b: Builder, x: Cond) -> Cond:
    if isinstance(x, bool):
        return not x
    return b.insert(build(arith.XOrIOp, x, _c(b, True))).result


def select(b: Builder, cond: Cond, x: Idx, y: Idx) -> Idx:
    if isinstance(cond, bool):
        return x if cond else y
    if isinstance(x, int) and isinstance(y, int) and x == y:
        return x
    return b.insert(build(arith.SelectOp, cond, _v(b, x), _v(b, y))).result


def smax(b: Builder, x: Idx, y: Idx) -> Idx:
    return select(b, cmp(b, "sgt", x, y), x, y)


def smin(b: Builder, x: Idx, y: Idx) -> Idx:
    return select(b, cmp(b, "slt", x, y), x, y)


def _holds(
    message: str, ok: Cond, a: Dim, b_: Dim, shown: tuple[Dim, ...] | None = None
) -> list[Check]:
    """A `holds` check, or none when `ok` is known to be true."""
    if ok is True:
        return []
    if ok is False:
        raise AssertionError(f"a check fails at compile time: {message}")
    return [Check(message, a, b_, "holds", ok, shown)]


def _equal(message: str, a: Dim, b_: Dim, shown: tuple[Dim, ...] | None = None) -> list[Check]:
    check = Check(message, a, b_, shown=shown)
    return [] if check.is_static else [check]


# --- ag.subtensor and its updates ------------------------------------------------------


@dataclass(frozen=True)
class AxisAccess:
    """How the region of a subtensor reads one input axis: index `first + i * step`
    for `i` in `0..length` (a slice), or the single index `first` (`length` None)."""

    first: Idx
    step: Idx
    length: Idx | None


def _dynamic_entries(
    op: ag.SubtensorBase, context_value: Sequence[Idx]
) -> list[tuple[int, Idx, Idx, Idx]]:
    """`(kind, start, stop, step)` per axis, the dynamic entries replaced by values."""
    values = iter(context_value)
    result = []
    for kind, *parts in op.entries():
        resolved = [next(values) if p == ag.DYNAMIC_VALUE else p for p in parts]
        result.append((kind, *resolved))
    return result


def _wrap(b: Builder, value: Idx, n: Idx) -> Idx:
    """A negative index counted from the end: `value + n` if `value < 0`."""
    if isinstance(value, int):
        return value if value >= 0 else add(b, value, n)
    return select(b, cmp(b, "slt", value, 0), add(b, value, n), value)


def _pick(b: Builder, up: Cond, if_up: Callable[[], Idx], if_down: Callable[[], Idx]) -> Idx:
    """`if_up()` or `if_down()` by the step's direction, only the needed one when known."""
    if isinstance(up, bool):
        return if_up() if up else if_down()
    return select(b, up, if_up(), if_down())


def _slice_bound(b: Builder, value: Idx, n: Idx, up: Cond, none_up: Idx, none_down: Idx) -> Idx:
    """A slice bound as Python's `slice.indices` makes it: absent → the default for the
    step's direction; negative → counted from the end; then clipped to `[0, n]` for a
    positive step, `[-1, n - 1]` for a negative one."""
    if value == ag.SLICE_NONE:
        return _pick(b, up, lambda: none_up, lambda: none_down)
    wrapped = _wrap(b, value, n)
    return _pick(
        b,
        up,
        lambda: smin(b, smax(b, wrapped, 0), n),
        lambda: smin(b, smax(b, wrapped, -1), sub(b, n, 1)),
    )


def subtensor_geometry(
    b: Builder, op: ag.SubtensorBase, dims: Sequence[Dim], dynamic: Sequence[Idx]
) -> tuple[list[AxisAccess], list[Check]]:
    """Python's slicing and NumPy's integer indexing per axis, as folded index code,
    and the checks: each integer index within `[-n, n)`, each dynamic step nonzero."""
    label = op_label(op)
    accesses: list[AxisAccess] = []
    checks: list[Check] = []
    for axis, (kind, start, stop, step) in enumerate(_dynamic_entries(op, dynamic)):
        n: Idx = dims[axis]
        if kind == ag.INDEX:
            wrapped = _wrap(b, start, n)
            ok = both(b, cmp(b, "sge", wrapped, 0), cmp(b, "slt", wrapped, n))
            message = f"{label}: index %d is out of bounds for axis {axis} with size %d"
            checks += _holds(message, ok, start, n)
            accesses.append(AxisAccess(wrapped, 0, None))
            continue
        if step == ag.SLICE_NONE:
            step = 1
        if not isinstance(step, int):
            nonzero = cmp(b, "ne", step, 0)
            message = f"{label}: slice step of axis {axis} must not be zero"
            checks += _holds(message, nonzero, step, 0, shown=())
            step = select(b, nonzero, step, 1)  # never divide by zero, even unchecked
        up = cmp(b, "sgt", step, 0)

        down_start = sub(b, n, 1) if start == ag.SLICE_NONE and up is not True else 0
        first = _slice_bound(b, start, n, up, 0, down_start)
        last = _slice_bound(b, stop, n, up, n, -1)
        accesses.append(AxisAccess(first, step, _slice_count(b, first, last, step, up)))
    return accesses, checks


def _slice_count(b: Builder, first: Idx, last: Idx, step: Idx, up: Cond) -> Idx:
    """The length of `range(first, last, step)` for bounds already clipped to
    `[-1, n]`: `(last - first -+ 1) / step + 1` when the range is not empty, else 0.

    Every intermediate lies within `[-n - 1, n + 1]`, whatever the step: no overflow
    even for a step of -2**63, whose magnitude `ceil(d / |step|)` would need."""
    distance = sub(b, last, first)
    if isinstance(up, bool):
        nonempty = cmp(b, "sgt" if up else "slt", distance, 0)
    else:
        nonempty = select_cond(b, up, cmp(b, "sgt", distance, 0), cmp(b, "slt", distance, 0))
    inner = _pick(b, up, lambda: sub(b, distance, 1), lambda: add(b, distance, 1))
    count = add(b, div(b, inner, step), 1)
    return select(b, nonempty, count, 0)


def _region_dims(accesses: Sequence[AxisAccess]) -> list[Idx]:
    return [a.length for a in accesses if a.length is not None]


def _dynamic_operand_values(context: ShapeContext, first: int, count: int) -> list[Idx]:
    return [context.value(first + k) for k in range(count)]


def _value_fits(
    op: Operation, value_dims: Sequence[Dim], value_shape: Sequence[int], region: Sequence[Idx]
) -> list[Check]:
    """Checks that a value (right-aligned, static 1s stretching) fits the region."""
    checks: list[Check] = []
    value_text, value_shown = shape_text(value_dims)
    region_text, region_shown = shape_text(region)
    shown = (*value_shown, *region_shown)
    offset = len(region) - len(value_dims)
    for k, (d, s) in enumerate(zip(value_dims, value_shape, strict=True)):
        if s == 1:
            continue
        message = (
            f"{op_label(op)}: a value of shape {value_text} does not fit the region of "
            f"shape {region_text} (dimension {k})"
        )
        checks += _equal(message, d, region[offset + k], shown)
    return checks


def subtensor_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.SubtensorOp)
    values = _dynamic_operand_values(context, 1, len(op.dynamic))
    accesses, checks = subtensor_geometry(context.builder, op, dims[0], values)
    return list(_region_dims(accesses)), checks


def subtensor_update_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.SubtensorUpdateOp)
    values = _dynamic_operand_values(context, 2, len(op.dynamic))
    accesses, checks = subtensor_geometry(context.builder, op, dims[0], values)
    value_shape = ag.tensor_type(op.value).get_shape()
    checks += _value_fits(op, dims[1], value_shape, _region_dims(accesses))
    return list(dims[0]), checks


def _read_dynamic(b: Builder, ins: Sequence[Buffer], first: int) -> list[Idx]:
    return [b.insert(arith.IndexCastOp(load(b, x, []), IndexType())).result for x in ins[first:]]


def _input_indices(
    b: Builder, accesses: Sequence[AxisAccess], ivs: Sequence[SSAValue]
) -> list[SSAValue]:
    region = iter(ivs)
    indices = []
    for a in accesses:
        if a.length is None:
            indices.append(_v(b, a.first))
        else:
            indices.append(_v(b, add(b, a.first, mul(b, next(region), a.step))))
    return indices


def emit_subtensor(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out[i...] = x[first + i * step, ...]`."""
    assert isinstance(op, ag.SubtensorOp)
    x = ins[0]
    accesses, _ = subtensor_geometry(b, op, x.dims, _read_dynamic(b, ins, 1))

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        store(inner, load(inner, x, _input_indices(inner, accesses, ivs)), out, ivs)

    parallel_loops.independent_nest(b, [as_index(b, d) for d in out.dims], body)


def _scatter(
    b: Builder,
    op: Operation,
    out: Buffer,
    value: Buffer,
    region: Sequence[Idx],
    target: object,
) -> None:
    """`out[target(ivs)] = value[ivs]` (set) or `+=` (inc) over the region, with the value
    broadcast (right-aligned, static 1s read at 0)."""
    accumulate = isinstance(op, ag.IncSubtensorOp | ag.AdvancedIncSubtensorOp)
    zero = index_constant(b, 0)
    add_scalar = ag_scalar.BINARY[ag.AddOp]

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        indices = target(inner, ivs)  # type: ignore[operator]
        v = load(inner, value, broadcast_indices(value, ivs, zero))
        if accumulate:
            current = load(inner, out, indices)
            if ag.is_bool(out.element_type):
                v = inner.insert(arith.OrIOp(current, v)).result
            else:
                v = add_scalar(inner, current, v)
        store(inner, v, out, indices)

    loop_nest(b, [as_index(b, d) for d in region], body)


def emit_subtensor_update(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """A copy of `x`, then the region written (or incremented) with the value."""
    assert isinstance(op, ag.SubtensorUpdateOp)
    x, value = ins[0], ins[1]
    copy(b, x, out)
    accesses, _ = subtensor_geometry(b, op, x.dims, _read_dynamic(b, ins, 2))
    region = _region_dims(accesses)
    _scatter(b, op, out, value, region, lambda inner, ivs: _input_indices(inner, accesses, ivs))


# --- advanced indexing -----------------------------------------------------------------


def _index_broadcast(
    op: Operation, index_dims: Sequence[Sequence[Dim]], index_shapes: Sequence[Sequence[int]]
) -> tuple[list[Dim], list[Check]]:
    """The broadcast shape of the index arrays, as `ag_shapes.broadcast_rule` does."""
    rank = max(len(s) for s in index_shapes)
    result: list[Dim] = []
    checks: list[Check] = []
    for axis in range(rank):
        present = [
            d[axis - rank + len(d)]
            for d, s in zip(index_dims, index_shapes, strict=True)
            if axis - rank + len(s) >= 0 and s[axis - rank + len(s)] != 1
        ]
        statics = [d for d in present if isinstance(d, int)]
        result.append(statics[0] if statics else present[0] if present else 1)
        text, shown = _shape_list(index_dims)
        message = f"{op_label(op)}: index shapes {text} differ at dimension {axis}"
        for a, c in zip(present, present[1:], strict=False):
            checks += _equal(message, a, c, shown)
    return result, checks


def _shape_list(shapes: Sequence[Sequence[Dim]]) -> tuple[str, tuple[Dim, ...]]:
    """Shapes as a Python list of them (`[(2,), (%d,)]`), and the lengths they report."""
    parts = [shape_text(dims) for dims in shapes]
    text = "[" + ", ".join(t for t, _ in parts) + "]"
    return text, tuple(v for _, values in parts for v in values)


def _bounds_check(b: Builder, op: Operation, indices: Buffer, axis: int, n: Dim) -> list[Check]:
    """A loop over an index array finding its first element outside `[-n, n)`."""
    t = indices.element_type
    assert isinstance(t, IntegerType)
    n64 = b.insert(arith.IndexCastOp(as_index(b, n), i64)).result
    zero64 = b.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
    minus_n = b.insert(arith.SubiOp(zero64, n64)).result
    false = _c(b, False)

    def step(
        inner: Builder, ivs: Sequence[SSAValue], carried: Sequence[SSAValue]
    ) -> Sequence[SSAValue]:
        found, bad = carried
        v = load(inner, indices, ivs)
        if t.width.data < 64:  # an unsigned index is never negative: zero-extend it
            ext = arith.ExtUIOp if ag.is_unsigned(t) else arith.ExtSIOp
            v = inner.insert(ext(v, i64)).result
        low = inner.insert(arith.CmpiOp(v, minus_n, "slt")).result
        high = inner.insert(arith.CmpiOp(v, n64, "sge")).result
        out_of_range = inner.insert(arith.OrIOp(low, high)).result
        first = inner.insert(arith.AndIOp(out_of_range, negate(inner, found))).result  # type: ignore[arg-type]
        return [
            inner.insert(arith.OrIOp(found, out_of_range)).result,
            inner.insert(arith.SelectOp(first, v, bad)).result,
        ]

    bounds = [as_index(b, d) for d in indices.dims]
    found, bad = reduction_nest(b, bounds, [false, zero64], step)
    message = f"{op_label(op)}: index %d is out of bounds for axis {axis} with size %d"
    return _holds(message, negate(b, found), bad, n64)


def _advanced_region(
    op: Operation,
    dims: Sequence[Sequence[Dim]],
    context: ShapeContext,
    first_index: int,
) -> tuple[list[Dim], list[Check]]:
    index_values = op.operands[first_index:]
    k = len(index_values)
    shapes = [ag.tensor_type(v).get_shape() for v in index_values]
    broadcast, checks = _index_broadcast(op, dims[first_index:], shapes)
    if context.emit_checks:
        for axis in range(k):
            buffer = context.buffer(first_index + axis)
            checks += _bounds_check(context.builder, op, buffer, axis, dims[0][axis])
    return [*broadcast, *dims[0][k:]], checks


def advanced_subtensor_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    return _advanced_region(op, dims, context, 1)


def advanced_update_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    region, checks = _advanced_region(op, dims, context, 2)
    value_shape = ag.tensor_type(op.operands[1]).get_shape()
    checks += _value_fits(op, dims[1], value_shape, region)
    return list(dims[0]), checks


def _gather_indices(
    b: Builder, x: Buffer, indices: Sequence[Buffer], ivs: Sequence[SSAValue], depth: int
) -> list[SSAValue]:
    """Input indices for region indices `ivs`: the (wrapped) index array elements, then
    the remaining axes."""
    zero = index_constant(b, 0)
    outer = ivs[:depth]
    result = []
    for axis, idx in enumerate(indices):
        raw = load(b, idx, broadcast_indices(idx, outer, zero))
        v = b.insert(arith.IndexCastOp(raw, IndexType())).result
        wrapped = _wrap(b, v, x.dims[axis])
        result.append(_v(b, wrapped))
    return [*result, *ivs[depth:]]


def emit_advanced_subtensor(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    x, indices = ins[0], ins[1:]
    depth = len(out.dims) - (len(x.dims) - len(indices))

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        source = _gather_indices(inner, x, indices, ivs, depth)
        store(inner, load(inner, x, source), out, ivs)

    loop_nest(b, [as_index(b, d) for d in out.dims], body)


def emit_advanced_update(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """A copy of `x`, then the indexed elements written (or incremented, in order, so
    that repeated indices accumulate)."""
    x, value, indices = ins[0], ins[1], ins[2:]
    copy(b, x, out)
    region, _ = _advanced_region_dims(op, x, indices)
    depth = len(region) - (len(x.dims) - len(indices))
    _scatter(
        b, op, out, value, region, lambda inner, ivs: _gather_indices(inner, x, indices, ivs, depth)
    )


def _advanced_region_dims(
    op: Operation, x: Buffer, indices: Sequence[Buffer]
) -> tuple[list[Dim], list[Check]]:
    shapes = [i.shape for i in indices]
    broadcast, checks = _index_broadcast(op, [i.dims for i in indices], shapes)
    return [*broadcast, *x.dims[len(indices) :]], checks


# --- ag.reshape ------------------------------------------------------------------------


def _product(b: Builder, values: Sequence[Idx]) -> Idx:
    total: Idx = 1
    for v in values:
        total = mul(b, total, v)
    return total


def reshape_dims(
    b: Builder, op: ag.ReshapeOp, input_dims: Sequence[Dim], dynamic: Sequence[Idx]
) -> tuple[list[Idx], list[Check]]:
    """The result lengths (a -1 entry, static or dynamic, inferred) and the checks."""
    label = op_label(op)
    values = iter(dynamic)
    entries = [next(values) if e == ag.DYNAMIC_VALUE else e for e in op.shape_list]
    text = "[" + ", ".join(str(e) if isinstance(e, int) else "%d" for e in entries) + "]"
    shown = tuple(e for e in entries if not isinstance(e, int))
    checks: list[Check] = []
    invalid = f"{label}: invalid shape {text}"
    for e in entries:
        if not isinstance(e, int):
            checks += _holds(invalid, cmp(b, "sge", e, -1), e, -1, shown)
    inferred = [cmp(b, "eq", e, -1) for e in entries]
    known = _product(b, [select(b, i, 1, e) for i, e in zip(inferred, entries, strict=True)])
    count: Idx = 0
    for i in inferred:
        count = add(b, count, select(b, i, 1, 0))
    checks += _holds(invalid, cmp(b, "sle", count, 1), count, 1, shown)
    total = _product(b, input_dims)
    safe = select(b, cmp(b, "eq", known, 0), 1, known)
    missing = div(b, total, safe)
    one_inferred = cmp(b, "eq", count, 1)
    divisible = both(b, cmp(b, "ne", known, 0), cmp(b, "eq", rem(b, total, safe), 0))
    ok = select_cond(b, one_inferred, divisible, cmp(b, "eq", total, known))
    message = f"{label}: cannot reshape %d elements into shape {text}"
    checks += _holds(message, ok, total, known, (total, *shown))
    dims = [select(b, i, missing, e) for i, e in zip(inferred, entries, strict=True)]
    return dims, checks


def select_cond(b: Builder, cond: Cond, x: Cond, y: Cond) -> Cond:
    if isinstance(cond, bool):
        return x if cond else y
    if isinstance(x, bool) and isinstance(y, bool) and x == y:
        return x
    return b.insert(arith.SelectOp(cond, _c(b, x), _c(b, y))).result


def reshape_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.ReshapeOp)
    values = _dynamic_operand_values(context, 1, len(op.dynamic))
    result, checks = reshape_dims(context.builder, op, dims[0], values)
    return list(result), checks


def _unravel(b: Builder, flat: Idx, dims: Sequence[Dim]) -> list[SSAValue]:
    indices: list[SSAValue] = []
    for d in reversed(dims):
        indices.insert(0, _v(b, rem(b, flat, d)) if d != 1 else index_constant(b, 0))
        flat = div(b, flat, d) if d != 1 else flat
    return indices


def emit_reshape(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Row-major order kept: each result element's flat position, unravelled over the
    input's lengths (any input layout)."""
    x = ins[0]
    strides: list[Idx] = []
    running: Idx = 1
    for d in reversed(out.dims):
        strides.insert(0, running)
        running = mul(b, running, d)

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        flat: Idx = 0
        for iv, stride in zip(ivs, strides, strict=True):
            flat = add(inner, flat, mul(inner, iv, stride))
        store(inner, load(inner, x, _unravel(inner, flat, x.dims)), out, ivs)

    row_strides: list[Idx] = []
    running = 1
    for d in reversed(out.dims[:-1]):
        row_strides.insert(0, running)
        running = mul(b, running, d)

    def general(g: Builder) -> None:
        if len(x.dims) < 2 or len(out.dims) < 2:
            loop_nest(g, [as_index(g, d) for d in out.dims], body)
            return
        # the last axis kept (a view such as `x[::-1]` merged or split along its leading
        # axes): the division per row only, hoisted out of the inner loop by LLVM
        same = g.insert(
            arith.CmpiOp(as_index(g, x.dims[-1]), as_index(g, out.dims[-1]), "eq")
        ).result
        rows, elements = Block(), Block()
        loop_nest(Builder(InsertPoint.at_end(rows)), [as_index(g, d) for d in out.dims], by_row)
        loop_nest(Builder(InsertPoint.at_end(elements)), [as_index(g, d) for d in out.dims], body)
        for block in (rows, elements):
            block.add_op(scf.YieldOp())
        g.insert(scf.IfOp(same, [], Region(rows), Region(elements)))

    def by_row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        row: Idx = 0
        for iv, stride in zip(ivs[:-1], row_strides, strict=True):
            row = add(inner, row, mul(inner, iv, stride))
        at = [*_unravel(inner, row, x.dims[:-1]), ivs[-1]]
        store(inner, load(inner, x, at), out, ivs)

    # contiguous buffers (the usual case): one flat loop, no division per element
    copy_in_order(b, x, out, general)


# --- ag.concatenate --------------------------------------------------------------------


def concatenate_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.ConcatenateOp)
    axis = op.axis_value
    b = context.builder
    result: list[Dim] = []
    checks: list[Check] = []
    for a in range(len(dims[0])):
        column = [d[a] for d in dims]
        if a == axis:
            total: Idx = 0
            for d in column:
                total = add(b, total, d)
            result.append(total)
            continue
        statics = [d for d in column if isinstance(d, int)]
        reference = statics[0] if statics else column[0]
        result.append(reference)
        for k, d in enumerate(column):
            if d is reference:
                continue
            other = next(j for j, c in enumerate(column) if c is reference)
            (k_text, k_shown), (other_text, other_shown) = (
                shape_text(dims[k]),
                shape_text(dims[other]),
            )
            message = (
                f"{op_label(op)}: dimension {a} of operand #{k} (shape {k_text}) differs "
                f"from operand #{other} (shape {other_text})"
            )
            checks += _equal(message, d, reference, (*k_shown, *other_shown))
    return result, checks


def emit_concatenate(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Each operand copied into the view of `out` at its offset along the axis (a copy
    whose loop nest is one flat loop when both are contiguous, as on axis 0)."""
    assert isinstance(op, ag.ConcatenateOp)
    axis = op.axis_value
    offset: Idx = 0
    for x in ins:
        offsets = [offset if a == axis else 0 for a in range(len(x.dims))]
        layout = StridedLayoutAttr([None] * len(x.dims), None)
        view_type = MemRefType(out.element_type, x.shape, layout)
        view = memref.SubviewOp.get(out.memref, offsets, list(x.dims), [1] * len(x.dims), view_type)
        copy(b, x, Buffer(b.insert(view).result, x.dims))
        offset = add(b, offset, x.dims[axis])


# --- ag.alloc --------------------------------------------------------------------------


def alloc_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.AllocOp)
    b = context.builder
    values = iter(_dynamic_operand_values(context, 1, len(op.dynamic)))
    result: list[Idx] = []
    checks: list[Check] = []
    lengths = [e if e != ag.DYNAMIC_VALUE else next(values) for e in op.shape_list]
    text, shown = shape_text(lengths)
    for v in lengths:
        if isinstance(v, int):
            result.append(v)
            continue
        message = f"{op_label(op)}: shape {text} has a negative length"
        checks += _holds(message, cmp(b, "sge", v, 0), v, 0, shown)
        result.append(v)
    checks += _value_fits(op, dims[0], ag.tensor_type(op.value).get_shape(), result)
    return list(result), checks


def emit_alloc(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    elementwise(b, out, ins[:1], lambda _, values: values[0])


# --- ag.arange -------------------------------------------------------------------------


def _arange_length(
    b: Builder, start: SSAValue, stop: SSAValue, step: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """(`max(0, ceil((stop - start) / step))` as an index, whether `step != 0`)."""
    t = start.type
    if ag.is_float(t):
        zero = ag_scalar.constant(b, 0.0, t)
        nonzero = b.insert(arith.CmpfOp(step, zero, "une")).result
        span = b.insert(arith.SubfOp(stop, start)).result
        quotient = b.insert(arith.DivfOp(span, step)).result
        from xdsl.dialects import math

        ceiled = b.insert(math.CeilOp(quotient)).result
        # NaN or a negative count gives 0 (fptosi saturates NaN to 0)
        count = b.insert(arith.FPToSIOp(ceiled, i64)).result
    else:
        if isinstance(t, IntegerType) and t.width.data < 64:
            extend = arith.ExtUIOp if ag.is_unsigned(t) else arith.ExtSIOp
            start, stop, step = (b.insert(extend(v, i64)).result for v in (start, stop, step))
        zero = b.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
        one = b.insert(arith.ConstantOp(IntegerAttr(1, i64))).result
        nonzero = b.insert(arith.CmpiOp(step, zero, "ne")).result
        safe = b.insert(arith.SelectOp(nonzero, step, one)).result
        # ceil(a / s) == -floor(-a / s)
        negative_span = b.insert(arith.SubiOp(start, stop)).result
        floored = b.insert(arith.FloorDivSIOp(negative_span, safe)).result
        count = b.insert(arith.SubiOp(zero, floored)).result
    zero64 = b.insert(arith.ConstantOp(IntegerAttr(0, i64))).result
    count = b.insert(arith.MaxSIOp(count, zero64)).result
    count = b.insert(arith.SelectOp(nonzero, count, zero64)).result
    return b.insert(arith.IndexCastOp(count, IndexType())).result, nonzero


def arange_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    b = context.builder
    start, stop, step = (context.scalar(k) for k in range(3))
    length, nonzero = _arange_length(b, start, stop, step)
    message = f"{op_label(op)}: the step must not be zero"
    return [length], _holds(message, nonzero, 0, 0, ())


def emit_arange(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out[i] = start + i * step`."""
    start, step = load(b, ins[0], []), load(b, ins[2], [])
    t = out.element_type

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        i = inner.insert(arith.IndexCastOp(ivs[0], i64)).result
        i = ag_scalar.cast(inner, i, t)
        mul_scalar = ag_scalar.BINARY[ag.MulOp]
        add_scalar = ag_scalar.BINARY[ag.AddOp]
        store(inner, add_scalar(inner, start, mul_scalar(inner, i, step)), out, ivs)

    loop_nest(b, [as_index(b, out.dims[0])], body)


# --- registration ----------------------------------------------------------------------

VALUE_SHAPE_RULES.update(
    {
        ag.SubtensorOp: subtensor_rule,
        ag.SetSubtensorOp: subtensor_update_rule,
        ag.IncSubtensorOp: subtensor_update_rule,
        ag.AdvancedSubtensorOp: advanced_subtensor_rule,
        ag.AdvancedSetSubtensorOp: advanced_update_rule,
        ag.AdvancedIncSubtensorOp: advanced_update_rule,
        ag.ReshapeOp: reshape_rule,
        ag.ConcatenateOp: concatenate_rule,
        ag.AllocOp: alloc_rule,
        ag.ArangeOp: arange_rule,
    }
)
KERNELS.update(
    {
        ag.SubtensorOp: emit_subtensor,
        ag.SetSubtensorOp: emit_subtensor_update,
        ag.IncSubtensorOp: emit_subtensor_update,
        ag.AdvancedSubtensorOp: emit_advanced_subtensor,
        ag.AdvancedSetSubtensorOp: emit_advanced_update,
        ag.AdvancedIncSubtensorOp: emit_advanced_update,
        ag.ReshapeOp: emit_reshape,
        ag.ConcatenateOp: emit_concatenate,
        ag.AllocOp: emit_alloc,
        ag.ArangeOp: emit_arange,
    }
)
