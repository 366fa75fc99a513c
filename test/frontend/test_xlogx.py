"""`arignote.tensor.xlogx` (Theano's `theano.tensor.xlogx`: `xlogx`, `xlogy0`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_values_gradients_and_zero(linker: str) -> None:
    mode = arignote.Mode(linker=linker)
    x, y = T.dvector("x"), T.dvector("y")
    cost = T.xlogx.xlogx(x).sum() + T.xlogx.xlogy0(x, y).sum()
    f = arignote.function(
        [x, y], [T.xlogx.xlogx(x), T.xlogx.xlogy0(x, y), *arignote.grad(cost, [x, y])], mode=mode
    )
    a, b = np.array([0.0, 0.5, 2.0, 0.0]), np.array([0.0, 3.0, 0.5, np.inf])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no log(0) is computed
        xlx, xly, gx, gy = f(a, b)
    np.testing.assert_allclose(xlx, [0.0, 0.5 * np.log(0.5), 2.0 * np.log(2.0), 0.0], rtol=1e-15)
    np.testing.assert_allclose(xly, [0.0, 0.5 * np.log(3.0), 2.0 * np.log(0.5), 0.0], rtol=1e-15)
    np.testing.assert_allclose(gx[1:3], 1 + np.log(a[1:3]) + np.log(b[1:3]), rtol=1e-14)
    np.testing.assert_allclose(gy[1:3], a[1:3] / b[1:3], rtol=1e-15)
    rng = np.random.default_rng(3)
    point = rng.uniform(0.5, 2.0, 5)
    verify_grad(T.xlogx.xlogx, [point], mode=mode, n_tests=1)
    verify_grad(T.xlogx.xlogy0, [point, rng.uniform(0.5, 2.0, 5)], mode=mode, n_tests=1)


def test_dtypes_and_module() -> None:
    from arignote.tensor.xlogx import xlogx, xlogy0

    assert T.xlogx.xlogx is xlogx and T.xlogx.xlogy0 is xlogy0
    assert xlogx(T.fvector()).dtype == "float32"
    assert xlogx(T.ivector()).dtype == "float64"
    assert xlogy0(T.fmatrix(), T.frow()).broadcastable == (False, False)
