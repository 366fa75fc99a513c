"""Theano's `nnet.bn` (issue 14): batch normalization in training and inference mode
against NumPy on both linkers, running averages, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.nnet import bn

BACKENDS = ["py", "cvm"]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def np_train(x, gamma, beta, axes, eps, rm, rv, factor):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    invstd = 1 / np.sqrt(var + eps)
    out = (x - mean) * invstd * gamma + beta
    m = x.size / mean.size
    new_rm = rm * (1 - factor) + mean * factor
    new_rv = rv * (1 - factor) + (m / (m - 1)) * var * factor
    return out, mean, invstd, new_rm, new_rv


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axes", ["per-activation", "spatial", (0, 2)])
def test_batch_normalization_train_and_test(axes, dtype: str, backend: str) -> None:
    rng = np.random.default_rng(0)
    xv = rng.normal(size=(4, 3, 5)).astype(dtype) * 3 + 1
    named = {"per-activation": (0,), "spatial": (0, 2)}
    np_axes = named.get(axes, axes) if isinstance(axes, str) else axes
    kept = [i for i in range(3) if i not in np_axes]
    pshape = tuple(xv.shape[i] for i in kept)
    full = tuple(1 if i in np_axes else xv.shape[i] for i in range(3))
    gamma, beta = (rng.normal(size=pshape).astype(dtype) for _ in range(2))
    rm, rv = rng.normal(size=pshape).astype(dtype), rng.uniform(1, 2, size=pshape).astype(dtype)
    ptype = T.TensorType(dtype, (False,) * len(pshape))
    x = T.TensorType(dtype, (False,) * 3)("x")
    g, b, m, v = (ptype(n) for n in "gbmv")
    out = bn.batch_normalization_train(x, g, b, axes, 1e-4, 0.25, running_mean=m, running_var=v)
    plain = bn.batch_normalization_train(x, g, b, axes)
    test_out = bn.batch_normalization_test(x, g, b, m, v, axes, epsilon=1e-3)
    f = arignote.function([x, g, b, m, v], [*out, *plain, test_out], mode=mode(backend))
    got = f(xv, gamma, beta, rm, rv)
    d = xv.astype(np.float64)
    want = np_train(
        d,
        gamma.reshape(full),
        beta.reshape(full),
        np_axes,
        1e-4,
        rm.reshape(full),
        rv.reshape(full),
        0.25,
    )
    want = [want[0], *(w.reshape(pshape) for w in want[1:])]
    plain_want = want[:3]
    test_want = (d - rm.reshape(full)) * gamma.reshape(full) / np.sqrt(
        rv.reshape(full) + 1e-3
    ) + beta.reshape(full)
    rtol = 2e-5 if dtype == "float32" else 1e-12
    for k, (a, e) in enumerate(zip(got, [*want, *plain_want, test_want], strict=True)):
        assert a.shape == e.shape, k
        np.testing.assert_allclose(a, e, rtol=rtol, atol=rtol, err_msg=f"output {k}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_normalization_function(backend: str) -> None:
    x, g, b, m, s = T.dmatrix("x"), T.dvector("g"), T.dvector("b"), T.dvector("m"), T.dvector("s")
    outs = [bn.batch_normalization(x, g, b, m, s, mode=md) for md in ("low_mem", "high_mem")]
    f = arignote.function([x, g, b, m, s], outs, mode=mode(backend))
    rng = np.random.default_rng(1)
    args = [rng.normal(size=(3, 4)), *(rng.normal(size=4) for _ in range(3))]
    args.append(rng.uniform(1, 2, size=4))
    want = (args[0] - args[3]) * (args[1] / args[4]) + args[2]
    for got in f(*args):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradients() -> None:
    rng = np.random.default_rng(2)
    xv = rng.normal(size=(5, 3))
    gamma, beta = rng.normal(size=3), rng.normal(size=3)
    for backend in BACKENDS:
        verify_grad(
            lambda x, g, b: bn.batch_normalization_train(x, g, b, "per-activation")[0],
            [xv, gamma, beta],
            rng=rng,
            mode=mode(backend),
        )
    verify_grad(
        lambda x, g, b: bn.batch_normalization_test(x, g, b, beta * 0.1, gamma**2 + 1),
        [xv, gamma, beta],
        rng=rng,
    )


def test_abstract_batch_norm_train_grad_matches_grad() -> None:
    """`AbstractBatchNormTrainGrad` gives the gradients `grad` computes through the
    training-mode graph."""
    rng = np.random.default_rng(3)
    x, dy = T.dmatrix("x"), T.dmatrix("dy")
    g = T.TensorType("float64", (True, False))("g")
    b = T.TensorType("float64", (True, False))("b")
    out, mean, invstd = bn.AbstractBatchNormTrain(axes=(0,))(x, g, b, epsilon=1e-4)
    grads = T.grad((out * dy).sum(), [x, g, b])
    explicit = bn.AbstractBatchNormTrainGrad(axes=(0,))(x, dy, g, mean, invstd, 1e-4)
    f = arignote.function([x, dy, g, b], [*grads, *explicit])
    vals = f(
        rng.normal(size=(6, 3)),
        rng.normal(size=(6, 3)),
        rng.normal(size=(1, 3)),
        rng.normal(size=(1, 3)),
    )
    for a, e in zip(vals[3:], vals[:3], strict=True):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-12)


def test_errors() -> None:
    x, v = T.dmatrix("x"), T.dvector("v")
    with pytest.raises(ValueError, match='mode must be either "low_mem", "high_mem"'):
        bn.batch_normalization(x, v, v, v, v, mode="fast")
    with pytest.raises(ValueError, match="invalid axes"):
        bn.batch_normalization_train(x, v, v, axes="all")
    with pytest.raises(ValueError, match="at least one normalization axis"):
        bn.batch_normalization_train(x, v, v, axes=())
    with pytest.raises(ValueError, match="axes should be less than ndim"):
        bn.batch_normalization_train(x, v, v, axes=(2,))
    with pytest.raises(ValueError, match="gamma and beta dimensionality must match"):
        bn.batch_normalization_train(x, T.dtensor3(), v)
    with pytest.raises(ValueError, match="running_mean and running_var must either both"):
        bn.batch_normalization_train(x, v, v, running_mean=v)
    with pytest.raises(ValueError, match="epsilon must be at least 1e-5"):
        bn.batch_normalization_train(x, v, v, epsilon=1e-6)
    with pytest.raises(ValueError, match="mean and var must be of the same dimensionality"):
        bn.batch_normalization_test(x, v, v, x, v)
