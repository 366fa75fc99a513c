"""Theano's `nnet.nnet` and `nnet.sigm` (issue 14): activations, softmax and the
cross-entropies against NumPy on both linkers, gradients, the stable softmax
cross-entropy rewrite, errors."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nnet
from arignote.tensor.nnet import blocksparse, sigm
from arignote.tensor.nnet import nnet as nnet_module

BACKENDS = ["py", "cvm"]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def np_softmax(a: np.ndarray) -> np.ndarray:
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def np_ultra_fast(x: np.ndarray) -> np.ndarray:
    """Theano's `UltraFastScalarSigmoid.st_impl`, elementwise."""
    out = []
    for v in x.ravel():
        h = 0.5 * v
        a = abs(h)
        z = (
            1.5 * a / (1 + a)
            if a < 1.7
            else (0.935409070603099 + 0.0458812946797165 * (a - 1.7) if a < 3 else 0.99505475368673)
        )
        out.append(0.5 * ((z if h >= 0 else -z) + 1.0))
    return np.array(out).reshape(x.shape)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activations(dtype: str, backend: str) -> None:
    x = T.TensorType(dtype, (False, False))("x")
    outs = [
        nnet.elu(x),
        nnet.elu(x, 0.5),
        nnet.selu(x),
        nnet.softsign(x),
        nnet.hard_sigmoid(x),
        nnet.ultra_fast_sigmoid(x),
        nnet.sigmoid(x),
        nnet.scalar_sigmoid(x),
        nnet.sigmoid_inplace(x),
        nnet.softplus(x),
    ]
    f = arignote.function([x], outs, mode=mode(backend))
    a = np.array([[-5.0, -2.0, -0.5, 0.0], [0.3, 2.0, 4.5, 8.0]], dtype=dtype)
    d = a.astype(np.float64)
    elu = np.where(d > 0, d, np.expm1(d))
    sig = 1 / (1 + np.exp(-d))
    expected = [
        elu,
        np.where(d > 0, d, 0.5 * np.expm1(d)),
        nnet_module.SELU_SCALE * np.where(d > 0, d, nnet_module.SELU_ALPHA * np.expm1(d)),
        d / (1 + np.abs(d)),
        np.clip(0.2 * d + 0.5, 0, 1),
        np_ultra_fast(d),
        sig,
        sig,
        sig,
        np.log1p(np.exp(d)),
    ]
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for got, want in zip(f(a), expected, strict=True):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_family(dtype: str, backend: str) -> None:
    x = T.TensorType(dtype, (False, False))("x")
    b = T.TensorType(dtype, (False,))("b")
    y = T.lvector("y")
    nll, sm, am = nnet.crossentropy_softmax_argmax_1hot_with_bias(x, b, y)
    xent, sm2, max_pr, argmax = nnet.crossentropy_softmax_max_and_argmax_1hot(x, y)
    dy = T.TensorType(dtype, (False,))("dy")
    outs = [
        nnet.softmax(x),
        nnet.softmax_op(x),
        nnet.softmax_graph(x),
        nnet.logsoftmax(x),
        nnet.logsoftmax_op(x),
        nnet.softmax_with_bias(x, b),
        nll,
        sm,
        am,
        xent,
        max_pr,
        argmax,
        nnet.softmax_grad(dy.dimshuffle(0, "x") * x, nnet.softmax(x)),
        nnet.crossentropy_softmax_1hot_with_bias_dx(dy, nnet.softmax(x), y),
        nnet.crossentropy_categorical_1hot(nnet.softmax(x), y),
        nnet.crossentropy_categorical_1hot_grad(dy, nnet.softmax(x), y),
        nnet.prepend_0_to_each_row(x),
        nnet.prepend_1_to_each_row(x),
        nnet.prepend_scalar_to_each_row(dy[0], x),
    ]
    f = arignote.function([x, b, y, dy], outs, mode=mode(backend))
    a = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], dtype=dtype)
    bias = np.array([0.1, -0.2, 0.3], dtype=dtype)
    labels = np.array([2, 0])
    g = np.array([0.5, -2.0], dtype=dtype)
    d = a.astype(np.float64)
    s, sb = np_softmax(d), np_softmax(d + bias)
    rows = np.arange(2)
    dx = g[:, None] * s
    dx[rows, labels] -= g
    cgrad = np.zeros_like(d)
    cgrad[rows, labels] = -g / s[rows, labels]
    gs = g[:, None] * d * s
    expected = [
        s,
        s,
        s,
        np.log(s),
        np.log(s),
        sb,
        -np.log(sb[rows, labels]),
        sb,
        (d + bias).argmax(axis=1),
        -np.log(s[rows, labels]),
        s.max(axis=1),
        s.argmax(axis=1),
        gs - gs.sum(axis=1, keepdims=True) * s,
        dx,
        -np.log(s[rows, labels]),
        cgrad,
        np.hstack([np.zeros((2, 1)), d]),
        np.hstack([np.ones((2, 1)), d]),
        np.hstack([np.full((2, 1), g[0]), d]),
    ]
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for k, (got, want) in enumerate(zip(f(a, bias, labels, g), expected, strict=True)):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=f"output {k}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_binary_crossentropies(backend: str) -> None:
    o, t = T.dvector("o"), T.dvector("t")
    f = arignote.function(
        [o, t],
        [nnet.binary_crossentropy(nnet.sigmoid(o), t), nnet.sigmoid_binary_crossentropy(o, t)],
        mode=mode(backend),
    )
    z = np.array([-3.0, -0.5, 0.25, 2.0, 40.0])
    tv = np.array([0.0, 1.0, 0.3, 1.0, 1.0])
    want = np.logaddexp(0, z) - z * tv  # the stable form of the formula
    bce, sbce = f(z, tv)
    np.testing.assert_allclose(bce, want, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(sbce, want, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_xent_stable_at_large_logits(dtype: str, backend: str) -> None:
    """-log(softmax(x)[arange, y]), categorical_crossentropy(softmax(x), y) with integer
    and one-hot y, and crossentropy_softmax_1hot: finite values and gradients for logits
    of +-1000, where the naive graph gives inf and nan."""
    x = T.TensorType(dtype, (False, False))("x")
    y = T.lvector("y")
    t = T.TensorType(dtype, (False, False))("t")
    sm = nnet.softmax(x)
    losses = [
        -T.log(sm[T.arange(y.shape[0]), y]).mean(),
        nnet.categorical_crossentropy(sm, y).mean(),
        nnet.categorical_crossentropy(sm, t).mean(),
        nnet.crossentropy_softmax_1hot(x, y)[0].mean(),
    ]
    outs = [v for loss in losses for v in (loss, T.grad(loss, x))]
    f = arignote.function([x, y, t], outs, mode=mode(backend))
    a = np.array([[1000.0, -1000.0, 0.0], [1.0, 2.0, 3.0], [-1000.0, 1000.0, 999.0]])
    labels = np.array([1, 2, 0])
    onehot = np.eye(3)[labels]
    logz = a.max(axis=1) + np.log(np.exp(a - a.max(axis=1, keepdims=True)).sum(axis=1))
    loss = np.mean(logz - a[np.arange(3), labels])
    grad = (np_softmax(a) - onehot) / 3
    got = f(a.astype(dtype), labels, onehot.astype(dtype))
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for k in range(0, len(got), 2):
        assert np.isfinite(got[k]) and np.all(np.isfinite(got[k + 1])), k
        np.testing.assert_allclose(got[k], loss, rtol=rtol)
        np.testing.assert_allclose(got[k + 1], grad, rtol=rtol, atol=rtol)


@pytest.mark.parametrize(
    "build",
    [
        lambda x, y: -T.log(nnet.softmax(x)[T.arange(y.shape[0]), y]),
        lambda x, y: nnet.categorical_crossentropy(nnet.softmax(x), y),
        lambda x, y: nnet.crossentropy_softmax_1hot(x, y)[0],
    ],
    ids=["neg-log-indexing", "categorical", "crossentropy_softmax_1hot"],
)
def test_softmax_xent_rewrite_in_optimized_graph(build) -> None:
    """The optimized graph of a softmax cross-entropy and its gradient is one fused op
    (Theano's CrossentropySoftmaxArgmax1HotWithBias and ...Dx, computed together): no
    softmax, log or division by a probability is left."""
    x, y = T.dmatrix("x"), T.lvector("y")
    loss = build(x, y).mean()
    f = arignote.function([x, y], [loss, T.grad(loss, x)])
    names = [str(node.op) for node in f.maker.fgraph.toposort()]
    assert names.count("CrossentropySoftmax1HotWithBiasAndDx") == 1, names
    assert not any(n.startswith(("Softmax", "LogSoftmax")) or "log" in n for n in names), names
    # without the pairing pass: the two fused ops of Theano's rewrite
    g = arignote.function(
        [x, y], [loss, T.grad(loss, x)], mode=arignote.Mode().excluding("softmax_xent_pair")
    )
    names = [str(node.op) for node in g.maker.fgraph.toposort()]
    assert "CrossentropySoftmaxArgmax1HotWithBias" in names, names
    assert "CrossentropySoftmax1HotWithBiasDx" in names, names


def test_onehot_crossentropy_uses_logsoftmax() -> None:
    x, t = T.dmatrix("x"), T.dmatrix("t")
    loss = nnet.categorical_crossentropy(nnet.softmax(x), t).mean()
    f = arignote.function([x, t], [loss, T.grad(loss, x)])
    names = [str(node.op) for node in f.maker.fgraph.toposort()]
    assert "LogSoftmax" in names and "SoftmaxGrad" not in names, names


@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_xent_labels(backend: str) -> None:
    """Negative labels count from the end (as the indexing they replace); a label out of
    range or a row count that differs is a clear error on both linkers."""
    x, y = T.fmatrix("x"), T.ivector("y")
    nll = nnet.crossentropy_softmax_1hot(x, y)[0]
    f = arignote.function([x, y], [nll, T.grad(nll.sum(), x)], mode=mode(backend))
    a = np.array([[0.5, 1.0, -2.0], [3.0, 0.0, 1.0]], dtype="float32")
    got, g = f(a, np.array([-1, 1], dtype="int32"))
    want_labels = np.array([2, 1])
    s = np_softmax(a.astype(np.float64))
    np.testing.assert_allclose(got, -np.log(s[[0, 1], want_labels]), rtol=1e-5)
    np.testing.assert_allclose(g, s - np.eye(3)[want_labels], rtol=1e-5, atol=1e-6)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        f(a, np.array([0, 3], dtype="int32"))
    with pytest.raises(ValueError, match="x has 2 rows but y has 1 labels"):
        f(a, np.array([0], dtype="int32"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_grad_of_intermediate_is_stable(backend: str) -> None:
    """With respect to an intermediate value the cost is differentiated as written; the
    stabilize pass then cancels the division by the softmax in the compiled gradient."""
    x, y = T.dmatrix("x"), T.lvector("y")
    z = x * 1.0
    loss = -T.log(nnet.softmax(z)[T.arange(y.shape[0]), y]).sum()
    f = arignote.function([x, y], [loss, T.grad(loss, z)], mode=mode(backend))
    a = np.array([[1000.0, -1000.0, 0.0]])
    value, g = f(a, np.array([1]))
    assert value == pytest.approx(2000.0)
    np.testing.assert_allclose(g, [[1.0, -1.0, 0.0]], atol=1e-12)


def test_gradients() -> None:
    rng = np.random.default_rng(0)
    m = rng.normal(size=(3, 4))
    labels = np.array([1, 3, 0])
    b = rng.normal(size=4)
    for backend in BACKENDS:
        md = mode(backend)
        verify_grad(lambda v: nnet.softmax(v) * T.arange(4), [m], rng=rng, mode=md)
        verify_grad(lambda v: nnet.logsoftmax(v), [m], rng=rng, mode=md)
        verify_grad(
            lambda v, c: nnet.crossentropy_softmax_1hot_with_bias(v, c, labels)[0],
            [m, b],
            rng=rng,
            mode=md,
        )
        verify_grad(
            lambda v, c: nnet.softmax_grad(v, nnet.softmax(c)), [m, m + 0.5], rng=rng, mode=md
        )
        # the fused gradient's own gradient, with respect to dnll and x
        verify_grad(
            lambda d, v: T.grad((nnet.crossentropy_softmax_1hot(v, labels)[0] * d).sum(), v),
            [rng.normal(size=3), m],
            rng=rng,
            mode=md,
        )
    verify_grad(nnet.elu, [m], rng=rng)
    verify_grad(nnet.selu, [m], rng=rng)
    verify_grad(nnet.softsign, [m], rng=rng)
    verify_grad(lambda v: nnet.sigmoid_binary_crossentropy(v, np.abs(m) / 4), [m], rng=rng)
    verify_grad(lambda v: nnet.categorical_crossentropy(nnet.softmax(v), labels), [m], rng=rng)


@pytest.mark.parametrize("backend", BACKENDS)
def test_confusion_matrix_and_h_softmax(backend: str) -> None:
    a, p = T.lvector("a"), T.lvector("p")
    f = arignote.function([a, p], nnet.confusion_matrix(a, p), mode=mode(backend))
    conf, order = f(np.array([2, 0, 2, 2, 0, 1]), np.array([0, 0, 2, 2, 0, 2]))
    np.testing.assert_array_equal(conf, [[2, 0, 0], [0, 0, 1], [1, 0, 2]])
    np.testing.assert_array_equal(order, [0, 1, 2])
    rng = np.random.default_rng(1)
    batch, dim, n_classes, per_class = 4, 5, 3, 3
    xs = rng.normal(size=(batch, dim))
    w1, b1 = rng.normal(size=(dim, n_classes)), rng.normal(size=n_classes)
    w2, b2 = rng.normal(size=(n_classes, dim, per_class)), rng.normal(size=(n_classes, per_class))
    x, target = T.dmatrix("x"), T.lvector("target")
    full = nnet.h_softmax(x, batch, 8, n_classes, per_class, w1, b1, w2, b2)
    picked = nnet.h_softmax(x, batch, 8, n_classes, per_class, w1, b1, w2, b2, target)
    g = arignote.function([x, target], [full, picked], mode=mode(backend))
    tg = np.array([0, 4, 7, 5])
    got_full, got_picked = g(xs, tg)
    cls = np_softmax(xs @ w1 + b1)
    inner = np_softmax(np.einsum("bd,cdo->bco", xs, w2) + b2)
    want = (cls[:, :, None] * inner).reshape(batch, -1)[:, :8]
    np.testing.assert_allclose(got_full, want, rtol=1e-12)
    np.testing.assert_allclose(got_picked, want[np.arange(batch), tg], rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_sparse_block(backend: str) -> None:
    rng = np.random.default_rng(2)
    w = rng.normal(size=(3, 4, 2, 5))
    h = rng.normal(size=(2, 2, 2))
    i_idx, o_idx = np.array([[0, 2], [1, 1]]), np.array([[3, 0, 1], [2, 2, 0]])
    b = rng.normal(size=(4, 5))
    xw, xh, xb = T.dtensor4("w"), T.dtensor3("h"), T.dmatrix("b")
    xi, xo = T.lmatrix("i"), T.lmatrix("o")
    o0 = T.dtensor4("o0")
    outs = [
        nnet.blocksparse.sparse_block_dot(xw, xh, xi, xb, xo),
        blocksparse.sparse_block_outer(o0, xh, xh, xi, xi, 0.5),
    ]
    f = arignote.function([xw, xh, xi, xb, xo, o0], outs, mode=mode(backend))
    base = rng.normal(size=(3, 3, 2, 2))
    dot, outer = f(w, h, i_idx, b, o_idx, base)
    want = b[o_idx].copy()
    for n in range(2):
        for j in range(3):
            for i in range(2):
                want[n, j] += h[n, i] @ w[i_idx[n, i], o_idx[n, j]]
    np.testing.assert_allclose(dot, want, rtol=1e-12)
    want_o = base.copy()
    for n in range(2):
        for i in range(2):
            for j in range(2):
                want_o[i_idx[n, i], i_idx[n, j]] += 0.5 * np.outer(h[n, i], h[n, j])
    np.testing.assert_allclose(outer, want_o, rtol=1e-12)


def test_errors() -> None:
    with pytest.raises(ValueError, match="tensor of floats"):
        nnet.softmax(T.lmatrix())
    with pytest.raises(ValueError, match="b must be 1-d tensor of floats"):
        nnet.softmax_with_bias(T.dmatrix(), T.dmatrix())
    with pytest.raises(ValueError, match="y_idx must be 1-d tensor of"):
        nnet.crossentropy_softmax_1hot(T.dmatrix(), T.dvector())
    with pytest.raises(TypeError, match="integer vector required"):
        nnet.crossentropy_categorical_1hot(T.dmatrix(), T.dvector())
    with pytest.raises(TypeError, match="rank mismatch"):
        nnet.categorical_crossentropy(T.dmatrix(), T.dtensor3())
    with pytest.raises(TypeError, match="Expected a matrix"):
        nnet.prepend_0_to_each_row(T.dvector())
    with pytest.raises(ValueError, match="actual must be 1-d"):
        nnet.confusion_matrix(T.dmatrix(), T.dvector())
    with pytest.raises(ValueError, match="dy must be"):
        nnet.softmax_grad(T.dtensor3(), T.dmatrix())


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_grad_shape_mismatch(backend: str) -> None:
    dy, sm = T.dmatrix("dy"), T.dmatrix("sm")
    f = arignote.function([dy, sm], nnet.softmax_grad(dy, sm), mode=mode(backend))
    with pytest.raises(ValueError, match="dy and sm must have the same shape"):
        f(np.ones((2, 3)), np.ones((2, 4)))


def test_module_paths() -> None:
    assert sigm.ultra_fast_sigmoid is nnet.ultra_fast_sigmoid
    assert nnet_module.softmax is nnet.softmax
    for name in ("sparse_block_dot", "sparse_block_gemv", "sparse_block_outer"):
        assert hasattr(blocksparse, name)


def test_softmax_simplifier() -> None:
    x = T.dmatrix("x")
    e = T.exp(x)
    total = e.sum(axis=1, keepdims=True)
    nums, dens = nnet.softmax_simplifier([e], [total])
    assert dens == [] and len(nums) == 1
    assert str(nums[0].owner.op) == "Softmax"
    other = T.dmatrix("y")
    assert nnet.softmax_simplifier([e], [other]) == ([e], [other])
