"""The less used public names of Theano's nnet and random-stream modules (issue 14), each
checked against NumPy: the 3-d gradient helpers and separable 3-d convolution, fractional
bilinear upsampling, the max-and-argmax cross-entropy, the scalar and in-place aliases,
the block-sparse in-place instances, and raw_random's helpers and base class."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.tensor import raw_random, shared_randomstreams
from arignote.tensor.nnet import abstract_conv, blocksparse, nnet, sigm

LINKERS = ["py", "cvm"]
RNG = np.random.default_rng(7)


def _mode(linker: str) -> arignote.Mode:
    return arignote.Mode(linker=linker)


def _conv3d_valid(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Correlation of (n, c, d, h, w) inputs with (k, c, kd, kh, kw) filters ('valid')."""
    kd, kh, kw = w.shape[2:]
    view = np.lib.stride_tricks.sliding_window_view(x, (kd, kh, kw), axis=(2, 3, 4))
    return np.einsum("ncdhwxyz,kcxyz->nkdhw", view, w)


@pytest.mark.parametrize("linker", LINKERS)
def test_conv3d_gradient_helpers_match_grad(linker: str) -> None:
    x = T.dtensor5("x")
    w = T.dtensor5("w")
    gy = T.dtensor5("gy")
    y = abstract_conv.conv3d(x, w, filter_flip=False)
    gx_grad, gw_grad = T.grad((y * gy).sum(), [x, w])
    gx = abstract_conv.conv3d_grad_wrt_inputs(gy, w, x.shape, filter_flip=False)
    gw = abstract_conv.conv3d_grad_wrt_weights(x, gy, w.shape, filter_flip=False)
    f = arignote.function([x, w, gy], [y, gx, gx_grad, gw, gw_grad], mode=_mode(linker))
    xv = RNG.standard_normal((2, 2, 4, 5, 4))
    wv = RNG.standard_normal((3, 2, 2, 3, 2))
    gyv = RNG.standard_normal((2, 3, 3, 3, 3))
    yv, gxv, gx_ref, gwv, gw_ref = f(xv, wv, gyv)
    np.testing.assert_allclose(yv, _conv3d_valid(xv, wv), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gxv, gx_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gwv, gw_ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_separable_conv3d_is_depthwise_then_pointwise(linker: str) -> None:
    x = T.dtensor5("x")
    dw = T.dtensor5("dw")
    pw = T.dtensor5("pw")
    out = abstract_conv.separable_conv3d(x, dw, pw, num_channels=2, filter_flip=False)
    f = arignote.function([x, dw, pw], out, mode=_mode(linker))
    xv = RNG.standard_normal((1, 2, 4, 4, 4))
    dwv = RNG.standard_normal((4, 1, 2, 2, 2))  # depth multiplier 2 per channel
    pwv = RNG.standard_normal((3, 4, 1, 1, 1))
    depthwise = np.concatenate(
        [_conv3d_valid(xv[:, c : c + 1], dwv[2 * c : 2 * c + 2]) for c in range(2)], axis=1
    )
    np.testing.assert_allclose(f(xv, dwv, pwv), _conv3d_valid(depthwise, pwv), rtol=1e-12)


def test_frac_bilinear_upsampling_shape_and_constants() -> None:
    x = T.dtensor4("x")
    f = arignote.function([x], abstract_conv.frac_bilinear_upsampling(x, frac_ratio=(3, 2)))
    out = f(np.full((1, 2, 4, 6), 2.5))
    assert out.shape[:2] == (1, 2) and out.shape[2] > 4 and out.shape[3] > 6
    np.testing.assert_allclose(out, 2.5, rtol=1e-12)  # interpolating a constant
    with pytest.raises(ValueError, match="frac_ratio must be a tuple"):
        abstract_conv.frac_bilinear_upsampling(x, frac_ratio=2)


@pytest.mark.parametrize("linker", LINKERS)
def test_crossentropy_softmax_max_and_argmax_with_bias(linker: str) -> None:
    x = T.dmatrix("x")
    b = T.dvector("b")
    y = T.lvector("y")
    outs = nnet.crossentropy_softmax_max_and_argmax_1hot_with_bias(x, b, y)
    f = arignote.function([x, b, y], list(outs), mode=_mode(linker))
    xv, bv = RNG.standard_normal((4, 5)), RNG.standard_normal(5)
    yv = np.array([0, 4, 2, 1])
    nll, sm, mx, am = f(xv, bv, yv)
    z = xv + bv
    ref = np.exp(z - z.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(sm, ref, rtol=1e-12)
    np.testing.assert_allclose(nll, -np.log(ref[np.arange(4), yv]), rtol=1e-12)
    np.testing.assert_allclose(mx, ref.max(1), rtol=1e-12)
    np.testing.assert_array_equal(am, ref.argmax(1))


def test_scalar_and_inplace_aliases_compute_their_functions() -> None:
    s = T.dscalar("s")
    v = T.dvector("v")
    f = arignote.function(
        [s, v],
        [
            sigm.scalar_softplus(s),
            nnet.scalar_softsign(s),
            sigm.ultra_fast_scalar_sigmoid(s),
            sigm.ultra_fast_sigmoid_inplace(v),
        ],
    )
    sv, vv = 0.75, np.array([-3.0, 0.0, 2.0])
    softplus, softsign, fast, fast_v = f(sv, vv)
    assert softplus == pytest.approx(np.log1p(np.exp(sv)), rel=1e-12)
    assert softsign == pytest.approx(sv / (1 + sv), rel=1e-12)
    assert abs(fast - 1 / (1 + np.exp(-sv))) < 0.028  # the approximation's largest error
    np.testing.assert_allclose(fast_v, 1 / (1 + np.exp(-vv)), atol=0.028)


def test_block_sparse_inplace_instances_equal_the_plain_ones() -> None:
    o = T.dtensor3("o")
    W = T.dtensor4("W")
    h = T.dtensor3("h")
    ii = T.lmatrix("ii")
    oi = T.lmatrix("oi")
    O4 = T.dtensor4("O4")
    f = arignote.function(
        [o, W, h, ii, oi, O4],
        [
            blocksparse.sparse_block_gemv(o, W, h, ii, oi),
            blocksparse.sparse_block_gemv_inplace(o, W, h, ii, oi),
            blocksparse.sparse_block_outer(O4, h, o, ii, oi),
            blocksparse.sparse_block_outer_inplace(O4, h, o, ii, oi),
        ],
    )
    ov, Wv, hv = RNG.standard_normal((2, 2, 3)), RNG.standard_normal((4, 3, 5, 3)), None
    hv = RNG.standard_normal((2, 3, 5))
    iiv = np.array([[0, 1, 3], [2, 1, 0]])
    oiv = np.array([[2, 0], [1, 2]])
    O4v = RNG.standard_normal((4, 3, 5, 3))
    gemv, gemv_in, outer, outer_in = f(ov, Wv, hv, iiv, oiv, O4v)
    ref = ov.copy()
    for bi in range(2):
        for j in range(2):
            for i in range(3):
                ref[bi, j] += hv[bi, i] @ Wv[iiv[bi, i], oiv[bi, j]]
    np.testing.assert_allclose(gemv, ref, rtol=1e-12)
    np.testing.assert_array_equal(gemv_in, gemv)
    np.testing.assert_array_equal(outer_in, outer)


def test_raw_random_helpers_draw_as_numpy() -> None:
    def fresh() -> np.random.RandomState:
        return np.random.RandomState(123)

    ints = raw_random.random_integers_helper(fresh(), np.array(0), np.array(5), (4,))
    expected = [fresh_rs.randint(0, 6) for fresh_rs in [fresh()] for _ in range(4)]
    np.testing.assert_array_equal(ints, expected)
    choice = raw_random.choice_helper(fresh(), np.array(5), np.array(True), np.zeros(0), (3,))
    np.testing.assert_array_equal(choice, fresh().choice(5, (3,), True, None))
    perms = raw_random.permutation_helper(fresh(), np.array(4), (2,))
    rs = fresh()
    np.testing.assert_array_equal(perms, [rs.permutation(4), rs.permutation(4)])
    counts = raw_random.multinomial_helper(fresh(), np.array(10), np.array([0.2, 0.8]), (2,))
    assert counts.shape == (2, 2) and (counts.sum(axis=1) == 10).all()


def test_streams_base_gen_and_randomstate_constructor() -> None:
    srng = shared_randomstreams.RandomStreams(seed=5)
    assert isinstance(srng, raw_random.RandomStreamsBase)
    u = srng.gen(raw_random.uniform, size=(3,))
    seed = np.random.RandomState(5).randint(2**30)
    f = arignote.function([], u)
    np.testing.assert_allclose(f(), np.random.RandomState(seed).uniform(size=(3,)), rtol=1e-15)
    state = shared_randomstreams.randomstate_constructor(np.random.RandomState(9))
    assert isinstance(state, shared_randomstreams.RandomStateSharedVariable)
    assert isinstance(state.type, raw_random.RandomStateType)
    assert state.get_value().uniform() == np.random.RandomState(9).uniform()
    with pytest.raises(TypeError, match="RandomState"):
        shared_randomstreams.randomstate_constructor(np.zeros(3))
