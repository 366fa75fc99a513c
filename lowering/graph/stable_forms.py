"""The rewrite patterns of `stabilize` (`arignote.lowering.graph.stabilize`, which
describes them), apart from the pass: `arignote.grad` applies them to the cost before
differentiating it, and this module imports no pass machinery (`xdsl.passes`), which
a `grad` whose function then comes from the compile cache never needs otherwise.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from arignote.dialects import ag


def defining(value: SSAValue, op_type: type[Operation]) -> Operation | None:
    """The op of class `op_type` that defines `value`, if it is one."""
    if isinstance(value, OpResult) and isinstance(value.op, op_type):
        return value.op
    return None


def is_one(value: SSAValue) -> bool:
    """Whether `value` is an `ag.constant` whose every element is 1."""
    op = defining(value, ag.ConstantOp)
    if not isinstance(op, ag.ConstantOp):
        return False
    attr = op.value
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    return all(v == 1 for v in attr.get_values())


def _build(
    rewriter: PatternRewriter, op: Operation, build: Callable[[list[Operation]], SSAValue]
) -> None:
    """Replace `op` by the ops `build` appends, if the result keeps `op`'s type."""
    new_ops: list[Operation] = []
    result = build(new_ops)
    if result.type != op.results[0].type:
        return
    rewriter.replace(op, new_ops, [result])


def _neg(ops: list[Operation], x: SSAValue) -> SSAValue:
    op = ag.NegOp(x)
    ops.append(op)
    return op.result


def _unary(ops: list[Operation], op_type: type[ag.UnaryElementwiseOp], x: SSAValue) -> SSAValue:
    op = op_type(x)
    ops.append(op)
    return op.result


def _other_than_one(op: ag.BinaryElementwiseOp) -> SSAValue | None:
    """For `1 + v` or `v + 1`, the value `v`."""
    if is_one(op.lhs):
        return op.rhs
    if is_one(op.rhs):
        return op.lhs
    return None


class SigmoidFromExp(RewritePattern):
    """`1 / (1 + exp(e))` → `sigmoid(-e)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.DivOp, rewriter: PatternRewriter, /):
        add = defining(op.rhs, ag.AddOp)
        if not is_one(op.lhs) or not isinstance(add, ag.AddOp):
            return
        exp_value = _other_than_one(add)
        exp = defining(exp_value, ag.ExpOp) if exp_value is not None else None
        if not isinstance(exp, ag.ExpOp):
            return
        arg = exp.input
        _build(rewriter, op, lambda ops: _unary(ops, ag.SigmoidOp, _neg(ops, arg)))


class OneMinusSigmoid(RewritePattern):
    """`1 - sigmoid(x)` → `sigmoid(-x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.SubOp, rewriter: PatternRewriter, /):
        sig = defining(op.rhs, ag.SigmoidOp)
        if not is_one(op.lhs) or not isinstance(sig, ag.SigmoidOp):
            return
        arg = sig.input
        _build(rewriter, op, lambda ops: _unary(ops, ag.SigmoidOp, _neg(ops, arg)))


class LogOfStableForms(RewritePattern):
    """`log(sigmoid(x))` → `-softplus(-x)`; `log(1 + exp(x))` → `softplus(x)`;
    `log(1 - x)` → `log1p(-x)`; `log(1 + x)` → `log1p(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.LogOp, rewriter: PatternRewriter, /):
        arg = op.input
        if isinstance(sig := defining(arg, ag.SigmoidOp), ag.SigmoidOp):
            x = sig.input
            _build(rewriter, op, lambda ops: _neg(ops, _softplus(ops, _neg(ops, x))))
        elif isinstance(add := defining(arg, ag.AddOp), ag.AddOp):
            self._log_of_sum(add, op, rewriter)
        elif isinstance(sub := defining(arg, ag.SubOp), ag.SubOp) and is_one(sub.lhs):
            x = sub.rhs
            _build(rewriter, op, lambda ops: _unary(ops, ag.Log1pOp, _neg(ops, x)))

    @staticmethod
    def _log_of_sum(add: ag.AddOp, op: ag.LogOp, rewriter: PatternRewriter) -> None:
        x = _other_than_one(add)
        if x is None:
            return
        if isinstance(exp := defining(x, ag.ExpOp), ag.ExpOp):
            inner = exp.input
            _build(rewriter, op, lambda ops: _softplus(ops, inner))
        else:
            _build(rewriter, op, lambda ops: _unary(ops, ag.Log1pOp, x))


def _softplus(ops: list[Operation], x: SSAValue) -> SSAValue:
    return _unary(ops, ag.SoftplusOp, x)


class Log1pOfExp(RewritePattern):
    """`log1p(exp(x))` → `softplus(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.Log1pOp, rewriter: PatternRewriter, /):
        exp = defining(op.input, ag.ExpOp)
        if isinstance(exp, ag.ExpOp):
            inner = exp.input
            _build(rewriter, op, lambda ops: _softplus(ops, inner))


class ExpMinusOne(RewritePattern):
    """`exp(x) - 1` → `expm1(x)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.SubOp, rewriter: PatternRewriter, /):
        exp = defining(op.lhs, ag.ExpOp)
        if isinstance(exp, ag.ExpOp) and is_one(op.rhs):
            inner = exp.input
            _build(rewriter, op, lambda ops: _unary(ops, ag.Expm1Op, inner))


class DoubleNegation(RewritePattern):
    """`-(-x)` → `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ag.NegOp, rewriter: PatternRewriter, /):
        inner = defining(op.input, ag.NegOp)
        if isinstance(inner, ag.NegOp):
            rewriter.replace(op, [], [inner.input])


STABILIZE_PATTERNS: tuple[RewritePattern, ...] = (
    SigmoidFromExp(),
    OneMinusSigmoid(),
    LogOfStableForms(),
    Log1pOfExp(),
    ExpMinusOne(),
    DoubleNegation(),
)

# nnet functions (issue 14): softmax cross-entropies and their gradients (`softmax_xent`)
from arignote.lowering.graph.softmax_xent import SOFTMAX_XENT_PATTERNS  # noqa: E402

STABILIZE_PATTERNS += SOFTMAX_XENT_PATTERNS
