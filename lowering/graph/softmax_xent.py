"""Stable softmax cross-entropy (Theano's `crossentropy_softmax_1hot` rewrites): two
patterns of the `stabilize` pass.

Accepts `ag` ops on tensors and leaves `ag` ops on tensors. A cross-entropy written with
a softmax, `-log(softmax(x)[arange(n), y])` or `-sum(t * log(softmax(x)))` (what
`categorical_crossentropy(softmax(x), y)` builds, with integer or one-hot `y`), takes
the log of a probability that underflows to 0 for large logits, and its gradient divides
by that probability. The patterns replace both (`sm = softmax(x)`, sums along the last
axis):

| before                                       | after                                  |
|----------------------------------------------|----------------------------------------|
| `log(sm[arange(n), y])`                      | `-softmax_xent(x, y)` (one row kernel) |
| `log(sm[i, j])`, other indices               | `logsoftmax(x)[i, j]`                  |
| `log(sm)`                                    | `logsoftmax(x)`                        |
| `softmax_grad(inc(0[arange(n), y], h / sm[arange(n), y]), sm)` | `softmax_xent_grad(-h, x, y)` |
| `softmax_grad(inc(z[i, j], h / sm[i, j]), sm)` | `g - sum(g) * sm`, `g = inc((z * sm)[i, j], h)` |
| `softmax_grad(h / sm, sm)`                   | `h - sum(h) * sm`                      |

The gradient forms are exact rewrites of `(G - sum(G * sm)) * sm` with the division by
`sm` cancelled (an `inc` whose base is zeros keeps it), so they hold for any `h`, `z`
and indices; the fused one is `g * (softmax(x) - onehot(y))`, finite where the original
is `0/0`. `arignote.grad` differentiates the cost after these rewrites (see
`gradient._stabilized`), so a cross-entropy's gradient is the fused
`ag.softmax_xent_grad` from the start; the gradient patterns serve gradients taken with
respect to intermediate values. The fused ops require `y`'s length to be `x`'s row
count (as Theano's), where `arange(len(y))` rows would pick the first rows only.

```mlir
// before
%sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
%p = ag.advanced_subtensor %sm[%rows, %y] : tensor<?x?xf32>, tensor<?xi64>, tensor<?xi64>
       -> tensor<?xf32>
%l = ag.log %p : tensor<?xf32>
// after (%rows = ag.arange 0, n, 1)
%nll = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
%l = ag.neg %nll : tensor<?xf32>
```
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from arignote.dialects import ag


def _defining(value: SSAValue, op_type: type[Operation]) -> Operation | None:
    owner = getattr(value, "op", None)
    return owner if isinstance(owner, op_type) else None


def _rank(value: SSAValue) -> int:
    t = value.type
    assert isinstance(t, TensorType)
    return t.get_num_dims()


def _row_total(ops: list[Operation], op_type: type[ag.ReduceOp], x: SSAValue) -> SSAValue:
    """`op_type` along the last axis, kept as a length-1 axis (`keepdims`)."""
    rank = _rank(x)
    reduce = op_type(x, [rank - 1])
    keep = ag.DimShuffleOp(reduce.result, [*range(rank - 1), -1])
    ops += [reduce, keep]
    return keep.result


def _binary(ops: list[Operation], op_type: type, a: SSAValue, b: SSAValue) -> SSAValue:
    op = op_type(a, b)
    ops.append(op)
    return op.results[0]


def _unary(ops: list[Operation], op_type: type, a: SSAValue) -> SSAValue:
    op = op_type(a)
    ops.append(op)
    return op.results[0]


def logsoftmax(ops: list[Operation], x: SSAValue) -> SSAValue:
    """`ag.logsoftmax` of `x` (appended to `ops`)."""
    return _unary(ops, ag.LogSoftmaxOp, x)


class LogOfSoftmax(RewritePattern):
    """`log(softmax(x))` → logsoftmax; `log(softmax(x)[i, j])` → `logsoftmax(x)[i, j]`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.LogOp, rewriter: PatternRewriter, /):  # pyright: ignore
        arg = op.input
        sm = _defining(arg, ag.SoftmaxOp)
        if isinstance(sm, ag.SoftmaxOp):
            ops: list[Operation] = []
            result = logsoftmax(ops, sm.input)
            rewriter.replace(op, ops, [result])
            return
        picked = _defining(arg, ag.AdvancedSubtensorOp)
        if not isinstance(picked, ag.AdvancedSubtensorOp):
            return
        sm = _defining(picked.input, ag.SoftmaxOp)
        if not isinstance(sm, ag.SoftmaxOp):
            return
        labels = one_label_per_row(sm.input, list(picked.indices))
        if labels is not None:
            fused = ag.SoftmaxXentOp(sm.input, labels)
            neg = ag.NegOp(fused.result)
            if neg.result.type == op.result.type:
                rewriter.replace(op, [fused, neg], [neg.result])
                return
        ops = []
        table = logsoftmax(ops, sm.input)
        take = ag.AdvancedSubtensorOp(table, list(picked.indices))
        if take.result.type != op.result.type:
            return
        rewriter.replace(op, [*ops, take], [take.result])


def _is_constant(value: SSAValue, wanted: int) -> bool:
    const = _defining(value, ag.ConstantOp)
    if not isinstance(const, ag.ConstantOp):
        return False
    attr = const.value
    return isinstance(attr, DenseIntOrFPElementsAttr) and list(attr.get_values()) == [wanted]


def one_label_per_row(x: SSAValue, indices: Sequence[SSAValue]) -> SSAValue | None:
    """`y` when `indices` are `[arange(0, n, 1), y]` for a matrix `x` and an integer
    vector `y` not of static length 1 (so the pair picks one entry `y[i]` of each row
    `i`, Theano's `_check_rows_is_arange_len_labels`), else None."""
    if _rank(x) != 2 or len(indices) != 2:
        return None
    rows, y = indices
    arange = _defining(rows, ag.ArangeOp)
    if not isinstance(arange, ag.ArangeOp):
        return None
    if not (_is_constant(arange.start, 0) and _is_constant(arange.step, 1)):
        return None
    yt = y.type
    if not isinstance(yt, TensorType) or yt.get_num_dims() != 1 or yt.get_shape()[0] == 1:
        return None
    return y if ag.is_int(yt.element_type) else None


def _is_zero(value: SSAValue) -> bool:
    """An `ag.constant` of zeros, or `select(true, zeros, _)` (the zeros a gradient of an
    indexing starts from), or `alloc` of zeros."""
    const = _defining(value, ag.ConstantOp)
    if isinstance(const, ag.ConstantOp):
        attr = const.value
        return isinstance(attr, DenseIntOrFPElementsAttr) and all(v == 0 for v in attr.get_values())
    select = _defining(value, ag.SelectOp)
    if isinstance(select, ag.SelectOp):
        cond = _defining(select.cond, ag.ConstantOp)
        if not isinstance(cond, ag.ConstantOp):
            return False
        attr = cond.value
        assert isinstance(attr, DenseIntOrFPElementsAttr)
        return bool(np.all(list(attr.get_values()))) and _is_zero(select.true_value)
    alloc = _defining(value, ag.AllocOp)
    return isinstance(alloc, ag.AllocOp) and _is_zero(alloc.operands[0])


def _ratio_to(value: SSAValue, denominator: SSAValue) -> SSAValue | None:
    """`h` if `value` is `h / denominator`."""
    div = _defining(value, ag.DivOp)
    if isinstance(div, ag.DivOp) and div.rhs == denominator:
        return div.lhs
    return None


def _same(a: Sequence[SSAValue], b: Sequence[SSAValue]) -> bool:
    return len(a) == len(b) and all(x == y for x, y in zip(a, b, strict=True))


class SoftmaxGradOfRatio(RewritePattern):
    """`softmax_grad(h / sm, sm)` → `h - sum(h) * sm`, and the same through an
    `advanced_inc_subtensor` of `h / sm[i, j]` (a cross-entropy's gradient)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.SoftmaxGradOp, rewriter: PatternRewriter, /):  # pyright: ignore
        fused = self._fused(op)
        if fused is not None and fused[-1].results[0].type == op.result.type:
            rewriter.replace(op, fused, [fused[-1].results[0]])
            return
        ops: list[Operation] = []
        scaled = self._scaled(ops, op.dy, op.sm)
        if scaled is None or scaled.type != op.result.type:
            return
        total = _row_total(ops, ag.ReduceSumOp, scaled)
        result = _binary(ops, ag.SubOp, scaled, _binary(ops, ag.MulOp, total, op.sm))
        if result.type != op.result.type:
            return
        rewriter.replace(op, ops, [result])

    @staticmethod
    def _fused(op: ag.SoftmaxGradOp) -> list[Operation] | None:
        """`softmax_grad(inc(zeros[arange, y], h / sm[arange, y]), sm)` →
        `softmax_xent_grad(-h, x, y)` (one row-wise kernel), or None."""
        sm = _defining(op.sm, ag.SoftmaxOp)
        inc = _defining(op.dy, ag.AdvancedIncSubtensorOp)
        if not isinstance(sm, ag.SoftmaxOp) or not isinstance(inc, ag.AdvancedIncSubtensorOp):
            return None
        labels = one_label_per_row(sm.input, list(inc.indices))
        div = _defining(inc.value, ag.DivOp)
        if labels is None or not isinstance(div, ag.DivOp) or not _is_zero(inc.input):
            return None
        taken = _defining(div.rhs, ag.AdvancedSubtensorOp)
        if not isinstance(taken, ag.AdvancedSubtensorOp) or taken.input != op.sm:
            return None
        h = div.lhs
        ht = h.type
        if not _same(list(taken.indices), list(inc.indices)) or not isinstance(ht, TensorType):
            return None
        if ht.get_num_dims() != 1 or ht.element_type != ag.tensor_type(op.sm).element_type:
            return None
        neg = ag.NegOp(h)
        return [neg, ag.SoftmaxXentGradOp(neg.result, sm.input, labels)]

    @staticmethod
    def _scaled(ops: list[Operation], dy: SSAValue, sm: SSAValue) -> SSAValue | None:
        """`dy * sm` without the division by `sm`, or None."""
        direct = _ratio_to(dy, sm)
        if direct is not None:
            return direct
        inc = _defining(dy, ag.AdvancedIncSubtensorOp)
        if not isinstance(inc, ag.AdvancedIncSubtensorOp):
            return None
        picked = _defining(inc.value, ag.DivOp)
        taken = _defining(picked.rhs, ag.AdvancedSubtensorOp) if picked is not None else None
        if not isinstance(taken, ag.AdvancedSubtensorOp) or taken.input != sm:
            return None
        if not _same(list(taken.indices), list(inc.indices)):
            return None
        assert isinstance(picked, ag.DivOp)
        base = inc.input if _is_zero(inc.input) else _binary(ops, ag.MulOp, inc.input, sm)
        try:
            new = ag.AdvancedIncSubtensorOp(base, picked.lhs, list(inc.indices))
        except ValueError:
            return None
        ops.append(new)
        return new.result


SOFTMAX_XENT_PATTERNS: tuple[RewritePattern, ...] = (LogOfSoftmax(), SoftmaxGradOfRatio())
"""The patterns `stabilize` adds for softmax cross-entropies."""
