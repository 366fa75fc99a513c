"""`arignote.tensor.nnet`: neural-network functions (Theano's `theano.tensor.nnet`).

`sigmoid` and `softplus` are `ag` ops computed without overflow (see `ag.sigmoid`,
`ag.softplus`); the others are compositions of tensor operations:

- `relu(x, alpha=0)`: Theano's formula `0.5 * (1 + alpha) * x + 0.5 * (1 - alpha) * |x|`;
- `softmax(x)`: over the last axis, after subtracting the row maximum;
- `logsoftmax(x)`: `x - max - log(sum(exp(x - max)))` over the last axis;
- `categorical_crossentropy(coding_dist, true_dist)`: `-sum(true_dist * log(coding_dist))`
  over the last axis for a one-hot or probability `true_dist`; an integer vector
  `true_dist` picks `-log(coding_dist[i, true_dist[i]])` (advanced indexing);
- `binary_crossentropy(output, target)`: `-(target * log(output) + (1 - target) *
  log(1 - output))`.
"""

from __future__ import annotations

from typing import Any

from arignote.dialects import ag
from arignote.graph import Variable
from arignote.tensor import basic

__all__ = [
    "binary_crossentropy",
    "categorical_crossentropy",
    "logsoftmax",
    "relu",
    "sigmoid",
    "softmax",
    "softplus",
]

_INT_DTYPES = ("int8", "int16", "int32", "int64")


def sigmoid(x: Any) -> Variable:
    """Elementwise `1 / (1 + exp(-x))` (integers compute in float, as `exp`)."""
    return basic._unary_float(ag.SigmoidOp, x)


def softplus(x: Any) -> Variable:
    """Elementwise `log(1 + exp(x))` (integers compute in float, as `exp`)."""
    return basic._unary_float(ag.SoftplusOp, x)


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


def _last_axis(v: Variable, what: str) -> int:
    if v.ndim == 0:
        raise ValueError(f"{what}: expected a tensor of at least one dimension, got {v}")
    return v.ndim - 1


def softmax(x: Any) -> Variable:
    """`exp(x) / sum(exp(x))` over the last axis (the rows of a matrix), computed after
    subtracting the maximum of each row so that no `exp` overflows."""
    v = basic.as_tensor_variable(x)
    axis = _last_axis(v, "softmax")
    e = basic.exp(basic.sub(v, basic.max(v, axis=axis, keepdims=True)))
    return basic.true_div(e, basic.sum(e, axis=axis, keepdims=True))


def logsoftmax(x: Any) -> Variable:
    """`log(softmax(x))` over the last axis, as `x - max - log(sum(exp(x - max)))`."""
    v = basic.as_tensor_variable(x)
    axis = _last_axis(v, "logsoftmax")
    shifted = basic.sub(v, basic.max(v, axis=axis, keepdims=True))
    total = basic.sum(basic.exp(shifted), axis=axis, keepdims=True)
    return basic.sub(shifted, basic.log(total))


def categorical_crossentropy(coding_dist: Any, true_dist: Any) -> Variable:
    """The cross-entropy between each row of `coding_dist` and the matching target: a row
    of `true_dist` (one-hot or probabilities, same shape), or an integer class index
    (an integer vector, one per row of the matrix `coding_dist`)."""
    p = basic.as_tensor_variable(coding_dist)
    t = basic.as_tensor_variable(true_dist)
    if t.ndim == p.ndim:
        axis = _last_axis(p, "categorical_crossentropy")
        return basic.neg(basic.sum(basic.mul(t, basic.log(p)), axis=axis))
    if t.ndim == 1 and p.ndim == 2 and t.dtype in _INT_DTYPES:
        return _crossentropy_of_indices(p, t)
    raise TypeError(
        "categorical_crossentropy: true_dist must have coding_dist's rank, or be an integer "
        f"vector for a matrix coding_dist; got {p.type} and {t.type}"
    )


def _crossentropy_of_indices(p: Variable, t: Variable) -> Variable:
    """`-log(p[arange(n), t])`, through advanced indexing."""
    from arignote.tensor import subtensor

    rows = subtensor.arange(basic.shape_i(p, 0))
    return basic.neg(basic.log(p[rows, t]))


def binary_crossentropy(output: Any, target: Any) -> Variable:
    """Elementwise `-(target * log(output) + (1 - target) * log(1 - output))`."""
    o, t = basic._operands(output, target)
    first = basic.mul(t, basic.log(o))
    second = basic.mul(basic.sub(1, t), basic.log(basic.sub(1, o)))
    return basic.neg(basic.add(first, second))

# --- pooling and neighbours (issue 14 item 2, area pool): Theano's submodule
# theano.tensor.nnet.neighbours (images2neibs, neibs2images, Images2Neibs) ---
from arignote.tensor.nnet import neighbours  # noqa: E402, F401
