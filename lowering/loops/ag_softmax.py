"""Kernels and shape rules of the row-wise softmax ops (`ag.softmax`, `ag.softmax_grad`;
`dialects/ag/softmax.py`).

Accepts those ops (through `ag-to-loops`, which calls the kernels registered here) and
leaves `scf.for` loops over `memref.load`/`memref.store` and `arith`/`math` ops. Each
row (every position of the leading axes) is three passes over the last axis:

- `softmax`: the row maximum `m`; `e_k = exp(x_k - m)` stored into the result while
  summing them; the row scaled by `1 / sum`. No `exp` overflows (`x_k - m <= 0`) and the
  sum is at least 1 (unless the row holds NaN or is empty).
- `logsoftmax`: the maximum `m`; the sum of `exp(x_k - m)`; `x_k - (m + log(sum))`.
- `softmax_grad`: `s = sum(dy_k * sm_k)`, then `dx_k = (dy_k - s) * sm_k`; finite
  wherever `dy` and `sm` are.

The sums may be reassociated (`fastmath<reassoc>`), so that LLVM vectorizes them.
Shape check (in `@f__shape`): `softmax_grad`'s `dy` and `sm` have the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import IndexType, IntegerType, i64
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.loops import ag_scalar, parallel_loops
from arignote.lowering.loops.ag_indexing import _bounds_check
from arignote.lowering.loops.ag_kernels import KERNELS, MULTI_KERNELS
from arignote.lowering.loops.ag_shapes import (
    MULTI_VALUE_SHAPE_RULES,
    SHAPE_RULES,
    VALUE_SHAPE_RULES,
    Check,
    RuleResult,
    ShapeContext,
    op_label,
    same_rule,
    shape_text,
)
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Dim,
    as_index,
    for_loop,
    index_constant,
    load,
    store,
)

_REASSOC = FastMathFlagsAttr([FastMathFlag.REASSOC])


def _leading(b: Builder, x: Buffer) -> list[SSAValue]:
    return [as_index(b, d) for d in x.dims[:-1]]


def _row_loop(
    b: Builder,
    n: SSAValue,
    inits: Sequence[SSAValue],
    step: object,
) -> Sequence[SSAValue]:
    """`for k in range(n)` carrying `inits`; `step(builder, k, carried) -> carried`."""
    return for_loop(b, index_constant(b, 0), n, index_constant(b, 1), inits, step)  # type: ignore[arg-type]


def _add(b: Builder, x: SSAValue, y: SSAValue) -> SSAValue:
    return b.insert(arith.AddfOp(x, y, _REASSOC)).result


def emit_softmax(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per row: max, exp and sum (stored), scale by the reciprocal of the sum."""
    (x,) = ins
    t = x.element_type
    n = as_index(b, x.dims[-1])
    exp = ag_scalar.UNARY[ag.OPS["exp"]]
    maximum = ag_scalar.BINARY[ag.MaximumOp]

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def at(k: SSAValue) -> list[SSAValue]:
            return [*ivs, k]

        def find_max(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            return [maximum(body, acc[0], load(body, x, at(k)))]

        (m,) = _row_loop(inner, n, [ag_scalar.constant(inner, -math.inf, t)], find_max)

        def exp_sum(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            shifted = body.insert(arith.SubfOp(load(body, x, at(k)), m)).result
            e = exp(body, shifted)
            store(body, e, out, at(k))
            return [_add(body, acc[0], e)]

        (total,) = _row_loop(inner, n, [ag_scalar.constant(inner, 0.0, t)], exp_sum)
        one = ag_scalar.constant(inner, 1.0, t)
        scale = inner.insert(arith.DivfOp(one, total)).result

        def normalize(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            value = body.insert(arith.MulfOp(load(body, out, at(k)), scale)).result
            store(body, value, out, at(k))
            return []

        _row_loop(inner, n, [], normalize)

    parallel_loops.independent_nest(b, _leading(b, x), row)


def emit_logsoftmax(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per row: max, sum of exp, then `x - (max + log(sum))` stored."""
    (x,) = ins
    t = x.element_type
    n = as_index(b, x.dims[-1])
    exp, log = ag_scalar.UNARY[ag.OPS["exp"]], ag_scalar.UNARY[ag.OPS["log"]]
    maximum = ag_scalar.BINARY[ag.MaximumOp]

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def at(k: SSAValue) -> list[SSAValue]:
            return [*ivs, k]

        def find_max(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            return [maximum(body, acc[0], load(body, x, at(k)))]

        (m,) = _row_loop(inner, n, [ag_scalar.constant(inner, -math.inf, t)], find_max)

        def exp_sum(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            shifted = body.insert(arith.SubfOp(load(body, x, at(k)), m)).result
            return [_add(body, acc[0], exp(body, shifted))]

        (total,) = _row_loop(inner, n, [ag_scalar.constant(inner, 0.0, t)], exp_sum)
        lse = inner.insert(arith.AddfOp(m, log(inner, total))).result

        def write(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            store(body, body.insert(arith.SubfOp(load(body, x, at(k)), lse)).result, out, at(k))
            return []

        _row_loop(inner, n, [], write)

    parallel_loops.independent_nest(b, _leading(b, x), row)


def emit_softmax_grad(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per row: `s = sum(dy * sm)`, then `dx = (dy - s) * sm`."""
    dy, sm = ins
    n = as_index(b, sm.dims[-1])

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        def at(k: SSAValue) -> list[SSAValue]:
            return [*ivs, k]

        def dot(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            product = body.insert(arith.MulfOp(load(body, dy, at(k)), load(body, sm, at(k))))
            return [_add(body, acc[0], product.result)]

        zero = ag_scalar.constant(inner, 0.0, sm.element_type)
        (s,) = _row_loop(inner, n, [zero], dot)

        def scale(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
            centred = body.insert(arith.SubfOp(load(body, dy, at(k)), s)).result
            value = body.insert(arith.MulfOp(centred, load(body, sm, at(k)))).result
            store(body, value, out, at(k))
            return []

        _row_loop(inner, n, [], scale)

    parallel_loops.independent_nest(b, _leading(b, sm), row)


def softmax_grad_rule(op: Operation, dims: Sequence[Sequence[Dim]]) -> RuleResult:
    """`sm`'s shape; `dy` must have it (the interpreter's message)."""
    dy, sm = dims
    dy_text, dy_shown = shape_text(dy)
    sm_text, sm_shown = shape_text(sm)
    message = f"{op_label(op)}: dy and sm must have the same shape, got {dy_text} and {sm_text}"
    shown = (*dy_shown, *sm_shown)
    checks = [
        Check(message, a, c, shown=shown)
        for a, c in zip(dy, sm, strict=True)
        if not (isinstance(a, int) and isinstance(c, int))
    ]
    return list(sm), checks


SHAPE_RULES.update(
    {ag.SoftmaxOp: same_rule, ag.LogSoftmaxOp: same_rule, ag.SoftmaxGradOp: softmax_grad_rule}
)
KERNELS.update(
    {
        ag.SoftmaxOp: emit_softmax,
        ag.LogSoftmaxOp: emit_logsoftmax,
        ag.SoftmaxGradOp: emit_softmax_grad,
    }
)


# --- the fused softmax cross-entropy (ag.softmax_xent, ag.softmax_xent_grad) -----------


def _row_stats(b: Builder, x: Buffer, i: SSAValue, n: SSAValue) -> tuple[SSAValue, SSAValue]:
    """The maximum `m` of row `i` and `sum(exp(x[i] - m))`."""
    t = x.element_type
    exp = ag_scalar.UNARY[ag.OPS["exp"]]
    maximum = ag_scalar.BINARY[ag.MaximumOp]

    def find_max(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
        return [maximum(body, acc[0], load(body, x, [i, k]))]

    (m,) = _row_loop(b, n, [ag_scalar.constant(b, -math.inf, t)], find_max)

    def exp_sum(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
        shifted = body.insert(arith.SubfOp(load(body, x, [i, k]), m)).result
        return [_add(body, acc[0], exp(body, shifted))]

    (total,) = _row_loop(b, n, [ag_scalar.constant(b, 0.0, t)], exp_sum)
    return m, total


def _label_index(b: Builder, y: Buffer, i: SSAValue, n: SSAValue) -> SSAValue:
    """`y[i]` as an `index`, a negative label counted from the end (the bounds were
    checked in `@f__shape`)."""
    v = load(b, y, [i])
    t = y.element_type
    assert isinstance(t, IntegerType)
    if t.width.data < 64:
        ext = arith.ExtUIOp if ag.is_unsigned(t) else arith.ExtSIOp
        v = b.insert(ext(v, i64)).result
    k = b.insert(arith.IndexCastOp(v, IndexType())).result
    zero = index_constant(b, 0)
    negative = b.insert(arith.CmpiOp(k, zero, "slt")).result
    wrapped = b.insert(arith.AddiOp(k, n)).result
    return b.insert(arith.SelectOp(negative, wrapped, k)).result


def emit_softmax_xent(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per row: `m + log(sum(exp(x - m))) - x[y]`."""
    x, y = ins
    n = as_index(b, x.dims[1])
    log = ag_scalar.UNARY[ag.OPS["log"]]

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        (i,) = ivs
        m, total = _row_stats(inner, x, i, n)
        picked = load(inner, x, [i, _label_index(inner, y, i, n)])
        lse = inner.insert(arith.AddfOp(m, log(inner, total))).result
        store(inner, inner.insert(arith.SubfOp(lse, picked)).result, out, [i])

    parallel_loops.independent_nest(b, [as_index(b, x.dims[0])], row)


def _xent_row_grad(
    b: Builder, bufs: tuple[Buffer, Buffer, Buffer], i: SSAValue, n: SSAValue, gi: SSAValue
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """Row `i` of `dx` (`dx[i] = g_i * (softmax(x[i]) - onehot(y[i]))`): the maximum, the
    exponentials stored into `dx` while summing them, the row scaled by `g_i / sum`, `g_i`
    subtracted at the label. Returns the maximum, the sum and the label's index."""
    x, y, dx = bufs
    t = x.element_type
    exp = ag_scalar.UNARY[ag.OPS["exp"]]
    maximum = ag_scalar.BINARY[ag.MaximumOp]

    def find_max(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
        return [maximum(body, acc[0], load(body, x, [i, k]))]

    (m,) = _row_loop(b, n, [ag_scalar.constant(b, -math.inf, t)], find_max)

    def exp_sum(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
        e = exp(body, body.insert(arith.SubfOp(load(body, x, [i, k]), m)).result)
        store(body, e, dx, [i, k])
        return [_add(body, acc[0], e)]

    (total,) = _row_loop(b, n, [ag_scalar.constant(b, 0.0, t)], exp_sum)
    scale = b.insert(arith.DivfOp(gi, total)).result

    def rescale(body: Builder, k: SSAValue, acc: Sequence[SSAValue]) -> list[SSAValue]:
        store(body, body.insert(arith.MulfOp(load(body, dx, [i, k]), scale)).result, dx, [i, k])
        return []

    _row_loop(b, n, [], rescale)
    label = _label_index(b, y, i, n)
    fixed = b.insert(arith.SubfOp(load(b, dx, [i, label]), gi)).result
    store(b, fixed, dx, [i, label])
    return m, total, label


def _dnll_at(b: Builder, g: Buffer, i: SSAValue) -> SSAValue:
    return load(b, g, [index_constant(b, 0) if g.shape[0] == 1 else i])


def emit_softmax_xent_grad(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """Per row: `g * exp(x - m) / sum` stored, then `g` subtracted at the label."""
    g, x, y = ins
    n = as_index(b, x.dims[1])

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        (i,) = ivs
        _xent_row_grad(inner, (x, y, out), i, n, _dnll_at(inner, g, i))

    parallel_loops.independent_nest(b, [as_index(b, x.dims[0])], row)


def emit_softmax_xent_pair(
    b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]
) -> None:
    """Per row: the gradient as `softmax_xent_grad`, and `nll = m + log(sum) - x[y]` from
    the same maximum and sum (each exponential computed once)."""
    g, x, y = ins
    nll, dx = outs
    n = as_index(b, x.dims[1])
    log = ag_scalar.UNARY[ag.OPS["log"]]

    def row(inner: Builder, ivs: Sequence[SSAValue]) -> None:
        (i,) = ivs
        m, total, label = _xent_row_grad(inner, (x, y, dx), i, n, _dnll_at(inner, g, i))
        lse = inner.insert(arith.AddfOp(m, log(inner, total))).result
        value = inner.insert(arith.SubfOp(lse, load(inner, x, [i, label]))).result
        store(inner, value, nll, [i])

    parallel_loops.independent_nest(b, [as_index(b, x.dims[0])], row)


def _xent_checks(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext, first: int
) -> list[Check]:
    """`y` has `x`'s row count and its labels are in `[-k, k)`."""
    x_dims, y_dims = dims[first], dims[first + 1]
    message = f"{op_label(op)}: x has %d rows but y has %d labels"
    checks = [] if x_dims[0] == y_dims[0] else [Check(message, x_dims[0], y_dims[0])]
    checks = [c for c in checks if not c.is_static]
    if context.emit_checks:
        y = context.buffer(first + 1)
        checks += _bounds_check(context.builder, op, y, 1, x_dims[1])
    return checks


def softmax_xent_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> RuleResult:
    """`(rows,)`; `y` checked against `x`."""
    return [dims[0][0]], _xent_checks(op, dims, context, 0)


def softmax_xent_grad_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> RuleResult:
    """`x`'s shape; `y` checked against `x`, and `dnll` unless it is of static length 1."""
    checks = _xent_checks(op, dims, context, 1)
    length, rows = dims[0][0], dims[1][0]
    if ag.tensor_type(op.operands[0]).get_shape()[0] != 1:
        message = f"{op_label(op)}: dnll has %d elements but x has %d rows"
        check = Check(message, length, rows)
        checks += [] if check.is_static else [check]
    return list(dims[1]), checks


def softmax_xent_pair_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[list[Dim]], list[Check]]:
    """`(rows,)` and `x`'s shape; the checks of `softmax_xent_grad`."""
    dx, checks = softmax_xent_grad_rule(op, dims, context)
    return [[dims[1][0]], dx], checks


VALUE_SHAPE_RULES.update(
    {ag.SoftmaxXentOp: softmax_xent_rule, ag.SoftmaxXentGradOp: softmax_xent_grad_rule}
)
MULTI_VALUE_SHAPE_RULES[ag.SoftmaxXentPairOp] = softmax_xent_pair_rule
MULTI_KERNELS[ag.SoftmaxXentPairOp] = emit_softmax_xent_pair
KERNELS.update({ag.SoftmaxXentOp: emit_softmax_xent, ag.SoftmaxXentGradOp: emit_softmax_xent_grad})
