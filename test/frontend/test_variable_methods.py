"""The methods of Theano's tensor variables (`_tensor_py_operators`) that call a function
of `arignote.tensor`, on both backends, against NumPy."""

from __future__ import annotations

import math

import numpy as np
import pytest

import arignote
import arignote.tensor as T

BACKENDS = ["py", "cvm"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_reshaping_reducing_and_filling_methods(backend: str) -> None:
    x = T.dmatrix("x")
    copied = x.copy("c")
    assert copied.name == "c" and copied is not x
    outputs = [
        x.ravel(),
        x.norm(2),
        x.norm(1, axis=0),
        x.norm(np.inf, axis=1, keepdims=True),
        x.var(axis=0),
        x.std(ddof=1),
        copied,
        x.zeros_like(),
        x.ones_like(dtype="int32"),
        x.fill(3.0),
    ]
    f = arignote.function([x], outputs, mode=arignote.Mode(linker=backend))
    a = np.array([[1.0, -2.0, 3.0], [-4.0, 5.0, 0.5]])
    expected = [
        a.ravel(),
        np.linalg.norm(a),
        np.abs(a).sum(axis=0),
        np.abs(a).max(axis=1, keepdims=True),
        a.var(axis=0),
        a.std(ddof=1),
        a,
        np.zeros_like(a),
        np.ones_like(a, dtype="int32"),
        np.full_like(a, 3.0),
    ]
    for got, want in zip(f(a), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)
        assert got.dtype == want.dtype
    with pytest.raises(NotImplementedError, match="L=0"):
        x.norm(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_elementwise_methods_and_rounding_dunders(backend: str) -> None:
    x = T.dvector("x")
    names = [
        "exp",
        "log",
        "sqrt",
        "sin",
        "cos",
        "tan",
        "tanh",
        "arctan",
        "sinh",
        "cosh",
        "arcsinh",
        "floor",
        "ceil",
        "trunc",
    ]
    outputs = [getattr(x, name)() for name in names]
    outputs += [math.floor(x), math.ceil(x), math.trunc(x)]
    f = arignote.function([x], outputs, mode=arignote.Mode(linker=backend))
    a = np.array([0.25, 1.5, 2.75, 0.5])
    expected = [getattr(np, name)(a) for name in names] + [np.floor(a), np.ceil(a), np.trunc(a)]
    for got, want in zip(f(a), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)
