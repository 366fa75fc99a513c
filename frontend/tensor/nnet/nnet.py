"""`arignote.tensor.nnet.nnet`: Theano's softmax and cross-entropy family (issue 14).

`softmax` is one `ag.softmax` op (its gradient one `ag.softmax_grad`); the rest are
compositions of tensor operations, written so that nothing overflows:

- `logsoftmax(x)`: `x - max - log(sum(exp(x - max)))`;
- `crossentropy_softmax_argmax_1hot_with_bias(x, b, y_idx)`: `nll = logsumexp(x + b) -
  (x + b)[i, y_idx[i]]` (finite for any finite logits; its gradient is `softmax - onehot`),
  `softmax(x + b)` and `argmax(x + b)`;
- `categorical_crossentropy(softmax(x), y)` and `-log(softmax(x)[arange(n), y])` are
  written naively but compiled stably: the `softmax-xent` rewrite (see
  `arignote.lowering.graph.softmax_xent`) turns them, and their gradients, into the
  log-sum-exp form and `g * (softmax(x) - onehot(y))`.

Theano's op classes (`Softmax`, `SoftmaxGrad`, `CrossentropySoftmaxArgmax1HotWithBias`,
...) are callable objects building these graphs; `Softmax` and `SoftmaxGrad` are also
the views (`node.op`) of `ag.softmax` and `ag.softmax_grad`.
"""

from __future__ import annotations

import warnings
from typing import Any

from arignote.dialects import ag
from arignote.graph import _OP_VIEWS, Op, Variable, apply_op
from arignote.tensor import basic

FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def _T() -> Any:  # noqa: N802 - the tensor namespace, imported when first needed
    import arignote.tensor as T

    return T


def _float_tensor(x: Any, what: str, ndims: tuple[int, ...]) -> Variable:
    v = basic.as_tensor_variable(x)
    if v.ndim not in ndims or v.dtype not in FLOAT_DTYPES:
        wanted = " or ".join(f"{n}-d" for n in ndims)
        raise ValueError(f"{what} must be {wanted} tensor of floats. Got {v.type}")
    return v


def _index_vector(y: Any, what: str = "y_idx") -> Variable:
    v = basic.as_tensor_variable(y)
    if v.ndim != 1 or v.dtype not in INT_DTYPES:
        raise ValueError(f"{what} must be 1-d tensor of [u]ints, got {v.type}")
    return v


def _rows(x: Variable) -> Variable:
    return _T().arange(basic.shape_i(x, 0))


# --- softmax ----------------------------------------------------------------------------


def _softmax(v: Variable) -> Variable:
    return apply_op(ag.SoftmaxOp(v.value))


class Softmax(Op):
    """Theano's `Softmax` op: `softmax_op(x)` along the last axis of a float tensor of
    rank 1 or more (a vector gives a vector). Also the view of `ag.softmax`."""

    def __call__(self, x: Any) -> Variable:  # type: ignore[override]
        v = basic.as_tensor_variable(x)
        if v.ndim == 0 or v.dtype not in FLOAT_DTYPES:
            raise ValueError(f"x must be 1-d or 2-d tensor of floats. Got {v.type}")
        return _softmax(v)


class SoftmaxGrad(Op):
    """Theano's `SoftmaxGrad`: `softmax_grad(dy, sm) = (dy - sum(dy * sm)) * sm` row by
    row. Also the view of `ag.softmax_grad`."""

    def __call__(self, dy: Any, sm: Any) -> Variable:  # type: ignore[override]
        d = _float_tensor(dy, "dy", (1, 2))
        s = _float_tensor(sm, "sm", (1, 2))
        if d.ndim == 1 and s.ndim == 2:
            d = _T().shape_padleft(d)
        if s.ndim == 1 and d.ndim == 2:
            s = _T().shape_padleft(s)
        d = basic.cast(d, s.dtype)
        return apply_op(ag.SoftmaxGradOp(d.value, s.value))


class LogSoftmax(Op):
    """Theano's `LogSoftmax`: `logsoftmax_op(x)` (see `logsoftmax`)."""

    def __call__(self, x: Any) -> Variable:  # type: ignore[override]
        return logsoftmax(x)


class SoftmaxWithBias(Op):
    """Theano's `SoftmaxWithBias`: `softmax(x + b)` for a float matrix `x` and a float
    vector `b` of its column count."""

    def __call__(self, x: Any, b: Any) -> Variable:  # type: ignore[override]
        xv = _float_tensor(x, "x", (2,))
        bv = _float_tensor(b, "b", (1,))
        return _softmax(basic.add(xv, bv))


_OP_VIEWS.update(
    {ag.SoftmaxOp: Softmax, ag.SoftmaxGradOp: SoftmaxGrad, ag.LogSoftmaxOp: LogSoftmax}
)

softmax_op = Softmax()
softmax_grad = SoftmaxGrad()
logsoftmax_op = LogSoftmax()
softmax_with_bias = SoftmaxWithBias()


def softmax(c: Any) -> Variable:
    """`exp(c) / sum(exp(c))` along the last axis, as one `ag.softmax` (the row maximum is
    subtracted first, so nothing overflows). A float tensor of rank 1 or more."""
    v = basic.as_tensor_variable(c)
    if v.ndim > 0 and v.broadcastable[-1]:
        warnings.warn(
            "The softmax is applied on a dimension of shape 1, which does not have a "
            "semantic meaning.",
            stacklevel=2,
        )
    return softmax_op(v)


def softmax_graph(c: Any) -> Variable:
    """Theano's `softmax_graph`: the literal `exp(c) / exp(c).sum(axis=-1, keepdims=True)`
    (without the maximum subtracted: it overflows for large `c`, as Theano's)."""
    e = basic.exp(basic.as_tensor_variable(c))
    return basic.true_div(e, basic.sum(e, axis=-1, keepdims=True))


def logsoftmax(c: Any) -> Variable:
    """`log(softmax(c))` along the last axis, as `c - max - log(sum(exp(c - max)))`: one
    `ag.logsoftmax` (its gradient `g - sum(g) * softmax(c)`)."""
    v = basic.as_tensor_variable(c)
    if v.ndim == 0 or v.dtype not in FLOAT_DTYPES:
        raise ValueError(f"x must be 1-d or 2-d tensor of floats. Got {v.type}")
    return apply_op(ag.LogSoftmaxOp(v.value))


def softmax_simplifier(numerators: list[Any], denominators: list[Any]) -> tuple[list, list]:
    """Theano's canonicalizer hook: finds `exp(x)` in `numerators` over its row sum in
    `denominators` and replaces the pair by `softmax(x)`. Returns the new lists."""
    nums, dens = list(numerators), list(denominators)
    for num in list(nums):
        x = _exp_input(num)
        if x is None or x.ndim != 2:
            continue
        match = next((d for d in dens if _is_row_sum_of(d, num)), None)
        if match is None:
            continue
        nums.remove(num)
        dens.remove(match)
        nums.append(softmax(x))
    return nums, dens


def _exp_input(v: Any) -> Variable | None:
    owner = getattr(v, "owner", None)
    if owner is None or not isinstance(owner.ir_op, ag.OPS["exp"]):
        return None
    return owner.inputs[0]


def _is_row_sum_of(d: Any, num: Variable) -> bool:
    owner = getattr(d, "owner", None)
    while owner is not None and isinstance(owner.ir_op, ag.DimShuffleOp):
        owner = owner.inputs[0].owner
    if owner is None or not isinstance(owner.ir_op, ag.ReduceSumOp):
        return False
    return owner.inputs[0] is num or owner.inputs[0].value is num.value


# --- cross-entropy ----------------------------------------------------------------------


def _check_bias(bv: Variable) -> None:
    if bv.ndim != 1 or bv.dtype not in FLOAT_DTYPES:
        raise ValueError(f"b must be 1-d tensor of floats, got {bv.type}")


class CrossentropySoftmaxArgmax1HotWithBias(Op):
    """Theano's op: `(nll, softmax(x + b), argmax(x + b))` for a float matrix `x`, a float
    vector `b` and an integer vector `y_idx` (one class per row); `nll[i] =
    -log(softmax(x + b)[i, y_idx[i]])`, computed as `logsumexp - (x + b)[i, y_idx[i]]` by
    one `ag.softmax_xent` (its gradient one `ag.softmax_xent_grad`)."""

    def __call__(self, x: Any, b: Any, y_idx: Any) -> list[Variable]:  # type: ignore[override]
        xv = _float_tensor(x, "x", (2,))
        bv = basic.as_tensor_variable(b)
        _check_bias(bv)
        return _xent_softmax_argmax(basic.add(xv, bv), _index_vector(y_idx))


def _xent_softmax_argmax(z: Variable, y: Variable) -> list[Variable]:
    """`(nll, softmax(z), argmax(z))` of the logits `z` (bias already added)."""
    nll = apply_op(ag.SoftmaxXentOp(z.value, y.value))
    am = basic.cast(basic.argmax(z, axis=1), y.dtype)
    return [nll, _softmax(z), am]


class CrossentropySoftmax1HotWithBiasDx(Op):
    """Theano's op: the gradient with respect to `x` of the nll above, `dy[i] * (sm[i] -
    onehot(y_idx[i]))`, from the nll's gradient `dy` (a vector, or a 0-d tensor for
    every row), the softmax `sm` and `y_idx`."""

    def __call__(self, dy: Any, sm: Any, y_idx: Any) -> Variable:  # type: ignore[override]
        d = _float_tensor(dy, "dy", (0, 1))
        s = _float_tensor(sm, "sm", (2,))
        yv = _index_vector(y_idx)
        d = basic.cast(d, s.dtype)
        column = _T().shape_padright(d) if d.ndim == 1 else d
        scaled = basic.mul(column, s)
        step = d if d.ndim == 1 else basic.fill(yv, d)
        return _T().inc_subtensor(scaled[_rows(s), yv], basic.neg(step))


class CrossentropyCategorical1Hot(Op):
    """Theano's op: `-log(coding_dist[i, true_one_of_n[i]])` for a matrix `coding_dist` and
    an int32 or int64 vector `true_one_of_n`."""

    def __call__(self, coding_dist: Any, true_one_of_n: Any) -> Variable:  # type: ignore[override]
        p = basic.as_tensor_variable(coding_dist)
        t = basic.as_tensor_variable(true_one_of_n)
        if p.ndim != 2:
            raise TypeError("matrix required for argument: coding_dist")
        if t.ndim != 1 or t.dtype not in ("int32", "int64"):
            raise TypeError(
                "integer vector required for argument: true_one_of_n"
                f"(got type: {t.type} instead of: TensorType(int64, vector))"
            )
        return basic.neg(basic.log(p[_rows(p), t]))


class CrossentropyCategorical1HotGrad(Op):
    """Theano's op: the gradient of `crossentropy_categorical_1hot` with respect to
    `coding_dist`: zeros but `-g_y[i] / coding_dist[i, true_one_of_n[i]]` at the targets."""

    def __call__(self, g_y: Any, coding_dist: Any, true_one_of_n: Any) -> Variable:  # type: ignore[override]
        T = _T()
        p = basic.as_tensor_variable(coding_dist)
        t = basic.as_tensor_variable(true_one_of_n)
        g = basic.as_tensor_variable(g_y)
        rows = _rows(p)
        picked = p[rows, t]
        value = basic.true_div(basic.neg(g), picked)
        return T.set_subtensor(T.zeros_like(p)[rows, t], basic.cast(value, p.dtype))


class CrossentropySoftmax1HotWithBiasAndDx(Op):
    """The view of `ag.softmax_xent_pair`: `CrossentropySoftmaxArgmax1HotWithBias`'s
    nll and `CrossentropySoftmax1HotWithBiasDx`'s gradient in one pass (made by the
    `softmax-xent-pair` pass; not one of Theano's ops)."""


_OP_VIEWS.update(
    {
        ag.SoftmaxXentOp: CrossentropySoftmaxArgmax1HotWithBias,
        ag.SoftmaxXentGradOp: CrossentropySoftmax1HotWithBiasDx,
        ag.SoftmaxXentPairOp: CrossentropySoftmax1HotWithBiasAndDx,
    }
)

crossentropy_softmax_argmax_1hot_with_bias = CrossentropySoftmaxArgmax1HotWithBias()
crossentropy_softmax_1hot_with_bias_dx = CrossentropySoftmax1HotWithBiasDx()
crossentropy_categorical_1hot = CrossentropyCategorical1Hot()
crossentropy_categorical_1hot_grad = CrossentropyCategorical1HotGrad()


def crossentropy_softmax_1hot_with_bias(x: Any, b: Any, y_idx: Any, **kwargs: Any) -> list:
    """`(nll, softmax(x + b))`: the first two outputs of
    `crossentropy_softmax_argmax_1hot_with_bias`."""
    return crossentropy_softmax_argmax_1hot_with_bias(x, b, y_idx)[0:2]


def crossentropy_softmax_1hot(x: Any, y_idx: Any, **kwargs: Any) -> list:
    """`(nll, softmax(x))`: `crossentropy_softmax_1hot_with_bias` with a zero bias (which
    is not added)."""
    return _xent_softmax_argmax(_float_tensor(x, "x", (2,)), _index_vector(y_idx))[0:2]


def crossentropy_softmax_max_and_argmax_1hot_with_bias(
    x: Any, b: Any, y_idx: Any, **kwargs: Any
) -> tuple:
    """`(nll, softmax(x + b), max probability, argmax)` of each row."""
    xent, sm = crossentropy_softmax_1hot_with_bias(x, b, y_idx)
    max_pr, argmax = basic.max_and_argmax(sm, axis=-1)
    return xent, sm, max_pr, argmax


def crossentropy_softmax_max_and_argmax_1hot(x: Any, y_idx: Any, **kwargs: Any) -> tuple:
    """`crossentropy_softmax_max_and_argmax_1hot_with_bias` with a zero bias."""
    xent, sm = crossentropy_softmax_1hot(x, y_idx)
    max_pr, argmax = basic.max_and_argmax(sm, axis=-1)
    return xent, sm, max_pr, argmax


def categorical_crossentropy(coding_dist: Any, true_dist: Any) -> Variable:
    """The cross-entropy between each row of `coding_dist` and its target: a row of
    `true_dist` (same rank: `-sum(true_dist * log(coding_dist))` over the last axis) or
    an integer class index (`true_dist` one rank less: `crossentropy_categorical_1hot`).
    With `coding_dist = softmax(x)` the compiled graph is the stable log-sum-exp form."""
    p = basic.as_tensor_variable(coding_dist)
    t = basic.as_tensor_variable(true_dist)
    if t.ndim == p.ndim:
        return basic.neg(basic.sum(basic.mul(t, basic.log(p)), axis=p.ndim - 1))
    if t.ndim == p.ndim - 1:
        return crossentropy_categorical_1hot(p, t)
    raise TypeError("rank mismatch between coding and true distributions")


def binary_crossentropy(output: Any, target: Any) -> Variable:
    """Elementwise `-(target * log(output) + (1 - target) * log(1 - output))`."""
    o, t = basic._operands(output, target)
    first = basic.mul(t, basic.log(o))
    second = basic.mul(basic.sub(1.0, t), basic.log(basic.sub(1.0, o)))
    return basic.neg(basic.add(first, second))


def sigmoid_binary_crossentropy(output: Any, target: Any) -> Variable:
    """`binary_crossentropy(sigmoid(output), target)` computed stably, as Theano's
    `softplus(-|output|) + output * ((output > 0) - target)`; its gradient with respect to
    `output` is `sigmoid(output) - target`."""
    from arignote.tensor.nnet.sigm import softplus

    o, t = basic._operands(output, target)
    positive = basic.cast(basic.gt(o, 0), o.dtype)
    return basic.add(softplus(basic.neg(basic.abs(o))), basic.mul(o, basic.sub(positive, t)))


# --- rows, hierarchical softmax, confusion matrix ---------------------------------------


def _prepend(val: Any, mat: Any) -> Variable:
    T = _T()
    m = basic.as_tensor_variable(mat)
    if m.ndim != 2 or m.broadcastable != (False, False):
        raise TypeError("Expected a matrix as input")
    v = basic.cast(basic.as_tensor_variable(val), m.dtype)
    if v.ndim != 0:
        raise TypeError(f"the value to prepend must be a scalar, got {v.type}")
    column = T.alloc(v, basic.shape_i(m, 0), 1)
    return T.unbroadcast(T.concatenate([column, m], axis=1), 1)


class Prepend_scalar_constant_to_each_row(Op):  # noqa: N801 - Theano's name
    """Theano's op: a column of the constant `val` before the first column of a matrix."""

    def __init__(self, val: float = 0) -> None:
        super().__init__()
        self.val = val

    def __call__(self, mat: Any) -> Variable:  # type: ignore[override]
        return _prepend(self.val, mat)

    def __str__(self) -> str:
        return f"{type(self).__name__}{{{self.val}}}"


class Prepend_scalar_to_each_row(Op):  # noqa: N801 - Theano's name
    """Theano's op: `prepend_scalar_to_each_row(val, mat)`, a column of the scalar `val`
    (symbolic or not) before the first column of a matrix."""

    def __call__(self, val: Any, mat: Any) -> Variable:  # type: ignore[override]
        return _prepend(val, mat)


prepend_scalar_to_each_row = Prepend_scalar_to_each_row()
prepend_0_to_each_row = Prepend_scalar_constant_to_each_row(0.0)
prepend_1_to_each_row = Prepend_scalar_constant_to_each_row(1.0)


def h_softmax(
    x: Any,
    batch_size: Any,
    n_outputs: int,
    n_classes: int,
    n_outputs_per_class: int,
    W1: Any,  # noqa: N803 - Theano's names
    b1: Any,
    W2: Any,  # noqa: N803
    b2: Any,
    target: Any = None,
) -> Variable:
    """Theano's two-level hierarchical softmax: the probabilities of every output
    (`target` None, a `(batch_size, n_outputs)` matrix) or of each row's target only."""
    from arignote.tensor.nnet.blocksparse import sparse_block_dot

    T = _T()
    x = basic.as_tensor_variable(x)
    class_probs = softmax(basic.add(basic.dot(x, W1), b1))
    if target is None:
        activations = basic.add(T.tensordot(x, W2, (1, 1)), b2)
        output_probs = softmax(activations.reshape((-1, n_outputs_per_class)))
        output_probs = output_probs.reshape((batch_size, n_classes, -1))
        output_probs = basic.mul(class_probs.dimshuffle(0, 1, "x"), output_probs)
        output_probs = output_probs.reshape((batch_size, -1))
        return output_probs[:, :n_outputs]
    target = basic.as_tensor_variable(target).flatten()
    target_classes = target // n_outputs_per_class
    target_outputs_in_class = target % n_outputs_per_class
    activations = sparse_block_dot(
        basic.as_tensor_variable(W2).dimshuffle("x", 0, 1, 2),
        x.dimshuffle(0, "x", 1),
        T.zeros((batch_size, 1), dtype="int32"),
        b2,
        target_classes.dimshuffle(0, "x"),
    )
    output_probs = softmax(activations.dimshuffle(0, 2))
    rows = T.arange(batch_size)
    target_class_probs = class_probs[rows, target_classes]
    output_probs = output_probs[rows, target_outputs_in_class]
    return basic.mul(target_class_probs, output_probs)


def confusion_matrix(actual: Any, pred: Any) -> list[Variable]:
    """`[conf_mat, order]`: `order` the sorted distinct values of `actual` and `pred`,
    `conf_mat[i, j]` (int64) the number of positions where `actual` is `order[i]` and
    `pred` is `order[j]`."""
    T = _T()
    a = basic.as_tensor_variable(actual)
    p = basic.as_tensor_variable(pred)
    if a.ndim != 1:
        raise ValueError("actual must be 1-d tensor variable")
    if p.ndim != 1:
        raise ValueError("pred must be 1-d tensor variable")
    order = T.extra_ops.unique(T.concatenate([a, p]))
    one_hot_a = basic.cast(basic.eq(a.dimshuffle(0, "x"), order), "int64")
    one_hot_p = basic.cast(basic.eq(p.dimshuffle(0, "x"), order), "int64")
    return [basic.dot(one_hot_a.T, one_hot_p), order]


def graph_merge_softmax_with_crossentropy_softmax(*args: Any, **kwargs: Any) -> None:
    """Theano's graph rewrite merging a `softmax(x + b)` with the softmax output of a
    `crossentropy_softmax_argmax_1hot_with_bias(x, b, ...)`. Here common subexpression
    elimination merges the two `ag.softmax` ops; calling this does nothing."""
    return None


def crossentropy_to_crossentropy_with_softmax(*args: Any, **kwargs: Any) -> None:
    """Theano's graph rewrite of `crossentropy_categorical_1hot(softmax(x), y)`. Here the
    `softmax-xent` pass (`arignote.lowering.graph.softmax_xent`) does it in every compiled
    function; calling this does nothing."""
    return None


crossentropy_to_crossentropy_with_softmax_with_bias = crossentropy_to_crossentropy_with_softmax


def relu(x: Any, alpha: Any = 0) -> Variable:
    """The rectifier `max(x, 0)`, or the leaky `x if x > 0 else alpha * x` (Theano's
    formula, so the gradient at 0 is `(1 + alpha) / 2`)."""
    v = basic.as_tensor_variable(x)
    if isinstance(alpha, int | float) and alpha == 0:
        return basic.mul(0.5, basic.add(v, basic.abs(v)))
    if isinstance(alpha, int | float):  # Python numbers stay weakly typed
        f1, f2 = 0.5 * (1 + alpha), 0.5 * (1 - alpha)
    else:
        f1 = basic.mul(0.5, basic.add(1, alpha))
        f2 = basic.mul(0.5, basic.sub(1, alpha))
    return basic.add(basic.mul(f1, v), basic.mul(f2, basic.abs(v)))


def elu(x: Any, alpha: Any = 1) -> Variable:
    """The exponential linear unit: `x if x > 0 else alpha * (exp(x) - 1)`."""
    v = basic.as_tensor_variable(x)
    return basic.switch(basic.gt(v, 0), v, basic.mul(alpha, basic.TABLE_FUNCTIONS["expm1"](v)))


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Any) -> Variable:
    """The scaled exponential linear unit: `scale * elu(x, alpha)` with Klambauer et
    al.'s constants."""
    return basic.mul(SELU_SCALE, elu(x, SELU_ALPHA))


def softsign(x: Any) -> Variable:
    """Elementwise `x / (1 + |x|)` (integers compute in float)."""
    v = basic.as_tensor_variable(x)
    return basic.true_div(v, basic.add(1, basic.abs(v)))


scalar_softsign = softsign
"""Theano's scalar op; here the same function (a scalar is a 0-d tensor)."""
