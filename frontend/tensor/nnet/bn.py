"""`arignote.tensor.nnet.bn`: Theano's batch normalization (issue 14).

Every function is a composition of tensor operations (means, variances and elementwise
ops, which the `fusion` pass merges), so gradients come from the ordinary rules:

- `batch_normalization(inputs, gamma, beta, mean, std, mode)`: `(inputs - mean) *
  (gamma / std) + beta`;
- `batch_normalization_train(inputs, gamma, beta, axes, epsilon, running_average_factor,
  running_mean, running_var)`: normalizes with the mean and variance over `axes`, and
  returns `(out, mean, invstd[, new_running_mean, new_running_var])` as Theano's;
- `batch_normalization_test(inputs, gamma, beta, mean, var, axes, epsilon)`: `(inputs -
  mean) * gamma / sqrt(var + epsilon) + beta`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from arignote.graph import Op, Variable
from arignote.tensor import basic


def _T() -> Any:  # noqa: N802
    import arignote.tensor as T

    return T


def batch_normalization(
    inputs: Any, gamma: Any, beta: Any, mean: Any, std: Any, mode: str = "low_mem"
) -> Variable:
    """`(inputs - mean) * (gamma / std) + beta`; the parameters broadcast against
    `inputs`. `mode` ('low_mem' or 'high_mem') picks Theano's implementation; both are
    this one expression here (the `fusion` pass makes it one loop)."""
    if mode not in ("low_mem", "high_mem"):
        raise ValueError('mode must be either "low_mem", "high_mem"')
    x = basic.as_tensor_variable(inputs)
    scale = basic.true_div(gamma, std)
    return basic.add(basic.mul(basic.sub(x, mean), scale), beta)


def _prepare_axes(axes: Any, ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    if isinstance(axes, str) and axes == "per-activation":
        chosen: tuple[int, ...] = (0,)
    elif isinstance(axes, str) and axes == "spatial":
        chosen = (0, *range(2, ndim))
    elif isinstance(axes, tuple | list | np.ndarray):
        chosen = tuple(int(a) for a in axes)
    else:
        raise ValueError(f"invalid axes: {axes}")
    chosen = tuple(sorted(chosen))
    if not chosen:
        raise ValueError("there should be at least one normalization axis")
    if min(chosen) < 0 or max(chosen) >= ndim:
        raise ValueError(f"axes should be less than ndim (<{ndim}), but {chosen} given")
    return chosen, tuple(i for i in range(ndim) if i not in chosen)


def _check_epsilon(epsilon: float) -> None:
    from arignote import config

    if np.asarray(epsilon, dtype=config.floatX) < 1e-5:
        raise ValueError(f"epsilon must be at least 1e-5, got {epsilon}")


class _Params:
    """Expands per-channel parameters (of the non-normalized axes' rank) to `inputs`'
    rank, or accepts them at that rank, as Theano's functions do."""

    def __init__(self, ndim: int, axes: Sequence[int], kept: Sequence[int], given_ndim: int):
        self.ndim, self.axes, self.kept = ndim, tuple(axes), tuple(kept)
        self.expanded = given_ndim != ndim
        self.param_ndim = len(self.kept) if self.expanded else ndim

    def check(self, what: str, *values: Variable) -> None:
        if any(v.ndim != self.param_ndim for v in values):
            got = " and ".join(str(v.ndim) for v in values)
            raise ValueError(
                f"{what} must be of the same dimensionality as gamma and beta; "
                f"got {got} instead of {self.param_ndim}"
            )

    def expand(self, v: Variable) -> Variable:
        if not self.expanded:
            return _T().addbroadcast(v, *self.axes)
        pattern: list[Any] = ["x"] * self.ndim
        for i, axis in enumerate(self.kept):
            pattern[axis] = i
        return v.dimshuffle(*pattern)

    def shrink(self, v: Variable) -> Variable:
        return v.dimshuffle(*self.kept) if self.expanded else v


def _params(inputs: Variable, gamma: Variable, beta: Variable, axes: Any) -> _Params:
    chosen, kept = _prepare_axes(axes, inputs.ndim)
    p = _Params(inputs.ndim, chosen, kept, gamma.ndim)
    if gamma.ndim != p.param_ndim or beta.ndim != p.param_ndim:
        raise ValueError(
            "gamma and beta dimensionality must match the number of non-normalized axes, "
            "or have the same number of dimensions as the inputs; "
            f"got {gamma.ndim} and {beta.ndim} instead of {p.param_ndim}"
        )
    return p


class AbstractBatchNormTrain(Op):
    """Theano's op: `(out, mean, invstd[, new_running_mean, new_running_var])` with the
    statistics over `axes`, on parameters already of `inputs`' rank."""

    def __init__(self, axes: Sequence[int] = (0,)) -> None:
        super().__init__()
        self.axes = tuple(axes)

    def __call__(  # type: ignore[override]
        self,
        x: Any,
        scale: Any,
        bias: Any,
        epsilon: float = 1e-4,
        running_average_factor: float = 0.1,
        running_mean: Any = None,
        running_var: Any = None,
    ) -> list[Variable]:
        T = _T()
        x = basic.as_tensor_variable(x)
        mean = T.mean(x, axis=self.axes, keepdims=True)
        var = T.var(x, axis=self.axes, keepdims=True)
        invstd = basic.true_div(1, basic.TABLE_FUNCTIONS["sqrt"](basic.add(var, epsilon)))
        out = basic.add(basic.mul(basic.mul(basic.sub(x, mean), invstd), scale), bias)
        results = [out, mean, invstd]
        if running_mean is None:
            return results
        factor = running_average_factor
        new_mean = basic.add(basic.mul(running_mean, 1 - factor), basic.mul(mean, factor))
        count = basic.true_div(basic.prod(x.shape), basic.prod(mean.shape))
        count = basic.cast(count, var.dtype)
        unbiased = basic.mul(basic.true_div(count, basic.sub(count, 1)), var)
        new_var = basic.add(basic.mul(running_var, 1 - factor), basic.mul(unbiased, factor))
        return [*results, new_mean, new_var]


class AbstractBatchNormInference(Op):
    """Theano's op: `(x - mean) * scale / sqrt(var + epsilon) + bias`."""

    def __init__(self, axes: Sequence[int] = (0,)) -> None:
        super().__init__()
        self.axes = tuple(axes)

    def __call__(  # type: ignore[override]
        self, x: Any, scale: Any, bias: Any, mean: Any, var: Any, epsilon: float = 1e-4
    ) -> Variable:
        x = basic.as_tensor_variable(x)
        std = basic.TABLE_FUNCTIONS["sqrt"](basic.add(var, epsilon))
        return basic.add(basic.true_div(basic.mul(basic.sub(x, mean), scale), std), bias)


class AbstractBatchNormTrainGrad(Op):
    """Theano's op: the gradients `(g_inputs, g_scale, g_bias)` of the training-mode
    output, from `x`, `dy`, `scale`, the saved `x_mean` and `x_invstd` (all of `x`'s
    rank)."""

    def __init__(self, axes: Sequence[int] = (0,)) -> None:
        super().__init__()
        self.axes = tuple(axes)

    def __call__(  # type: ignore[override]
        self, x: Any, dy: Any, scale: Any, x_mean: Any, x_invstd: Any, epsilon: float = 1e-4
    ) -> list[Variable]:
        T = _T()
        x, dy = basic.as_tensor_variable(x), basic.as_tensor_variable(dy)
        x_diff = basic.sub(x, x_mean)
        mean_dy_x_diff = T.mean(basic.mul(dy, x_diff), axis=self.axes, keepdims=True)
        c = basic.sub(
            basic.mul(dy, x_invstd),
            basic.mul(
                x_diff,
                basic.mul(mean_dy_x_diff, basic.mul(x_invstd, basic.mul(x_invstd, x_invstd))),
            ),
        )
        g_inputs = basic.mul(scale, basic.sub(c, T.mean(c, axis=self.axes, keepdims=True)))
        g_scale = basic.sum(
            basic.mul(dy, basic.mul(x_invstd, x_diff)), axis=self.axes, keepdims=True
        )
        g_bias = basic.sum(dy, axis=self.axes, keepdims=True)
        return [g_inputs, g_scale, g_bias]


def batch_normalization_train(
    inputs: Any,
    gamma: Any,
    beta: Any,
    axes: Any = "per-activation",
    epsilon: float = 1e-4,
    running_average_factor: float = 0.1,
    running_mean: Any = None,
    running_var: Any = None,
) -> tuple[Variable, ...]:
    """Normalizes `inputs` with its mean and variance over `axes` ('per-activation':
    axis 0; 'spatial': 0 and 2..; or a tuple), then scales by `gamma` and shifts by
    `beta`. Returns `(out, mean, invstd)`, plus `(new_running_mean, new_running_var)`
    (the running averages with `running_average_factor`, the variance unbiased) when
    `running_mean` and `running_var` are given."""
    x = basic.as_tensor_variable(inputs)
    g, b = basic.as_tensor_variable(gamma), basic.as_tensor_variable(beta)
    p = _params(x, g, b, axes)
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be given or both be None")
    _check_epsilon(epsilon)
    op = AbstractBatchNormTrain(axes=p.axes)
    if running_mean is None:
        results = op(x, p.expand(g), p.expand(b), epsilon=epsilon)
    else:
        rm, rv = basic.as_tensor_variable(running_mean), basic.as_tensor_variable(running_var)
        p.check("running_mean", rm)
        p.check("running_var", rv)
        results = op(
            x,
            p.expand(g),
            p.expand(b),
            epsilon,
            running_average_factor,
            p.expand(rm),
            p.expand(rv),
        )
    return (results[0], *(p.shrink(r) for r in results[1:]))


def batch_normalization_test(
    inputs: Any,
    gamma: Any,
    beta: Any,
    mean: Any,
    var: Any,
    axes: Any = "per-activation",
    epsilon: float = 1e-4,
) -> Variable:
    """`(inputs - mean) * gamma / sqrt(var + epsilon) + beta` with the given statistics
    (of the non-normalized axes' rank, or of `inputs`' rank)."""
    x = basic.as_tensor_variable(inputs)
    g, b = basic.as_tensor_variable(gamma), basic.as_tensor_variable(beta)
    m, v = basic.as_tensor_variable(mean), basic.as_tensor_variable(var)
    p = _params(x, g, b, axes)
    if m.ndim != p.param_ndim or v.ndim != p.param_ndim:
        raise ValueError(
            "mean and var must be of the same dimensionality as gamma and beta; "
            f"got {m.ndim} and {v.ndim} instead of {p.param_ndim}"
        )
    _check_epsilon(epsilon)
    op = AbstractBatchNormInference(axes=p.axes)
    return op(x, p.expand(g), p.expand(b), p.expand(m), p.expand(v), epsilon=epsilon)
