"""Theano's named forms of the operators (`T.sub`, `T.le`, `T.true_div`, ...) on both
backends, against NumPy: programs call them by name as often as through `-` or `<=`."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T

BACKENDS = ["py", "cvm"]

BINARY = {
    "sub": np.subtract,
    "true_div": np.true_divide,
    "int_div": np.floor_divide,
    "mod": np.mod,
    "pow": np.power,
    "le": np.less_equal,
    "ge": np.greater_equal,
    "neq": np.not_equal,
    "eq": np.equal,
    "lt": np.less,
    "gt": np.greater,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_named_binary_functions_as_numpy(backend: str) -> None:
    x, y = T.dvectors("x", "y")
    names = sorted(BINARY)
    outputs = [getattr(T, n)(x, y) for n in names]
    f = arignote.function([x, y], outputs, mode=arignote.Mode(linker=backend))
    a = np.array([-3.5, -1.0, 0.5, 2.0, 7.25, 3.0])
    b = np.array([2.0, -4.0, 0.25, 2.0, -1.5, 3.0])
    for name, got in zip(names, f(a, b), strict=True):
        expected = BINARY[name](a, b)
        np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(float).eps, err_msg=name)
        assert got.dtype == BINARY[name](a, b).dtype, name


@pytest.mark.parametrize("backend", BACKENDS)
def test_named_unary_functions_as_numpy(backend: str) -> None:
    x = T.dvector("x")
    outputs = [
        T.abs_(x),
        T.neg(x),
        T.round_half_to_even(x),
        T.round_half_away_from_zero(x),
        T.second(x, 7.0),
    ]
    f = arignote.function([x], outputs, mode=arignote.Mode(linker=backend))
    a = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -0.0])
    got = f(a)
    expected = [
        np.abs(a),
        -a,
        np.round(a),  # NumPy rounds half to even
        np.sign(a) * np.floor(np.abs(a) + 0.5),
        np.full_like(a, 7.0),
    ]
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_and_mul_take_any_number_of_terms(backend: str) -> None:
    x, y, z = T.dmatrices("x", "y", "z")
    f = arignote.function(
        [x, y, z],
        [T.add(x, y, z), T.mul(x, y, z), T.add(x), T.transpose(x)],
        mode=arignote.Mode(linker=backend),
    )
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal((3, 4)) for _ in range(3))
    total, product, alone, transposed = f(a, b, c)
    np.testing.assert_allclose(total, a + b + c, rtol=1e-15)
    np.testing.assert_allclose(product, a * b * c, rtol=1e-15)
    np.testing.assert_array_equal(alone, a)
    np.testing.assert_array_equal(transposed, a.T)


def test_python_numbers_in_add_and_mul_keep_theanos_autocast() -> None:
    w = T.fvector("w")
    assert (0.1 * w).dtype == "float32" and T.mul(0.1, w, 2).dtype == "float32"
    assert (w + 1).dtype == "float32" and T.add(1, w).dtype == "float32"
