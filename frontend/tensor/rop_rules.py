"""R-operator rules (forward mode, Theano's `Op.R_op`): the tangent of an op's results
from the tangents of its inputs, for `arignote.gradient.Rop`.

A rule is `rule(op, inputs, outputs, tangents) -> [tangent or None per result]`, where
`tangents[i]` is the tangent of input `i` (a variable of its type) or None (zero). Three
families cover most of the frontend's ops:

* **elementwise** ops (`ag.TABLE`, arithmetic, `select`): the Jacobian with respect to
  each input is diagonal (up to broadcasting), so the tangent is the sum over the inputs
  of the gradient rule's term applied to the input's tangent broadcast to the result's
  shape: `d out = sum_i D_i * v_i` (one graph per input, no transposition);
* **linear** ops (layout, indexing, reshape, join, sum, alloc, casts between floats):
  the op itself applied to the tangents (zeros for float inputs without one; integer
  operands such as indices and shapes kept);
* `dot`: `dot(v_x, y) + dot(x, v_y)`.

Other ops (`reduce_prod`, `reduce_max`, `scan`, `if`, ...) have no rule here:
`Rop` falls back to the double-L-operator trick on that op alone (see its docstring).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdsl.ir import Operation, SSAValue

from arignote.dialects import ag
from arignote.graph import Variable, apply_op, variable_of
from arignote.tensor import basic as T
from arignote.tensor.grad_rules import RULES, is_float

RRule = Callable[[Operation, list[Variable], list[Variable], list[Any]], list[Any]]


def as_type_of(v: Variable, x: Variable) -> Variable | None:
    """The tangent `v` with exactly `x`'s IR type (dtype and static lengths), or None
    when broadcasting it against `x` does not give that type."""
    v = T.cast(v, x.dtype)
    if v.value.type == x.value.type:
        return v
    filled = T.fill(x, v)
    return filled if filled.value.type == x.value.type else None


def _elementwise(op: Operation, inputs: list[Variable], outputs: list[Variable], vs: list[Any]):
    rule = RULES[type(op)]
    out = outputs[0]
    total: Variable | None = None
    for i, v in enumerate(vs):
        if v is None or not is_float(inputs[i]):
            continue
        gz = T.fill(out, T.cast(v, out.dtype))  # the input's tangent where it reaches out
        term = rule(op, inputs, outputs, [gz])[i]
        if term is None:
            continue
        total = term if total is None else total + term
    return [None if total is None else T.cast(total, out.dtype)]


def _linear(op: Operation, inputs: list[Variable], outputs: list[Variable], vs: list[Any]):
    mapping: dict[SSAValue, SSAValue] = {}
    for x, v in zip(inputs, vs, strict=True):
        if not is_float(x):
            continue  # an index, a shape: the same
        tangent = T.zeros_like(x) if v is None else as_type_of(v, x)
        if tangent is None:
            return None  # no tangent of the right type: the caller falls back
        mapping[x.value] = tangent.value
    clone = op.clone(value_mapper=mapping)
    if len(clone.results) == 1:
        return [apply_op(clone)]
    return [variable_of(r) for r in clone.results]


def _dot(op: Operation, inputs: list[Variable], outputs: list[Variable], vs: list[Any]):
    x, y = inputs
    vx, vy = vs
    terms = []
    if vx is not None:
        terms.append(T.dot(T.cast(vx, x.dtype), y))
    if vy is not None:
        terms.append(T.dot(x, T.cast(vy, y.dtype)))
    total = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    return [T.cast(total, outputs[0].dtype)]


_ELEMENTWISE = (ag.UnaryElementwiseOp, ag.BinaryElementwiseOp, ag.SelectOp)

_LINEAR: tuple[type[Operation], ...] = (
    ag.DimShuffleOp,
    ag.ReduceSumOp,
    ag.SubtensorOp,
    ag.SetSubtensorOp,
    ag.IncSubtensorOp,
    ag.AdvancedSubtensorOp,
    ag.AdvancedSetSubtensorOp,
    ag.AdvancedIncSubtensorOp,
    ag.ReshapeOp,
    ag.ConcatenateOp,
    ag.AllocOp,
    ag.CastOp,
)


def r_rule(op: Operation) -> RRule | None:
    """The R rule of `op`, None when it has none (the caller falls back to the
    double-L-operator trick on the op)."""
    if isinstance(op, ag.DotOp):
        return _dot
    if isinstance(op, _LINEAR):
        return _linear
    if isinstance(op, _ELEMENTWISE) and type(op) in RULES:
        return _elementwise
    if isinstance(op, ag.PoolOp):  # pooling (issue 14 item 2): Theano's Pool.R_op
        from arignote.tensor.signal.pool import pool_r_op

        return pool_r_op
    return None
