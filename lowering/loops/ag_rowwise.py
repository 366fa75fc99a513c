"""`ag.gemv_pair` in `ag-to-loops`: its shape rule and its kernel, one pass over the rows.

For each row `i` of `A` the kernel computes `d_i = A[i]·x` (an inner loop whose float
additions may be reassociated, so that LLVM vectorizes the reduction), runs the op's
region on `d_i` and row `i` of the row operands with the scalar emitters of `ag_scalar`
(the region holds only elementwise ops on 0-d tensors), stores `u_i` and `g_i`, and adds
`alpha * g_i * A[i]` to `r` (a second inner loop, over the row still in the L1 cache).
`r` starts as `beta * r0`, or zeros. Rows go by blocks of `ROW_BLOCK`: one loop computes
the block's dot products (each `x[k]` loaded once for all of them), a loop over the block
runs the region (its code emitted once), one loop adds the block's rows to `r` (each
`r[k]` loaded and stored once); the remaining rows go one by one. The inner loops read
`A` and `x` with a static unit stride: when their memory has another stride, a contiguous
copy is read instead (chosen at run time; the common contiguous case copies nothing).

Shape checks (in `@f__shape`): `A`'s column count must equal `len(x)` and `len(r0)`,
and a vector row operand that is not a static 1 must have `A`'s row count. Their messages
are those of the ops the user wrote (the dot product, the accumulation, the elementwise
op), as the interpreter's (`runtime/interpreter_rowwise.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    TensorType,
)
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_control import CONTROL_FLOW
from arignote.lowering.loops.ag_kernels import copy
from arignote.lowering.loops.ag_shapes import (
    Check,
    accumulated_message,
    contracted_checks,
    op_label,
    shapes_text,
)
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

REDUCTION_FLAGS = FastMathFlagsAttr([FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT])
"""The dot product's adds may be reassociated (vector partial sums, as BLAS does)."""

UPDATE_FLAGS = FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])
"""`r[k] + c * A[i, k]` may become one fused multiply-add."""


# --- shape rule ------------------------------------------------------------------------


def _equal(checks: list[Check], check: Check) -> None:
    if not check.is_static:
        checks.append(check)


def _static(value: SSAValue, dims: Sequence[Dim]) -> list[Dim]:
    """`dims` with the static lengths of `value`'s type filled in."""
    shape = ag.tensor_type(value).get_shape()
    return [d if s == DYNAMIC_INDEX else s for s, d in zip(shape, dims, strict=True)]


def gemv_pair_rule(
    op: Operation, dims: Sequence[Sequence[Dim]]
) -> tuple[list[list[Dim]], list[Check]]:
    """`[[rows], [rows], [columns]]` of `A`, and the checks of the module doc."""
    assert isinstance(op, ag.GemvPairOp)
    label = op_label(op)
    rows, cols = dims[0]
    checks = contracted_checks(op, dims[0], dims[1], cols, dims[1][0])
    if op.acc:
        message, shown = accumulated_message(op, dims[4], [cols])
        _equal(checks, Check(message, cols, dims[4][0], shown=shown))
    first_row = 3 + len(op.acc)
    for k, value in enumerate(op.rows):
        shape = ag.tensor_type(value).get_shape()
        if len(shape) == 1 and shape[0] != 1:
            row = dims[first_row + k]
            text, shown = shapes_text([[rows], row])
            message = f"{label}: operand shapes {text} do not match at dimension 0"
            _equal(checks, Check(message, rows, row[0], shown=shown))
    results = [_static(r, d) for r, d in zip(op.results, ([rows], [rows], [cols]), strict=True)]
    return results, checks


# --- the region, one row at a time -----------------------------------------------------

RowEmitter = Callable[[Builder, Operation, Sequence[SSAValue]], SSAValue]


def _binary(b: Builder, op: Operation, values: Sequence[SSAValue]) -> SSAValue:
    return ag_scalar.BINARY[type(op)](b, values[0], values[1])


def _unary(b: Builder, op: Operation, values: Sequence[SSAValue]) -> SSAValue:
    return ag_scalar.UNARY[type(op)](b, values[0])


def _select(b: Builder, op: Operation, values: Sequence[SSAValue]) -> SSAValue:
    return b.insert(arith.SelectOp(*values)).result


def _element(op: Operation):
    t = op.results[0].type
    assert isinstance(t, TensorType)
    return t.element_type


def _cast(b: Builder, op: Operation, values: Sequence[SSAValue]) -> SSAValue:
    return ag_scalar.cast(b, values[0], _element(op))


def _constant(b: Builder, op: Operation, values: Sequence[SSAValue]) -> SSAValue:
    assert isinstance(op, ag.ConstantOp)
    attr = op.value
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    (value,) = attr.get_values()
    return ag_scalar.constant(b, value, _element(op))


ROW_EMITTERS: dict[type[Operation], RowEmitter] = {
    **{c: _binary for c in ag.BINARY_OPS},
    **{c: _unary for c in ag.UNARY_OPS},
    ag.SelectOp: _select,
    ag.CastOp: _cast,
    ag.ConstantOp: _constant,
}
"""Region op class → the emitter of its scalar code."""


def run_region(b: Builder, block: Block, args: Sequence[SSAValue]) -> list[SSAValue]:
    """The scalar code of `block` (elementwise ops on 0-d tensors) on scalar `args`;
    returns the scalars it yields."""
    values: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
    for op in block.ops:
        if isinstance(op, ag.YieldOp):
            return [values[v] for v in op.values]
        emit = ROW_EMITTERS.get(type(op))
        if emit is None:
            raise NotImplementedError(f"ag-to-loops: no row emitter for {op.name}")
        values[op.results[0]] = emit(b, op, [values[o] for o in op.operands])
    raise NotImplementedError("ag-to-loops: ag.gemv_pair region without ag.yield")


# --- the kernel ------------------------------------------------------------------------


def _unit_stride_type(buffer: Buffer) -> MemRefType:
    """`buffer`'s type with a static unit innermost stride (other strides and the offset
    dynamic)."""
    rank = len(buffer.shape)
    layout = StridedLayoutAttr([None] * (rank - 1) + [1], None)
    return MemRefType(buffer.element_type, buffer.shape, layout)


def _is_contiguous(buffer: Buffer) -> bool:
    return isinstance(buffer.type.layout, NoneAttr)


def _unit_or_short(b: Builder, buffer: Buffer) -> SSAValue:
    """Whether the innermost stride is 1 or the innermost length at most 1."""
    meta = b.insert(memref.ExtractStridedMetaDataOp(buffer.memref))
    one = index_constant(b, 1)
    unit = b.insert(arith.CmpiOp(meta.strides[-1], one, "eq")).result
    short = b.insert(arith.CmpiOp(as_index(b, buffer.dims[-1]), one, "sle")).result
    return b.insert(arith.OrIOp(unit, short)).result


def _cast(b: Builder, value: SSAValue, t: MemRefType) -> SSAValue:
    return b.insert(memref.CastOp.get(value, t)).results[0]


def unit_stride_view(b: Builder, buffer: Buffer) -> tuple[Buffer, SSAValue | None]:
    """`buffer` seen with a static unit innermost stride, and the temporary to free after
    its last use (None when `buffer` is contiguous).

    When the memory has another stride, a contiguous copy stands in for it: the copy is
    sized 0 (and its loop runs no iteration) when the stride is 1 already, and an
    `arith.select` between the two descriptors picks the one to read, so that a single
    kernel reads either."""
    if _is_contiguous(buffer):
        return buffer, None
    ok = _unit_or_short(b, buffer)
    zero = index_constant(b, 0)
    sizes = [b.insert(arith.SelectOp(ok, zero, as_index(b, d))).result for d in buffer.dims]
    temp_type = MemRefType(buffer.element_type, [DYNAMIC_INDEX] * len(sizes))
    temp = b.insert(memref.AllocOp(sizes, [], temp_type)).memref
    copy(b, Buffer(buffer.memref, tuple(sizes)), Buffer(temp, tuple(sizes)))
    chosen = b.insert(arith.SelectOp(ok, buffer.memref, _cast(b, temp, buffer.type))).result
    return Buffer(_cast(b, chosen, _unit_stride_type(buffer)), buffer.dims), temp


def _init_result(b: Builder, op: ag.GemvPairOp, out: Buffer, acc: Sequence[Buffer]) -> None:
    """`r = beta * r0`, or zeros."""
    t = out.element_type
    beta = load(b, acc[0], []) if acc else None

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        if beta is None:
            store(inner, ag_scalar.constant(inner, 0.0, t), out, ivs)
            return
        value = inner.insert(arith.MulfOp(beta, load(inner, acc[1], ivs))).result
        store(inner, value, out, ivs)

    loop_nest(b, [as_index(b, d) for d in out.dims], body)


def _dot_rows(b: Builder, a: Buffer, x: Buffer, rows: Sequence[SSAValue]) -> list[SSAValue]:
    """`A[i]·x` for each row `i` of `rows`, in one loop over `x` (additions
    reassociable)."""
    zero, one = index_constant(b, 0), index_constant(b, 1)
    inits = [ag_scalar.constant(b, 0.0, a.element_type) for _ in rows]

    def step(inner: Builder, k: SSAValue, carried: Sequence[SSAValue]) -> list[SSAValue]:
        xk = load(inner, x, [k])
        sums: list[SSAValue] = []
        for i, total in zip(rows, carried, strict=True):
            product = inner.insert(arith.MulfOp(load(inner, a, [i, k]), xk, REDUCTION_FLAGS))
            sums.append(inner.insert(arith.AddfOp(total, product, REDUCTION_FLAGS)).result)
        return sums

    return list(for_loop(b, zero, as_index(b, a.dims[1]), one, inits, step))


def _add_rows(
    b: Builder, r: Buffer, a: Buffer, rows: Sequence[SSAValue], scales: Sequence[SSAValue]
) -> None:
    """`r += c * A[i]` for each row `i` of `rows` and its scale `c`, in one loop."""

    def body(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        (k,) = ivs
        total = load(inner, r, [k])
        for i, c in zip(rows, scales, strict=True):
            product = inner.insert(arith.MulfOp(c, load(inner, a, [i, k]), UPDATE_FLAGS))
            total = inner.insert(arith.AddfOp(total, product, UPDATE_FLAGS)).result
        store(inner, total, r, [k])

    loop_nest(b, [as_index(b, a.dims[1])], body)


def _row_reader(
    b: Builder, rows: Sequence[Buffer]
) -> Callable[[Builder, SSAValue], list[SSAValue]]:
    """A function giving row `i` of each row operand; 0-d ones are loaded once, here."""
    zero = index_constant(b, 0)
    scalars = [load(b, x, []) if not x.shape else None for x in rows]

    def read(inner: Builder, i: SSAValue) -> list[SSAValue]:
        values: list[SSAValue] = []
        for x, scalar in zip(rows, scalars, strict=True):
            if scalar is not None:
                values.append(scalar)
            else:
                values.append(load(inner, x, [zero if x.shape[0] == 1 else i]))
        return values

    return read


ROW_BLOCK = 8
"""Rows handled together: one loop over the columns computes their dot products (each
`x[k]` loaded once) and one adds them to `r` (each `r[k]` loaded and stored once)."""


@dataclass(frozen=True)
class _PairKernel:
    """What the row loops of one `ag.gemv_pair` need."""

    op: ag.GemvPairOp
    u: Buffer
    g: Buffer
    r: Buffer
    alpha: SSAValue
    read_rows: Callable[[Builder, SSAValue], list[SSAValue]]

    def row(self, b: Builder, i: SSAValue, d: SSAValue) -> SSAValue:
        """The region on row `i` (dot product `d`): stores `u_i`, `g_i`; returns
        `alpha * g_i`."""
        u_i, g_i = run_region(b, self.op.body.block, [d, *self.read_rows(b, i)])
        store(b, u_i, self.u, [i])
        store(b, g_i, self.g, [i])
        return b.insert(arith.MulfOp(self.alpha, g_i)).result

    def block(
        self, b: Builder, a: Buffer, x: Buffer, first: SSAValue, scratch: tuple[Buffer, Buffer]
    ) -> None:
        """Rows `first .. first + ROW_BLOCK - 1`: their dot products in one loop, the
        region in a loop over the block (one copy of its code), their updates of `r` in
        one loop."""
        rows = [first] + [
            b.insert(arith.AddiOp(first, index_constant(b, k))).result for k in range(1, ROW_BLOCK)
        ]
        sums, scales = scratch
        for k, d in enumerate(_dot_rows(b, a, x, rows)):
            store(b, d, sums, [index_constant(b, k)])

        def region_body(inner: Builder, k: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            i = inner.insert(arith.AddiOp(first, k)).result
            store(inner, self.row(inner, i, load(inner, sums, [k])), scales, [k])
            return []

        zero, one = index_constant(b, 0), index_constant(b, 1)
        for_loop(b, zero, index_constant(b, ROW_BLOCK), one, [], region_body)
        factors = [load(b, scales, [index_constant(b, k)]) for k in range(ROW_BLOCK)]
        _add_rows(b, self.r, a, rows, factors)

    def single(self, b: Builder, a: Buffer, x: Buffer, i: SSAValue) -> None:
        (d,) = _dot_rows(b, a, x, [i])
        _add_rows(b, self.r, a, [i], [self.row(b, i, d)])

    def loops(
        self, b: Builder, a: Buffer, x: Buffer, rows: tuple[SSAValue, SSAValue] | None = None
    ) -> None:
        """Blocks of `ROW_BLOCK` rows, then the remaining rows one by one; over the rows
        `[first, count)` of `rows` (all of them by default)."""
        first, count = rows if rows is not None else (index_constant(b, 0), as_index(b, a.dims[0]))
        block = index_constant(b, ROW_BLOCK)
        length = b.insert(arith.SubiOp(count, first)).result
        remainder = b.insert(arith.RemUIOp(length, block)).result
        blocked = b.insert(arith.SubiOp(count, remainder)).result
        scratch = tuple(
            Buffer(
                b.insert(memref.AllocaOp.get(a.element_type, shape=[ROW_BLOCK])).memref,
                (ROW_BLOCK,),
            )
            for _ in range(2)
        )

        def block_body(inner: Builder, i: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            self.block(inner, a, x, i, scratch)  # pyright: ignore[reportArgumentType]
            return []

        def single_body(inner: Builder, i: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
            self.single(inner, a, x, i)
            return []

        for_loop(b, first, blocked, block, [], block_body)
        for_loop(b, blocked, count, index_constant(b, 1), [], single_body)


def emit_gemv_pair(b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]):
    """`u`, `g` and `r` of `ag.gemv_pair` in one pass over the rows of `A`."""
    assert isinstance(op, ag.GemvPairOp)
    u_out, g_out, r_out = outs
    acc = ins[3 : 3 + len(op.acc)]
    alpha = load(b, ins[2], [])
    _init_result(b, op, r_out, acc)
    read_rows = _row_reader(b, ins[3 + len(op.acc) :])
    kernel = _PairKernel(op, u_out, g_out, r_out, alpha, read_rows)
    (a, a_temp), (x, x_temp) = unit_stride_view(b, ins[0]), unit_stride_view(b, ins[1])
    if parallel_loops.enabled() and not parallel_loops.runs_serially(
        a.dims[0], _row_work(r_out), ROW_BLOCK
    ):
        _parallel_rows(b, kernel, a, x)
    else:
        kernel.loops(b, a, x)
    for temp in (a_temp, x_temp):
        if temp is not None:
            b.insert(memref.DeallocOp.get(temp))


def _row_work(r: Buffer) -> Dim:
    """The work of one row of `ag.gemv_pair` when the column count is static (two
    units per column: its dot product and its update of `r`), else that count."""
    cols = r.dims[0]
    return 2 * cols if isinstance(cols, int) else cols


def _zero(b: Builder, r: Buffer) -> None:
    zero = ag_scalar.constant(b, 0.0, r.element_type)
    loop_nest(b, [as_index(b, d) for d in r.dims], lambda inner, ivs: store(inner, zero, r, ivs))


def _part_accumulator(
    b: Builder, kernel: _PairKernel, partials: SSAValue, part: SSAValue
) -> Buffer:
    """Where part `part` adds its rows: `r` for part 0, else its own zeroed row of
    `partials` (`(parts - 1) x columns`, flat)."""
    r = kernel.r
    cols = as_index(b, r.dims[0])
    zero, one = index_constant(b, 0), index_constant(b, 1)
    first = b.insert(arith.CmpiOp(part, zero, "eq")).result
    row = b.insert(arith.SubiOp(part, one)).result
    start = b.insert(arith.MuliOp(row, cols)).result
    start = b.insert(arith.SelectOp(first, zero, start)).result
    view_type = MemRefType(r.element_type, [DYNAMIC_INDEX], StridedLayoutAttr([1], None))
    view = b.insert(memref.SubviewOp.get(partials, [start], [cols], [1], view_type)).result
    chosen = b.insert(arith.SelectOp(first, _cast(b, r.memref, view_type), view)).result
    target = Buffer(chosen, r.dims)
    zeroed = Block()
    _zero(Builder(InsertPoint.at_end(zeroed)), target)
    zeroed.add_op(scf.YieldOp())
    others = b.insert(arith.CmpiOp(part, zero, "ne")).result
    b.insert(scf.IfOp(others, [], Region(zeroed), Region(Block([scf.YieldOp()]))))
    return target


def _parallel_rows(b: Builder, kernel: _PairKernel, a: Buffer, x: Buffer) -> None:
    """`kernel.loops` as an `ag.parallel_for` over blocks of rows: each part adds its
    rows into its own accumulator (part 0 into `r`), the others are added to `r` after."""
    r = kernel.r
    cols = as_index(b, r.dims[0])
    one = index_constant(b, 1)
    # half the pool's chunks: each adds a scratch row to zero and to sum
    half = b.insert(arith.DivUIOp(b.insert(ag.ParallelWidthOp()).width, index_constant(b, 2)))
    width = b.insert(arith.MaxUIOp(half.result, one)).result
    extra = b.insert(arith.SubiOp(width, one)).result
    size = b.insert(arith.MuliOp(extra, cols)).result
    flat = MemRefType(r.element_type, [DYNAMIC_INDEX])
    partials = b.insert(memref.AllocOp([size], [], flat)).memref

    def part(inner: Builder, begin: SSAValue, end: SSAValue, p: SSAValue) -> None:
        target = _part_accumulator(inner, kernel, partials, p)
        replace(kernel, r=target).loops(inner, a, x, (begin, end))

    work = _row_work(r)
    if not isinstance(work, int):
        work = b.insert(arith.MuliOp(cols, index_constant(b, 2))).result
    rows = as_index(b, a.dims[0])
    parts = parallel_loops.parallel_for(b, rows, work, ROW_BLOCK, part, max_parts=width)

    def add_part(inner: Builder, p: SSAValue, _: Sequence[SSAValue]) -> list[SSAValue]:
        start = inner.insert(arith.MuliOp(inner.insert(arith.SubiOp(p, one)).result, cols))

        def add(level: Builder, ivs: Sequence[SSAValue]) -> None:
            (k,) = ivs
            at = level.insert(arith.AddiOp(start.result, k)).result
            total = level.insert(
                arith.AddfOp(load(level, r, [k]), load(level, Buffer(partials, (size,)), [at]))
            )
            store(level, total.result, r, [k])

        loop_nest(inner, [cols], add)
        return []

    for_loop(b, one, parts, one, [], add_part)
    b.insert(memref.DeallocOp.get(partials))


class GemvPairLowering:
    """`ag.gemv_pair` for `ag-to-loops`, registered with the region-carrying ops
    (`ag_control.CONTROL_FLOW`): its shape rule and checks in `@f__shape`, its kernel
    into one destination per result in `@f`."""

    def shape(self, walker: Any, op: Operation) -> None:
        dims, checks = gemv_pair_rule(op, [walker.env[o] for o in op.operands])
        walker.env.update(zip(op.results, dims, strict=True))
        walker.emit_checks(checks)

    def compute(self, state: Any, op: Operation) -> None:
        operands = [state.env[o] for o in op.operands]
        dims, _ = gemv_pair_rule(op, [x.dims for x in operands])
        dests = [state.destination(r, d) for r, d in zip(op.results, dims, strict=True)]
        emit_gemv_pair(state.builder, op, dests, operands)
        state.env.update(zip(op.results, dests, strict=True))


CONTROL_FLOW[ag.GemvPairOp] = GemvPairLowering()
