"""Kernels and shape rules of the row-wise softmax ops (`ag.softmax`, `ag.softmax_grad`;
`dialects/ag/softmax.py`).

Accepts those ops (through `ag-to-loops`, which calls the kernels registered here) and
leaves `scf.for` loops over `memref.load`/`memref.store` and `arith`/`math` ops. Each
row (every position of the leading axes) is three passes over the last axis:

- `softmax`: the row maximum `m`; `e_k = exp(x_k - m)` stored into the result while
  summing them; the row scaled by `1 / sum`. No `exp` overflows (`x_k - m <= 0`) and the
  sum is at least 1 (unless the row holds NaN or is empty).
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
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering import ag_scalar
from arignote.lowering.ag_kernels import KERNELS
from arignote.lowering.ag_shapes import (
    SHAPE_RULES,
    Check,
    RuleResult,
    op_label,
    same_rule,
    shape_text,
)
from arignote.lowering.loop_utils import (
    Buffer,
    Dim,
    as_index,
    for_loop,
    index_constant,
    load,
    loop_nest,
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

    loop_nest(b, _leading(b, x), row)


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

    loop_nest(b, _leading(b, sm), row)


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


SHAPE_RULES.update({ag.SoftmaxOp: same_rule, ag.SoftmaxGradOp: softmax_grad_rule})
KERNELS.update({ag.SoftmaxOp: emit_softmax, ag.SoftmaxGradOp: emit_softmax_grad})
