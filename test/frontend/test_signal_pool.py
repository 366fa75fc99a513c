"""Theano's `theano.tensor.signal.pool` (`arignote.tensor.signal.pool`) against a
NumPy reference written window by window (Theano's `Pool.perform`) on both linkers:
every mode, stride, padding and border option, odd sizes, ranks 2 to 5, float32 and
float64; gradients with `verify_grad` (and the second derivative of a max pool, the
gradients of the gradient ops and the R-operator); ties; and the errors.

One compiled function covers several configurations (a native compile costs a
fraction of a second).
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor.signal import pool
from arignote.tensor.signal.pool import (
    AveragePoolGrad,
    DownsampleFactorMaxGradGrad,
    MaxPoolGrad,
    MaxPoolRop,
    Pool,
    PoolGrad,
    max_pool_2d_same_size,
    pool_2d,
    pool_3d,
)

BACKENDS = ["py", "cvm"]
MODES = ["max", "sum", "average_inc_pad", "average_exc_pad"]
# (ws, stride, pad, ignore_border): overlapping and sparse strides, padding, partial
# windows at the border, a window larger than the image
OPTIONS = [
    ((2, 2), None, (0, 0), True),
    ((3, 2), (2, 1), (1, 1), True),
    ((2, 3), (1, 2), (0, 0), False),
    ((3, 3), (3, 3), (0, 0), False),
    ((2, 2), (3, 1), (1, 0), True),
    ((9, 2), (1, 1), (0, 0), False),
    ((2, 2), (3, 2), (1, 1), True),
]
# the gradients: overlapping windows (native code scatters) and disjoint ones, with
# padding and partial windows (native code gathers)
GRAD_OPTIONS = [OPTIONS[1], OPTIONS[2], OPTIONS[3], OPTIONS[6]]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def out_length(h: int, ws: int, st: int, pad: int, ignore_border: bool) -> int:
    """Theano's `Pool.out_shape` for one axis."""
    if ignore_border:
        return max(0, (h + 2 * pad - ws) // st + 1)
    if st >= ws:
        return (h - 1) // st + 1
    return max(0, (h - 1 - ws + st) // st) + 1


def regions(h: int, ws: int, st: int, pad: int, ib: bool, inc_pad: bool) -> list[slice]:
    """Window `o` in the padded image (Theano's `region_slices`)."""
    out = []
    for o in range(out_length(h, ws, st, pad, ib)):
        start, end = o * st, min(o * st + ws, h + 2 * pad)
        if not inc_pad:
            start, end = max(start, pad), min(end, h + pad)
        out.append(slice(start, end))
    return out


def reference_pool(x: np.ndarray, ws, st, pad, ib: bool, how: str) -> np.ndarray:
    nd = len(ws)
    st = ws if st is None else st
    image = x.shape[-nd:]
    padded = np.zeros(
        x.shape[:-nd] + tuple(h + 2 * p for h, p in zip(image, pad, strict=True)), x.dtype
    )
    padded[(...,) + tuple(slice(p, p + h) for p, h in zip(pad, image, strict=True))] = x
    inc = how == "average_inc_pad"
    axes = [regions(h, w, s, p, ib, inc) for h, w, s, p in zip(image, ws, st, pad, strict=True)]
    out = np.zeros(x.shape[:-nd] + tuple(len(a) for a in axes), x.dtype)
    reduce = {"max": np.max, "sum": np.sum}.get(how, np.mean)
    for k in np.ndindex(*x.shape[:-nd]):
        for r in np.ndindex(*out.shape[-nd:]):
            window = padded[k][tuple(axes[i][r[i]] for i in range(nd))]
            out[k + r] = reduce(window)
    return out


def reference_max_grad(x: np.ndarray, gz: np.ndarray, ws, st, pad, ib: bool) -> np.ndarray:
    """Every position of a window equal to its maximum gets the window's gradient."""
    nd = len(ws)
    st = ws if st is None else st
    image = x.shape[-nd:]
    maxout = reference_pool(x, ws, st, pad, ib, "max")
    gx = np.zeros(
        x.shape[:-nd] + tuple(h + 2 * p for h, p in zip(image, pad, strict=True)), x.dtype
    )
    padded = np.full(gx.shape, -np.inf)
    crop = (...,) + tuple(slice(p, p + h) for p, h in zip(pad, image, strict=True))
    padded[crop] = x
    axes = [regions(h, w, s, p, ib, False) for h, w, s, p in zip(image, ws, st, pad, strict=True)]
    for k in np.ndindex(*x.shape[:-nd]):
        for r in np.ndindex(*maxout.shape[-nd:]):
            window = tuple(axes[i][r[i]] for i in range(nd))
            hit = padded[k][window] == maxout[k + r]
            gx[k][window] += np.where(hit, gz[k + r], 0)
    return gx[crop]


def tolerance(dtype: str) -> float:
    return 2e-6 if dtype == "float32" else 1e-12


# --- values --------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pool_2d_modes_and_options(backend: str, dtype: str) -> None:
    x = T.tensor4("x", dtype=dtype)
    cases = list(itertools.product(OPTIONS, MODES))
    outs = [pool_2d(x, ws, ib, st, pad, how) for (ws, st, pad, ib), how in cases]
    value = np.random.RandomState(0).randn(2, 3, 7, 5).astype(dtype)
    results = arignote.function([x], outs, mode=mode(backend))(value)
    for ((ws, st, pad, ib), how), got in zip(cases, results, strict=True):
        expected = reference_pool(value, ws, st, pad, ib, how)
        assert got.dtype == dtype
        assert got.shape == expected.shape, (ws, st, pad, ib, how)
        tol = tolerance(dtype)
        np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=str((ws, how)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pool_ranks(backend: str) -> None:
    """`pool_2d` pools the last two axes of inputs of rank 2 to 5; `pool_3d` the last three."""
    rng = np.random.RandomState(1)
    m, t3, t5 = T.dmatrix("m"), T.dtensor3("t3"), T.TensorType("float64", (False,) * 5)("t5")
    values = [rng.randn(5, 7), rng.randn(2, 5, 4), rng.randn(2, 1, 2, 5, 6)]
    outs = [
        pool_2d(m, (2, 3), ignore_border=False, mode="average_exc_pad"),
        pool_2d(t3, (2, 2), ignore_border=True, stride=(1, 1), mode="max"),
        pool_2d(t5, (3, 2), ignore_border=True, pad=(1, 1), mode="sum"),
        pool_3d(t3, (2, 2, 3), ignore_border=False, mode="max"),
        pool_3d(
            t5,
            (2, 3, 2),
            ignore_border=True,
            stride=(1, 2, 2),
            pad=(1, 0, 1),
            mode="average_inc_pad",
        ),
    ]
    expected = [
        reference_pool(values[0], (2, 3), None, (0, 0), False, "average_exc_pad"),
        reference_pool(values[1], (2, 2), (1, 1), (0, 0), True, "max"),
        reference_pool(values[2], (3, 2), None, (1, 1), True, "sum"),
        reference_pool(values[1], (2, 2, 3), None, (0, 0, 0), False, "max"),
        reference_pool(values[2], (2, 3, 2), (1, 2, 2), (1, 0, 1), True, "average_inc_pad"),
    ]
    results = arignote.function([m, t3, t5], outs, mode=mode(backend))(*values)
    for got, want in zip(results, expected, strict=True):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_inputs(backend: str) -> None:
    """Max and sum keep an integer dtype; an average is computed in float and stored in
    the input's dtype (truncated, as Theano stores NumPy's mean)."""
    x = T.itensor3("x")
    value = np.random.RandomState(2).randint(-20, 20, size=(2, 5, 4)).astype(np.int32)
    outs = [pool_2d(x, (2, 2), True, mode=how) for how in MODES]
    results = arignote.function([x], outs, mode=mode(backend))(value)
    for how, got in zip(MODES, results, strict=True):
        expected = reference_pool(value.astype(np.float64), (2, 2), None, (0, 0), True, how)
        assert got.dtype == np.int32, how
        np.testing.assert_array_equal(got, np.trunc(expected).astype(np.int32), err_msg=how)


@pytest.mark.parametrize("backend", BACKENDS)
def test_empty_and_small_images(backend: str) -> None:
    """A window larger than the image gives no window with ignore_border, one partial
    window without; an empty batch gives an empty result."""
    x = T.dtensor4("x")
    outs = [pool_2d(x, (4, 4), True), pool_2d(x, (4, 4), False)]
    grads = [arignote.grad(T.sum(y), x) for y in outs]
    f = arignote.function([x], outs + grads, mode=mode(backend))
    value = np.random.RandomState(3).randn(2, 1, 3, 2)
    small, partial, no_grad, grad = f(value)
    assert small.shape == (2, 1, 0, 0)
    np.testing.assert_array_equal(partial[..., 0, 0], value.max(axis=(2, 3)))
    np.testing.assert_array_equal(no_grad, np.zeros_like(value))
    np.testing.assert_array_equal(grad, value == value.max(axis=(2, 3), keepdims=True))
    empty = f(np.zeros((0, 3, 5, 5)))
    assert [r.shape for r in empty] == [(0, 3, 1, 1), (0, 3, 2, 2), (0, 3, 5, 5), (0, 3, 5, 5)]


# --- gradients -----------------------------------------------------------------------


def _all_pools(x: Any) -> Any:
    """Every mode and gradient option pooled and flattened into one vector (one
    verify_grad)."""
    parts = [
        T.flatten(pool_2d(x, ws, ib, st, pad, how))
        for (ws, st, pad, ib), how in itertools.product(GRAD_OPTIONS, MODES)
    ]
    return T.concatenate(parts)


@pytest.mark.parametrize("backend", BACKENDS)
def test_verify_grad_all_modes(backend: str) -> None:
    # distinct values spaced well beyond verify_grad's step: no near-tie of a maximum
    rng = np.random.RandomState(4)
    value = rng.permutation(2 * 7 * 5).reshape(1, 2, 7, 5) * 0.1
    verify_grad(_all_pools, [value], rng=rng, mode=mode(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_matches_reference(backend: str) -> None:
    """The max pool's gradient (`MaxPoolGrad`) and the average's against the window by
    window references."""
    x, g = T.dtensor4("x"), T.dtensor4("g")
    rng = np.random.RandomState(5)
    value = rng.randn(2, 2, 7, 6)
    cases = [((3, 2), (2, 1), (1, 1), True), ((2, 3), (1, 2), (0, 0), False)]
    cases += [((2, 2), (3, 2), (1, 1), True), ((3, 3), None, (0, 0), False)]
    outs = []
    for ws, st, pad, ib in cases:
        y = pool_2d(x, ws, ib, st, pad, "max")
        outs.append(arignote.grad(T.sum(y * g[:, :, : y.shape[2], : y.shape[3]]), x))
    gvalue = rng.randn(2, 2, 9, 9)
    results = arignote.function([x, g], outs, mode=mode(backend))(value, gvalue)
    for (ws, st, pad, ib), got in zip(cases, results, strict=True):
        maxout = reference_pool(value, ws, st, pad, ib, "max")
        gz = gvalue[:, :, : maxout.shape[2], : maxout.shape[3]]
        expected = reference_max_grad(value, gz, ws, st, pad, ib)
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_pool_ties(backend: str) -> None:
    """On a tie every position equal to the window's maximum gets the window's gradient
    (Theano's `MaxPoolGrad`), `max_pool_2d_same_size` keeps every tied maximum, and
    `MaxPoolRop` reads the evaluation point at the first maximum."""
    x, e = T.dmatrix("x"), T.dmatrix("e")
    value = np.array([[1.0, 1.0, 0.0, 2.0], [0.0, 1.0, 2.0, 2.0], [3.0, 3.0, 5.0, 5.0]])
    y = pool_2d(x, (2, 2), ignore_border=False, stride=(1, 2))
    outs = [
        arignote.grad(T.sum(y), x),
        max_pool_2d_same_size(x, (2, 2)),
        MaxPoolRop(ignore_border=True)(x, e, (2, 2)),
    ]
    ev = np.arange(12.0).reshape(3, 4)
    grad, same, rop = arignote.function([x, e], outs, mode=mode(backend))(value, ev)
    # window (0, 0) has three tied maxima (1), window (0, 1) three (2): all get 1
    np.testing.assert_array_equal(grad, [[1, 1, 0, 1], [0, 1, 1, 1], [1, 1, 1, 1]])
    expected = reference_max_grad(value, np.ones((2, 2)), (2, 2), (1, 2), (0, 0), False)
    np.testing.assert_array_equal(grad, expected)
    np.testing.assert_array_equal(same, [[1, 1, 0, 2], [0, 1, 2, 2], [0, 0, 0, 0]])
    np.testing.assert_array_equal(rop, [[0, 3]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_grad(backend: str) -> None:
    """The gradient ops are differentiable as Theano's: `MaxPoolGrad` with respect to
    its output gradient is `DownsampleFactorMaxGradGrad`, which in turn has
    `MaxPoolGrad`; `AveragePoolGrad`'s is the pool. Checked numerically."""
    rng = np.random.RandomState(6)
    xv = rng.permutation(2 * 6 * 5).reshape(2, 6, 5) * 0.1
    ws, st, pad = (3, 2), (2, 1), (1, 1)
    x = T.constant(xv)
    maxout = Pool(True)(x, ws, st, pad)
    gz0 = rng.randn(2, 3, 6)

    def max_grad(gz: Any) -> Any:
        return MaxPoolGrad(True)(x, maxout, gz, ws, st, pad)

    def grad_grad(ggx: Any) -> Any:
        return DownsampleFactorMaxGradGrad(True)(x, maxout, ggx, ws, st, pad)

    def average_grad(gz: Any) -> Any:
        return AveragePoolGrad(True, "average_exc_pad")(x, gz, ws, st, pad)

    verify_grad(max_grad, [gz0], rng=rng, mode=mode(backend))
    verify_grad(grad_grad, [rng.randn(2, 6, 5)], rng=rng, mode=mode(backend))
    verify_grad(average_grad, [gz0], rng=rng, mode=mode(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_second_derivative_of_max_pool(backend: str) -> None:
    """`grad(grad(sum(pool(x)**2)))`: the gradient of a max pool's gradient goes through
    `MaxPoolGrad.grad` (`DownsampleFactorMaxGradGrad`), checked by verify_grad."""
    rng = np.random.RandomState(7)
    value = rng.permutation(1 * 2 * 5 * 6).reshape(1, 2, 5, 6) * 0.1

    def gradient(x: Any) -> Any:
        y = pool_2d(x, (2, 2), ignore_border=True, stride=(1, 2))
        return arignote.grad(T.sum(y**2), x)

    verify_grad(gradient, [value], rng=rng, mode=mode(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_r_op(backend: str) -> None:
    """Theano's `Pool.R_op`: for a max pool the tangent at each window's maximum; for
    the linear modes the pool of the tangent."""
    x, v = T.dtensor4("x"), T.dtensor4("v")
    rng = np.random.RandomState(8)
    xv = rng.permutation(2 * 7 * 6).reshape(1, 2, 7, 6) * 0.1
    vv = rng.randn(1, 2, 7, 6)
    outs = []
    for how in MODES:
        y = pool_2d(x, (3, 2), True, (2, 1), (1, 1), how)
        outs.append(arignote.gradient.Rop(y, x, v))
    results = arignote.function([x, v], outs, mode=mode(backend))(xv, vv)
    # finite differences of the (piecewise) linear map, exact up to rounding
    eps = 1e-6
    for how, got in zip(MODES, results, strict=True):
        plus = reference_pool(xv + eps * vv, (3, 2), (2, 1), (1, 1), True, how)
        base = reference_pool(xv, (3, 2), (2, 1), (1, 1), True, how)
        np.testing.assert_allclose(got, (plus - base) / eps, rtol=1e-5, atol=1e-5)


# --- the op classes, out_shape, arguments and errors ----------------------------------

# Theano's test_DownsampleFactorMaxStride: window, stride, ignore_border, input shape,
# output shape (rank 1 to 5, windows of 1 to 3 axes, larger than the stride or not)
THEANO_SHAPES = [
    ((1, 1), (5, 7), True, (4, 10, 16, 16), (4, 10, 4, 3)),
    ((1, 1), (5, 7), False, (4, 10, 16, 16), (4, 10, 4, 3)),
    ((3, 3), (1, 1), True, (4, 10, 16, 16), (4, 10, 14, 14)),
    ((3, 3), (5, 7), True, (4, 10, 16, 16), (4, 10, 3, 2)),
    ((3, 3), (1, 1), False, (4, 10, 16, 16), (4, 10, 14, 14)),
    ((3, 3), (3, 3), False, (4, 10, 16, 16), (4, 10, 6, 6)),
    ((3, 3), (5, 7), False, (4, 10, 16, 16), (4, 10, 4, 3)),
    ((5, 3), (3, 3), True, (4, 10, 16, 16), (4, 10, 4, 5)),
    ((5, 3), (3, 3), False, (4, 10, 16, 16), (4, 10, 5, 6)),
    ((16, 16), (5, 7), True, (4, 10, 16, 16), (4, 10, 1, 1)),
    ((16, 16), (1, 1), False, (4, 10, 16, 16), (4, 10, 1, 1)),
    ((3,), (5,), True, (16,), (3,)),
    ((5,), (3,), True, (2, 3, 16), (2, 3, 4)),
    ((5, 1, 3), (3, 3, 3), True, (2, 16, 16, 16), (2, 4, 6, 5)),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_theano_output_shapes(backend: str) -> None:
    """`Pool.out_shape` and the compiled pools give the shapes of Theano's table."""
    inputs, outs = [], []
    for k, (ws, st, ib, shape, expected) in enumerate(THEANO_SHAPES):
        assert Pool.out_shape(shape, ws, ib, st, ndim=len(ws)) == list(expected)
        x = T.TensorType("float64", (False,) * len(shape))(f"x{k}")
        inputs.append(x)
        outs.append(Pool(ib, "max", len(ws))(x, ws, st))
    rng = np.random.RandomState(10)
    values = [rng.rand(*case[3]) for case in THEANO_SHAPES]
    results = arignote.function(inputs, outs, mode=mode(backend))(*values)
    for (ws, st, ib, _, expected), value, got in zip(THEANO_SHAPES, values, results, strict=True):
        assert got.shape == expected
        np.testing.assert_array_equal(got, reference_pool(value, ws, st, (0,) * len(ws), ib, "max"))


def test_out_shape() -> None:
    assert Pool.out_shape((2, 3, 7, 5), (2, 2)) == [2, 3, 4, 3]
    assert Pool.out_shape((2, 3, 7, 5), (2, 2), ignore_border=True) == [2, 3, 3, 2]
    assert Pool.out_shape((7, 5), (3, 2), True, (2, 1), (1, 1)) == [4, 6]
    assert PoolGrad.out_shape((5, 5, 5), (2, 2, 2), ndim=3) == [3, 3, 3]
    x = T.dtensor4("x")
    shape = Pool.out_shape(x.shape, (3, 2), True, (2, 1), (1, 1))
    f = arignote.function([x], T.stack(shape))
    np.testing.assert_array_equal(f(np.zeros((2, 3, 7, 6))), [2, 3, 4, 7])
    with pytest.raises(TypeError, match="imgshape must have at least 2 dimensions"):
        Pool.out_shape((5,), (2, 2))


def test_op_classes() -> None:
    assert Pool(True, mode="max_deterministic") == Pool(True, "max")
    assert Pool(True) != Pool(False)
    assert hash(Pool(True, "sum", 3)) == hash(Pool(True, "sum", 3))
    assert str(Pool(True)) == "Pool{ignore_border=True, mode='max', ndim=2}"
    x = T.dtensor4("x")
    node = Pool(True).make_node(x, (2, 2))
    assert node.outputs[0].ndim == 4
    assert isinstance(pool.AveragePoolGrad(True, "sum"), PoolGrad)
    # the graph's views are named as Theano prints its nodes
    y = pool_2d(x, (2, 2), True, mode="sum")
    assert str(y.owner.op) == "Pool{ignore_border=True, mode='sum', ndim=2}"
    g = arignote.grad(T.sum(pool_2d(x, (2, 2), False)), x)
    assert str(g.owner.op) == "MaxPoolGrad{ignore_border=False, mode='max', ndim=2}"
    rop = MaxPoolRop(True)(x, x, (2, 2))
    assert str(rop.owner.op) == "MaxPoolRop{ignore_border=True, mode='max', ndim=2}"


def test_deprecated_arguments() -> None:
    x = T.dtensor4("x")
    value = np.random.RandomState(9).randn(1, 1, 6, 6)
    with pytest.warns(UserWarning, match="DEPRECATION: the 'ds' parameter"):
        a = pool_2d(x, ds=(2, 2), ignore_border=True)
    with pytest.warns(UserWarning, match="DEPRECATION: the 'st' parameter"):
        b = pool_2d(x, (3, 3), ignore_border=True, st=(1, 1))
    with pytest.warns(UserWarning, match="DEPRECATION: the 'padding' parameter"):
        c = pool_2d(x, (3, 3), ignore_border=True, padding=(1, 1))
    with pytest.warns(UserWarning, match="ignore_border default value changed to True"):
        d = pool_2d(x, (4, 4))
    got = arignote.function([x], [a, b, c, d])(value)
    assert [r.shape for r in got] == [(1, 1, 3, 3), (1, 1, 4, 4), (1, 1, 2, 2), (1, 1, 2, 2)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pool_2d(x, (2, 2), ignore_border=True)  # no warning


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: pool_2d(x), ValueError, "You must provide a tuple value for the window size"),
        (lambda x: pool_2d(x, (2, 2), ds=(2, 2)), ValueError, "both 'ws' and 'ds'"),
        (lambda x: pool_2d(x, (2, 2), True, (1, 1), st=(1, 1)), ValueError, "'st and 'stride'"),
        (
            lambda x: pool_2d(x, (2, 2), True, pad=(1, 1), padding=(1, 1)),
            ValueError,
            "'padding' and pad",
        ),
        (lambda x: pool_2d(x, (2,), True), ValueError, "ws must have 2 entries"),
        (lambda x: pool_2d(x, (2, 2, 2), True), ValueError, "ws must have 2 entries"),
        (
            lambda x: pool_2d(x, (2.0, 2.0), True),
            TypeError,
            "Pool downsample parameters must be ints",
        ),
        (lambda x: pool_2d(x, (2, 2), True, (1.5, 1)), TypeError, "Stride parameters must be ints"),
        (
            lambda x: pool_2d(x, (2, 2), True, pad=(0.5, 0)),
            TypeError,
            "Padding parameters must be ints",
        ),
        (
            lambda x: pool_2d(x, (2, 2), True, pad=(2, 0)),
            NotImplementedError,
            "padding must be smaller",
        ),
        (
            lambda x: pool_2d(x, (2, 2), False, pad=(1, 0)),
            NotImplementedError,
            "padding works only with ignore_border=True",
        ),
        (lambda x: pool_2d(x, (2, 2), True, (0, 1)), ValueError, "stride must be positive"),
        (lambda x: pool_2d(x, (0, 2), True), ValueError, "ws must be positive"),
        (
            lambda x: pool_2d(x, (2, 2), True, mode="min"),
            ValueError,
            "Pool mode parameter only support",
        ),
        (
            lambda x: pool_2d(x[0, 0, 0], (2, 2), True),
            NotImplementedError,
            "pool_2d requires a dimension >= 2",
        ),
        (
            lambda x: pool_3d(x[0, 0], (2, 2, 2), True),
            NotImplementedError,
            "pool_3d requires a dimension >= 3",
        ),
        (
            lambda x: pool_2d(x, x.shape[2:], True),
            NotImplementedError,
            "ws must be known when the graph is built",
        ),
        (
            lambda x: AveragePoolGrad(True, "max"),
            ValueError,
            "AveragePoolGrad mode parameter only support",
        ),
        (lambda x: MaxPoolGrad(True)(T.itensor4(), x, x, (2, 2)), TypeError, "float32 or float64"),
    ],
)
def test_errors(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call(T.dtensor4("x"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_op_shape_mismatch(backend: str) -> None:
    """A `MaxPoolGrad` whose output gradient does not have the pooled shape is a
    ValueError when it runs, on both linkers."""
    x, g = T.dmatrix("x"), T.dmatrix("g")
    out = MaxPoolGrad(True)(x, g, g, (2, 2))
    f = arignote.function([x, g], out, mode=mode(backend))
    assert f(np.ones((4, 4)), np.ones((2, 2))).shape == (4, 4)
    with pytest.raises(ValueError, match="shape"):
        f(np.ones((4, 4)), np.ones((3, 2)))
