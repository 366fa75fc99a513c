"""Shape rules and kernels of `ag.specify_shape`, `ag.assert` and `ag.flatnonzero`.

Both are *value* shape rules (`ag_shapes.VALUE_SHAPE_RULES`). `ag.specify_shape`'s rule
checks each operand length against its entry (a static one or a dynamic operand) and
its kernel copies the operand; `ag.assert`'s rule checks its condition and its kernel
copies the operand. `ag.flatnonzero`'s rule counts the nonzero elements of
its operand with a loop (in `@f__shape`, before any result memory is allocated; in `@f`
again, on the same data); its kernel walks the operand in row-major order, storing the
flat position of each nonzero element at the next free slot. Importing this module
registers the rules and kernels.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, i1, i64
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.loops import ag_scalar
from arignote.lowering.loops.ag_indexing import Idx, add, mul
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.ag_shapes import (
    VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
    op_label,
    shape_text,
)
from arignote.lowering.loops.loop_utils import Buffer, Dim, as_index, load, reduction_nest, store

# --- ag.specify_shape ------------------------------------------------------------------


def specify_shape_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.SpecifyShapeOp)
    values = iter(context.value(1 + k) for k in range(len(op.dynamic)))
    expected: list[Dim] = [e if e != ag.DYNAMIC_VALUE else next(values) for e in op.shape_list]
    text, shown = shape_text(dims[0])
    expected_text, expected_shown = shape_text(expected)
    message = f"{op_label(op)}: shape {text} differs from the specified shape {expected_text}"
    checks = [
        Check(message, d, e, shown=(*shown, *expected_shown))
        for d, e in zip(dims[0], expected, strict=True)
        if not (isinstance(d, int) and isinstance(e, int))  # the verifier checked those
    ]
    return expected, checks


def emit_specify_shape(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    copy(b, ins[0], out)


# --- ag.assert ------------------------------------------------------------------------


def assert_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    assert isinstance(op, ag.AssertOp)
    message = f"{op_label(op)}: {op.message.data.replace('%', '%%')}"
    ok = context.scalar(1)
    return list(dims[0]), [Check(message, 0, 0, "holds", ok, ())]


# --- ag.flatnonzero --------------------------------------------------------------------


def _is_nonzero(b: Builder, x: Buffer, ivs: Sequence[SSAValue]) -> SSAValue:
    """Whether `x[ivs]` is nonzero (NaN is), as an `i1`."""
    return ag_scalar.cast(b, load(b, x, ivs), i1)


def _count_nonzero(b: Builder, x: Buffer) -> SSAValue:
    """The number of nonzero elements of `x`, an `index`."""
    zero = b.insert(arith.ConstantOp(IntegerAttr(0, i64))).result

    def step(
        inner: Builder, ivs: Sequence[SSAValue], carried: Sequence[SSAValue]
    ) -> Sequence[SSAValue]:
        one = inner.insert(arith.ExtUIOp(_is_nonzero(inner, x, ivs), i64)).result
        return [inner.insert(arith.AddiOp(carried[0], one)).result]

    (count,) = reduction_nest(b, [as_index(b, d) for d in x.dims], [zero], step)
    return b.insert(arith.IndexCastOp(count, IndexType())).result


def flatnonzero_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[Dim], list[Check]]:
    return [_count_nonzero(context.builder, context.buffer(0))], []


def _flat_position(b: Builder, ivs: Sequence[SSAValue], dims: Sequence[Dim]) -> SSAValue:
    """The row-major flat position of `ivs` in an array of lengths `dims`, an `i64`."""
    flat: Idx = ivs[0]
    for iv, d in zip(ivs[1:], dims[1:], strict=True):
        flat = add(b, mul(b, flat, d), iv)
    return b.insert(arith.IndexCastOp(as_index(b, flat), i64)).result


def emit_flatnonzero(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """`out[k]` is the flat position of the `k`-th nonzero element of `x`."""
    x = ins[0]
    first = b.insert(arith.ConstantOp(IntegerAttr(0, i64))).result

    def step(
        inner: Builder, ivs: Sequence[SSAValue], carried: Sequence[SSAValue]
    ) -> Sequence[SSAValue]:
        nonzero = _is_nonzero(inner, x, ivs)
        then = Block()
        then_builder = Builder(InsertPoint.at_end(then))
        slot = then_builder.insert(arith.IndexCastOp(carried[0], IndexType())).result
        store(then_builder, _flat_position(then_builder, ivs, x.dims), out, [slot])
        then_builder.insert(scf.YieldOp())
        inner.insert(scf.IfOp(nonzero, [], Region(then), Region(Block([scf.YieldOp()]))))
        step_one = inner.insert(arith.ExtUIOp(nonzero, i64)).result
        return [inner.insert(arith.AddiOp(carried[0], step_one)).result]

    reduction_nest(b, [as_index(b, d) for d in x.dims], [first], step)


# --- registration ----------------------------------------------------------------------

VALUE_SHAPE_RULES.update(
    {
        ag.SpecifyShapeOp: specify_shape_rule,
        ag.AssertOp: assert_rule,
        ag.FlatNonzeroOp: flatnonzero_rule,
    }
)
KERNELS.update(
    {
        ag.SpecifyShapeOp: emit_specify_shape,
        ag.AssertOp: emit_specify_shape,  # a copy of the operand
        ag.FlatNonzeroOp: emit_flatnonzero,
    }
)
