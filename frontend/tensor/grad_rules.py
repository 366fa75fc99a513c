"""The gradient rule of each differentiable `ag` operation (Theano's `Op.L_op`).

`RULES` maps an `ag` op class to a rule (for the ops of `ag.TABLE`, a wrapper of the
entry's `grad`). A rule receives the IR operation, its input
variables, its output variables and the gradient of the cost with respect to each output
(already summed over every use and shaped like the output), and returns one gradient
term per input: a variable, or None where the input gets no gradient (a condition, an
integer operand, a piecewise-constant operation). Rules only call the tensor functions of
`arignote.tensor.basic`, so a gradient is ordinary `ag` IR that the optimizer and both
backends see like any other expression.

A term may have a broadcast shape larger than its input (the gradient of `x * y` with
respect to a row `x` is as tall as `y`); `gradient.grad` passes every term through
`reduce_to`, which sums it over the axes the input was broadcast along. Rules for
operations whose outputs are integers or bools are never called: those outputs carry
no gradient (Theano's rule for comparisons, `floor_div`, casts to integers).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.ir import Operation

from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic as T

FLOAT_DTYPES = ("float32", "float64", "complex64", "complex128")
"""The continuous dtypes: the variables that carry gradients (complex ones as Theano's)."""

Rule = Callable[[Operation, list[Variable], list[Variable], list[Variable]], list[Any]]
"""`rule(ir_op, inputs, outputs, output_grads) -> [term or None per input]`."""


def is_float(v: Variable) -> bool:
    return v.dtype in FLOAT_DTYPES


def expand(v: Variable, axes: Sequence[int], ndim: int) -> Variable:
    """`v` with a new broadcastable axis at each of `axes` (positions in the result of
    rank `ndim`): undoes a reduction over `axes`."""
    kept = iter(range(v.ndim))
    pattern: list[Any] = ["x" if i in axes else next(kept) for i in range(ndim)]
    return T.dimshuffle(v, *pattern)


def reduce_to(g: Variable, var: Variable) -> Variable:
    """The gradient term `g` made to fit `var`: summed over the leading axes `var` lacks
    and over the axes where `var` has the static length 1 but `g` does not (the axes
    `var` was broadcast along), broadcast up where `g` is smaller than `var`, and cast to
    `var`'s dtype when `var` is a float."""
    if g.ndim > var.ndim:
        g = T.sum(g, axis=list(range(g.ndim - var.ndim)), dtype=g.dtype)
    elif g.ndim < var.ndim:
        g = T.fill(var, g)  # broadcasting is right-aligned: g gains var's leading axes
    pairs = list(zip(var.broadcastable, g.broadcastable, strict=True))
    axes = [i for i, (bv, bg) in enumerate(pairs) if bv and not bg]
    if axes:
        g = T.sum(g, axis=axes, keepdims=True, dtype=g.dtype)
    if any(bg and not bv for bv, bg in pairs):
        g = T.fill(var, g)
    if is_float(var) and g.dtype != var.dtype:
        g = T.cast(g, var.dtype)
    return g


# --- elementwise -------------------------------------------------------------------------


def _add(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    return [gz[0], gz[0]]


def _sub(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    return [gz[0], T.neg(gz[0])]


def _mul(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    x, y = inputs
    return [gz[0] * y, gz[0] * x]


def _div(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    x, y = inputs
    g = gz[0]
    return [g / y, T.neg(g * x) / (y * y)]


def _pow(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Pow.L_op: d/dx = y * x**(y-1); d/dy = log(x) * x**y, taken as 0 where
    # x == 0 (the limit for y > 0; log(0) would give -inf * 0 = NaN). For x < 0 the
    # derivative with respect to y is NaN, as in Theano.
    x, y = inputs
    (out,) = outputs
    g = gz[0]
    gx = g * y * T.pow(x, y - 1)
    gy = T.switch(T.eq(x, 0), 0, g * T.log(x) * out)
    return [gx, gy]


def _maximum_minimum(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # Theano's ScalarMaximum/ScalarMinimum.L_op: the gradient goes to the operand equal to
    # the result; on a tie all of it goes to the first operand.
    x, _ = inputs
    g = gz[0]
    first = T.eq(outputs[0], x)
    return [T.switch(first, g, 0), T.switch(first, 0, g)]


def _floor_div(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's IntDiv.grad: piecewise constant, zero gradient to both operands.
    return [None, None]


def _mod(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Mod.L_op for a float result: x % y = x - floor(x / y) * y.
    x, y = inputs
    g = gz[0]
    return [g, T.neg(T.floor_div(x, y)) * g]


def _neg(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    return [T.neg(gz[0])]


def _abs(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Abs.L_op: gz * sgn(x), so 0 at x == 0.
    (x,) = inputs
    g = gz[0]
    return [T.switch(T.gt(x, 0), g, T.switch(T.lt(x, 0), T.neg(g), 0))]


def _select(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Switch.grad: the condition gets a zero gradient (a small change of it never
    # changes the branch taken); each branch gets the gradient where it was chosen.
    cond = inputs[0]
    g = gz[0]
    return [None, T.switch(cond, g, 0), T.switch(cond, 0, g)]


def _cast(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Cast.grad: float -> float passes the gradient, converted back to the
    # input's dtype; the gradient of an integer input is zero; a real input cast to
    # complex gets the real part (the imaginary direction does not change it).
    (x,) = inputs
    if not is_float(x):
        return [None]
    g = gz[0]
    if g.dtype.startswith("complex") and not x.dtype.startswith("complex"):
        g = T.real(g)
    return [T.cast(g, x.dtype)]


# --- layout and reductions ---------------------------------------------------------------


def _dimshuffle(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # The inverse permutation: each input axis reads the result axis it went to; the new
    # ('x') axes of the result are dropped, and the input's dropped axes come back as 'x'.
    assert isinstance(op, ag.DimShuffleOp)
    (x,) = inputs
    pattern = list(op.pattern_list)
    inverse: list[Any] = [pattern.index(i) if i in pattern else "x" for i in range(x.ndim)]
    return [T.dimshuffle(gz[0], *inverse)]


def _reduce_sum(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    assert isinstance(op, ag.ReduceOp)
    (x,) = inputs
    return [T.fill(x, expand(gz[0], op.axes_list, x.ndim))]


def _reduce_prod(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # d prod / d x_i is the product of the other elements. With no zero in a reduced
    # group it is prod / x_i; with exactly one zero, only that position gets the product
    # of the nonzero elements; with two or more zeros, every position gets 0. (Theano's
    # Prod.L_op, which distinguishes the same three cases.)
    assert isinstance(op, ag.ReduceOp)
    (x,) = inputs
    axes = op.axes_list
    is_zero = T.eq(x, 0)
    nonzero = T.switch(is_zero, 1, x)
    prod_nonzero = expand(T.prod(nonzero, axis=axes, dtype=x.dtype), axes, x.ndim)
    n_zeros = expand(T.sum(is_zero, axis=axes), axes, x.ndim)
    g = expand(gz[0], axes, x.ndim)
    others = T.switch(
        is_zero,
        T.switch(T.eq(n_zeros, 1), prod_nonzero, 0),
        T.switch(T.eq(n_zeros, 0), prod_nonzero / nonzero, 0),
    )
    return [g * others]


def _reduce_max_min(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # Theano's MaxAndArgmax.grad: the gradient goes to every position equal to the
    # extremum (all of them on a tie), i.e. eq(x, broadcast max) * broadcast gz.
    assert isinstance(op, ag.ReduceOp)
    (x,) = inputs
    axes = op.axes_list
    at_extremum = T.eq(x, expand(outputs[0], axes, x.ndim))
    return [T.switch(at_extremum, expand(gz[0], axes, x.ndim), 0)]


def _dot(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    x, y = inputs
    g = gz[0]
    if x.ndim == 1 and y.ndim == 1:  # x . y -> scalar
        return [g * y, g * x]
    if x.ndim == 2 and y.ndim == 1:  # (m, n) . (n,) -> (m,)
        return [T.dimshuffle(g, 0, "x") * T.dimshuffle(y, "x", 0), T.dot(T.transpose(x), g)]
    if x.ndim == 1 and y.ndim == 2:  # (m,) . (m, n) -> (n,)
        return [T.dot(y, g), T.dimshuffle(x, 0, "x") * T.dimshuffle(g, "x", 0)]
    # (m, k) . (k, n) -> (m, n)
    return [T.dot(g, T.transpose(y)), T.dot(T.transpose(x), g)]


def _apply(op_name: str, x: Variable) -> Variable:
    return apply_op(getattr(ag, op_name)(x.value))


def _sigmoid(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    out = outputs[0]
    return [gz[0] * out * (1 - out)]


def _softplus(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    return [gz[0] * _apply("SigmoidOp", inputs[0])]


def _piecewise_constant(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # Theano's Floor/Ceil/Round grads: zero (the derivative almost everywhere).
    return [None]


RULES: dict[type[Operation], Rule] = {
    ag.AddOp: _add,
    ag.SubOp: _sub,
    ag.MulOp: _mul,
    ag.DivOp: _div,
    ag.PowOp: _pow,
    ag.MaximumOp: _maximum_minimum,
    ag.MinimumOp: _maximum_minimum,
    ag.FloorDivOp: _floor_div,
    ag.ModOp: _mod,
    ag.NegOp: _neg,
    ag.AbsOp: _abs,
    ag.SelectOp: _select,
    ag.CastOp: _cast,
    ag.DimShuffleOp: _dimshuffle,
    ag.ReduceSumOp: _reduce_sum,
    ag.ReduceProdOp: _reduce_prod,
    ag.ReduceMaxOp: _reduce_max_min,
    ag.ReduceMinOp: _reduce_max_min,
    ag.DotOp: _dot,
}
"""The gradient rule of each `ag` op class. Comparisons (`lt le gt ge eq ne`) have no
entry: their results are bools, which carry no gradient. `ag.constant` has no inputs."""

_OPTIONAL_RULES: dict[str, Rule] = {
    "SigmoidOp": _sigmoid,
    "SoftplusOp": _softplus,
    "RoundOp": _piecewise_constant,
    "RoundEvenOp": _piecewise_constant,
}
"""Rules for math ops that newer versions of the dialect define (looked up by class
name, so this module also imports with a dialect that lacks them)."""
RULES.update(
    {getattr(ag, name): rule for name, rule in _OPTIONAL_RULES.items() if hasattr(ag, name)}
)


def _table_rule(entry: ag.Elementwise) -> Rule:
    grad = entry.grad

    def rule(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
        if grad is None:  # piecewise constant: no gradient (Theano's zeros)
            return [None] * len(inputs)
        return grad(T, inputs, outputs[0], gz[0])

    return rule


RULES.update(
    {
        ag.OPS[entry.name]: _table_rule(entry)
        for entry in ag.TABLE
        if entry.differentiable_type and entry.grad_defined
    }
)  # the others (isnan, and_, ...) have integer or bool results: none, as the comparisons;
# tri_gamma has none as in Theano (NotImplementedError)


# --- indexing, reshaping, joining and allocation ---------------------------------------


def _subtensor_like(op: Any, source: Variable, op_class: type, *extra: Variable) -> Variable:
    """`op_class` applied to `source` with `op`'s entries and dynamic operands."""
    from arignote.graph import apply_op

    kinds, starts, stops, steps = zip(*op.entries(), strict=True)
    values = [v.value for v in extra]
    return apply_op(op_class(source.value, *values, kinds, starts, stops, steps, list(op.dynamic)))


def _subtensor(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Subtensor.grad: the gradient scattered into zeros of the input's shape.
    x = inputs[0]
    gx = _subtensor_like(op, T.zeros_like(x), ag.IncSubtensorOp, T.cast(gz[0], x.dtype))
    return [gx] + [None] * (len(inputs) - 1)


def _subtensor_update(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # set: the overwritten region gets no gradient from x; the value gets the region's.
    g = gz[0]
    gy = _subtensor_like(op, g, ag.SubtensorOp)
    if isinstance(op, ag.SetSubtensorOp):
        zero = T.constant(0, dtype=g.dtype)
        gx = _subtensor_like(op, g, ag.SetSubtensorOp, zero)
    else:
        gx = g
    return [gx, gy] + [None] * (len(inputs) - 2)


def _advanced_subtensor(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # Theano's AdvancedSubtensor.grad: AdvancedIncSubtensor of zeros (repeats accumulate).
    from arignote.graph import apply_op

    x, indices = inputs[0], inputs[1:]
    g = T.cast(gz[0], x.dtype)
    gx = apply_op(
        ag.AdvancedIncSubtensorOp(T.zeros_like(x).value, g.value, [i.value for i in indices])
    )
    return [gx] + [None] * len(indices)


def _advanced_update(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    from arignote.graph import apply_op

    indices = [i.value for i in inputs[2:]]
    g = gz[0]
    gy = apply_op(ag.AdvancedSubtensorOp(g.value, indices))
    if isinstance(op, ag.AdvancedSetSubtensorOp):
        zero = T.constant(0, dtype=g.dtype)
        gx = apply_op(ag.AdvancedSetSubtensorOp(g.value, zero.value, indices))
    else:
        gx = g
    return [gx, gy] + [None] * len(indices)


def _reshape(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    from arignote.tensor import subtensor

    x = inputs[0]
    shape = [subtensor.shape_i(x, i) for i in range(x.ndim)]
    return [subtensor.reshape(gz[0], shape, ndim=x.ndim)] + [None] * (len(inputs) - 1)


def _concatenate(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # Theano's Join.grad: the slices of the gradient along the joined axis.
    from arignote.tensor import subtensor

    assert isinstance(op, ag.ConcatenateOp)
    axis = op.axis_value
    terms: list[Any] = []
    offset: Any = 0
    for x in inputs:
        length = subtensor.shape_i(x, axis)
        end = offset + length
        key = (slice(None),) * axis + (slice(offset, end),)
        terms.append(subtensor.getitem(gz[0], key))
        offset = end
    return terms


def _alloc(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Alloc.grad: the sum over the broadcast axes (done by gradient.reduce_to).
    return [gz[0]] + [None] * (len(inputs) - 1)


def _arange(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    return [None, None, None]


RULES.update(
    {
        ag.SubtensorOp: _subtensor,
        ag.SetSubtensorOp: _subtensor_update,
        ag.IncSubtensorOp: _subtensor_update,
        ag.AdvancedSubtensorOp: _advanced_subtensor,
        ag.AdvancedSetSubtensorOp: _advanced_update,
        ag.AdvancedIncSubtensorOp: _advanced_update,
        ag.ReshapeOp: _reshape,
        ag.ConcatenateOp: _concatenate,
        ag.AllocOp: _alloc,
        ag.ArangeOp: _arange,
    }
)


# --- control flow -------------------------------------------------------------------------


def _if(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    """Theano's `IfElse.grad`: the condition gets none; a then value gets
    `ifelse(c, g, 0)` and an else value `ifelse(c, 0, g)`."""
    from arignote.ifelse import ifelse, zeros_of  # arignote.ifelse imports this package

    c, n = inputs[0], len(outputs)
    thens, elses = inputs[1 : 1 + n], inputs[1 + n :]
    then_grads = ifelse(c, list(gz), [zeros_of(t) for t in thens])
    else_grads = ifelse(c, [zeros_of(e) for e in elses], list(gz))
    return [None, *then_grads, *else_grads]


RULES[ag.IfOp] = _if


# --- debugging ops --------------------------------------------------------------------


def _print(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Print.grad: the gradient passes through (and is not printed).
    return [gz[0]]


RULES[ag.PrintOp] = _print


def _allreduce(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Every process's output depends on every process's input alike: the adjoint of an
    # allreduce is the same allreduce of the output gradients.
    assert isinstance(op, ag.AllreduceOp)
    reduction, timeout = op.reduction.data, op.timeout_ms.value.data
    return [apply_op(ag.AllreduceOp(T.as_tensor_variable(gz[0]).value, reduction, timeout))]


RULES[ag.AllreduceOp] = _allreduce


# --- shapes and indexing (issue 13 item 3) ----------------------------------------------


def _specify_shape(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # Theano's SpecifyShape.grad: the gradient passes through (the shape operands get none).
    return [gz[0]] + [None] * (len(inputs) - 1)


def _flatnonzero(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    return [None]


RULES.update(
    {
        ag.SpecifyShapeOp: _specify_shape,
        ag.AssertOp: _specify_shape,
        ag.FlatNonzeroOp: _flatnonzero,
    }
)

# --- extra_ops and sort (issue 13 item 4) ------------------------------------------------


def _cumulative(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's CumOp.grad (see arignote.tensor.extra_ops.cumulative_grad).
    from arignote.tensor.extra_ops import cumulative_grad

    return [cumulative_grad(op, inputs[0], outputs[0], gz[0])]


def _sort(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's SortOp.grad: each output gradient goes back to where its element came
    # from, the positions argsort gives (they are a permutation: a set, not an increment).
    from arignote.tensor import subtensor
    from arignote.tensor.sort import argsort, take_along_axis

    assert isinstance(op, ag.SortOp)
    x, axis = inputs[0], op.axis_value
    order = argsort(x, axis)
    target = take_along_axis(T.zeros_like(x), order, axis)
    return [subtensor.set_subtensor(target, T.cast(gz[0], x.dtype))]


RULES.update({ag.CumSumOp: _cumulative, ag.CumProdOp: _cumulative, ag.SortOp: _sort})

# --- pooling (issue 14 item 2, area pool): Theano's Pool, MaxPoolGrad, AveragePoolGrad and
# DownsampleFactorMaxGradGrad gradients (see arignote.tensor.signal.pool) ---------------


def _pooling(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    from arignote.tensor.signal.pool import GRAD_RULES

    return GRAD_RULES[type(op)](op, inputs, outputs, gz)


RULES.update({cls: _pooling for cls in ag.POOL_OPS})

# --- complex numbers (issue 13 item 2, dtypes) -------------------------------------------
#
# Theano's convention: the gradient of a real cost C with respect to a complex z = x + iy
# is dC/dx + i dC/dy. For a holomorphic op f (every complex-capable op but `real`,
# `imag` and `complex`) it is gz * conj(f'(z)), which is the real rule applied to
# conj(gz), conjugated: `conj(rule(conj(gz)))` (Theano's `Mul.grad` for complex outputs).


def _real(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Real.grad: complex(gz, 0).
    return [T.complex(gz[0], T.zeros_like(gz[0]))]


def _imag(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Imag.grad: complex(0, gz).
    return [T.complex(T.zeros_like(gz[0]), gz[0])]


def _complex(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Complex.grad: the real and imaginary parts of gz.
    return [T.real(gz[0]), T.imag(gz[0])]


def _holomorphic(rule: Rule) -> Rule:
    """`rule`, made right for complex outputs (see above); unchanged for real ones."""

    def wrapped(
        op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
    ) -> list[Any]:
        if not any(o.dtype.startswith("complex") for o in outputs):
            return rule(op, inputs, outputs, gz)
        terms = rule(op, inputs, outputs, [T.conj(g) for g in gz])
        return [None if t is None else T.conj(t) for t in terms]

    return wrapped


_NOT_HOLOMORPHIC = (ag.RealOp, ag.ImagOp, ag.ComplexOp, ag.CastOp)
RULES.update(
    {cls: _holomorphic(rule) for cls, rule in RULES.items() if cls not in _NOT_HOLOMORPHIC}
)
RULES.update({ag.RealOp: _real, ag.ImagOp: _imag, ag.ComplexOp: _complex})


# --- nnet functions (issue 14): softmax and its gradient -----------------------------------


def _softmax(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # Theano's Softmax.L_op: one SoftmaxGrad of the output gradient and the output.
    sm = outputs[0]
    return [apply_op(ag.SoftmaxGradOp(T.cast(gz[0], sm.dtype).value, sm.value))]


def _softmax_grad(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # dx = (dy - s) * sm with s = sum(dy * sm) along the last axis.
    dy, sm = inputs
    g = gz[0]
    axis = sm.ndim - 1
    s = T.sum(T.mul(dy, sm), axis=axis, keepdims=True)
    gs = T.sum(T.mul(g, sm), axis=axis, keepdims=True)
    g_dy = T.mul(T.sub(g, gs), sm)
    g_sm = T.sub(T.mul(T.sub(dy, s), g), T.mul(gs, dy))
    return [g_dy, g_sm]


def _logsoftmax(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    # dx = g - sum(g) * softmax(x), with softmax(x) = exp(logsoftmax(x)) (finite).
    out = outputs[0]
    g = T.cast(gz[0], out.dtype)
    total = T.sum(g, axis=out.ndim - 1, keepdims=True)
    return [T.sub(g, T.mul(total, T.exp(out)))]


RULES.update({ag.SoftmaxOp: _softmax, ag.SoftmaxGradOp: _softmax_grad})
RULES[ag.LogSoftmaxOp] = _logsoftmax


def _softmax_xent(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # d nll / dx = g * (softmax(x) - onehot(y)): one ag.softmax_xent_grad.
    x, y = inputs
    g = T.cast(gz[0], x.dtype)
    return [apply_op(ag.SoftmaxXentGradOp(g.value, x.value, y.value)), None]


def _softmax_xent_grad(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # dx = dnll[:, None] * (sm - onehot), sm = softmax(x): linear in dnll, and in x a
    # softmax_grad scaled by dnll.
    from arignote.tensor import subtensor

    dnll, x, y = inputs
    g = gz[0]
    sm = apply_op(ag.SoftmaxOp(x.value))
    rows = subtensor.arange(T.shape_i(x, 0))
    g_dnll = T.sub(T.sum(T.mul(g, sm), axis=1), g[rows, y])
    column = dnll.dimshuffle(0, "x")
    g_x = apply_op(ag.SoftmaxGradOp(T.mul(g, column).value, sm.value))
    return [g_dnll, g_x, None]


RULES.update({ag.SoftmaxXentOp: _softmax_xent, ag.SoftmaxXentGradOp: _softmax_xent_grad})
# --- convolution (issue 14, conv) ------------------------------------------------------
#
# The three conv ops are bilinear, and each one's partial derivatives are the other two
# (with the same strides, dilations, pads and groups): so second derivatives are conv
# ops again.


def _conv_params(op: Operation) -> tuple[Any, ...]:
    assert isinstance(op, ag.ConvBase)
    p = op.params
    return p.strides, p.dilations, p.pads, p.groups


def _sizes_of(v: Variable) -> list[Any]:
    return [T.shape_i(v, i).value for i in range(2, v.ndim)]


def _static_of(v: Variable) -> list[int]:
    return list(ag.value_shape(v.value)[2:])


def _conv_inputs_grad(op: Operation, gy: Variable, w: Variable, like: Variable) -> Variable:
    return apply_op(
        ag.ConvGradInputsOp(
            gy.value, w.value, _sizes_of(like), *_conv_params(op), spatial=_static_of(like)
        )
    )


def _conv_weights_grad(op: Operation, x: Variable, gy: Variable, like: Variable) -> Variable:
    return apply_op(
        ag.ConvGradWeightsOp(
            x.value, gy.value, _sizes_of(like), *_conv_params(op), kernel=_static_of(like)
        )
    )


def _conv_forward(op: Operation, x: Variable, w: Variable) -> Variable:
    return apply_op(ag.ConvOp(x.value, w.value, *_conv_params(op)))


def _conv(op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]):
    x, w = inputs
    g = T.cast(gz[0], outputs[0].dtype)
    return [_conv_inputs_grad(op, g, w, x), _conv_weights_grad(op, x, g, w)]


def _conv_grad_weights(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # gW = weights_grad(x, gy): d/dx = inputs_grad(gy, G), d/dgy = conv(x, G)
    x, gy = inputs[0], inputs[1]
    g = T.cast(gz[0], outputs[0].dtype)
    terms = [_conv_inputs_grad(op, gy, g, x), _conv_forward(op, x, g)]
    return terms + [None] * (len(inputs) - 2)


def _conv_grad_inputs(
    op: Operation, inputs: list[Variable], outputs: list[Variable], gz: list[Variable]
):
    # gX = inputs_grad(gy, w): d/dgy = conv(G, w), d/dw = weights_grad(G, gy)
    gy, w = inputs[0], inputs[1]
    g = T.cast(gz[0], outputs[0].dtype)
    terms = [_conv_forward(op, g, w), _conv_weights_grad(op, g, gy, w)]
    return terms + [None] * (len(inputs) - 2)


RULES.update(
    {
        ag.ConvOp: _conv,
        ag.ConvGradWeightsOp: _conv_grad_weights,
        ag.ConvGradInputsOp: _conv_grad_inputs,
    }
)
