"""Convolution (`arignote.tensor.nnet.conv2d`, `conv2d_transpose`, `conv3d`,
`nnet.abstract_conv`, the older `nnet.conv`, `nnet.conv3d2d` and `signal.conv` paths)
against a direct-loop NumPy reference on both linkers, gradients with `verify_grad`,
the shape helpers against Theano's formulas, and the errors.

The reference below loops over output positions and kernel taps (no im2col, no
einsum), independent of both the interpreter and the native kernels. Tolerances follow
the error bound of a sum of `terms` products of numbers in [-1, 1]: `terms * eps`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nnet
from arignote.tensor.nnet import abstract_conv as ac

BACKENDS = ["py", "cvm"]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def _flipped(w: np.ndarray) -> np.ndarray:
    return w[(slice(None), slice(None)) + (slice(None, None, -1),) * (w.ndim - 2)]


def ref_conv(
    x: np.ndarray,
    w: np.ndarray,
    pads: Any = 0,
    strides: Any = 1,
    dil: Any = 1,
    groups: int = 1,
    flip: bool = True,
) -> np.ndarray:
    """The convolution by direct loops; `pads` per axis an int or a (left, right) pair."""
    r = x.ndim - 2
    pads = [(p, p) if isinstance(p, int) else p for p in _axes(pads, r)]
    strides, dil = _axes(strides, r), _axes(dil, r)
    if flip:
        w = _flipped(w)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0), *pads])
    kernel = w.shape[2:]
    outs = [(xp.shape[2 + i] - dil[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(r)]
    f_count, per_group = w.shape[:2]
    fg = f_count // groups
    y = np.zeros((x.shape[0], f_count, *outs))
    for f in range(f_count):
        channels = slice(f // fg * per_group, (f // fg + 1) * per_group)
        for o in np.ndindex(*outs):
            for k in np.ndindex(*kernel):
                at = tuple(o[i] * strides[i] + k[i] * dil[i] for i in range(r))
                taps = xp[(slice(None), channels, *at)]
                y[(slice(None), f, *o)] += taps @ w[(f, slice(None), *k)].astype(np.float64)
    return y


def _axes(v: Any, r: int) -> list[Any]:
    return list(v) if isinstance(v, tuple | list) else [v] * r


def _close(got: np.ndarray, expected: np.ndarray, terms: int, name: str = "") -> None:
    eps = np.finfo(got.dtype).eps
    assert got.shape == expected.shape, (name, got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=0, atol=4 * terms * eps, err_msg=name)


RNG = np.random.default_rng(1234)
X = RNG.uniform(-1, 1, (2, 4, 7, 8))
W = RNG.uniform(-1, 1, (6, 4, 3, 2))
WG = RNG.uniform(-1, 1, (6, 2, 3, 2))  # 2 groups

# (name, conv2d keyword arguments, filters, reference keyword arguments)
CASES: list[tuple[str, dict[str, Any], np.ndarray, dict[str, Any]]] = [
    ("valid", {}, W, {}),
    ("full", {"border_mode": "full"}, W, {"pads": (2, 1)}),
    ("half", {"border_mode": "half"}, W, {"pads": (1, 1)}),
    ("full-hinted", {"border_mode": "full", "filter_shape": (6, 4, 3, 2)}, W, {"pads": (2, 1)}),
    ("int", {"border_mode": 1}, W, {"pads": 1}),
    ("pair", {"border_mode": (2, 1)}, W, {"pads": (2, 1)}),
    ("asymmetric", {"border_mode": ((1, 2), 0)}, W, {"pads": ((1, 2), 0)}),
    ("subsample", {"subsample": (2, 3)}, W, {"strides": (2, 3)}),
    (
        "full-strided",
        {"border_mode": "full", "subsample": (2, 2)},
        W,
        {"pads": (2, 1), "strides": 2},
    ),
    ("dilation", {"filter_dilation": (2, 3)}, W, {"dil": (2, 3)}),
    (
        "half-dilated",
        {"border_mode": "half", "filter_dilation": (2, 2)},
        W,
        {"pads": (2, 1), "dil": 2},
    ),
    ("groups", {"num_groups": 2, "border_mode": 1}, WG, {"groups": 2, "pads": 1}),
    ("no-flip", {"filter_flip": False, "subsample": (1, 2)}, W, {"flip": False, "strides": (1, 2)}),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_conv2d_values(backend: str, dtype: str) -> None:
    x, w, wg = (T.tensor4(n, dtype=dtype) for n in ("x", "w", "wg"))
    outputs = [nnet.conv2d(x, wg if f is WG else w, **kw) for _, kw, f, _ in CASES]
    fn = arignote.function([x, w, wg], outputs, mode=mode(backend))
    got = fn(X.astype(dtype), W.astype(dtype), WG.astype(dtype))
    for (name, _, f, ref_kw), value in zip(CASES, got, strict=True):
        assert value.dtype == dtype, name
        expected = ref_conv(X.astype(dtype), f.astype(dtype), **ref_kw)
        _close(value, expected, 4 * 6, name)


def test_conv2d_dtype_rules() -> None:
    x32, w64 = T.tensor4("x", dtype="float32"), T.tensor4("w", dtype="float64")
    assert nnet.conv2d(x32, w64).dtype == "float64"
    assert nnet.conv2d(x32, T.tensor4("w", dtype="float32")).dtype == "float32"


GRAD_CASES = [
    {},
    {"border_mode": "full", "subsample": (2, 1)},
    {"border_mode": ((1, 0), 1), "filter_dilation": (2, 1)},
    {"border_mode": "half", "subsample": (2, 2), "num_groups": 2},
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "kw", GRAD_CASES, ids=["valid", "full-strided", "asym-dilated", "half-groups"]
)
def test_conv2d_gradients(backend: str, kw: dict[str, Any]) -> None:
    rng = np.random.default_rng(7)
    groups = kw.get("num_groups", 1)
    x = rng.uniform(-1, 1, (2, 2, 5, 6))
    w = rng.uniform(-1, 1, (2, 2 // groups, 2, 3))
    verify_grad(
        lambda a, b: nnet.conv2d(a, b, **kw),
        [x, w],
        rng=np.random.RandomState(0),
        mode=mode(backend),
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_second_derivatives(backend: str) -> None:
    # d/dw of the input gradient (a conv_grad_inputs op) and d/dx of the filter gradient
    rng = np.random.default_rng(8)
    x0 = rng.uniform(-1, 1, (1, 2, 5, 5))
    w0 = rng.uniform(-1, 1, (3, 2, 2, 2))
    kw = {"border_mode": 1, "subsample": (2, 1)}

    def input_grad(x: Any, w: Any) -> Any:
        return T.grad((nnet.conv2d(x, w, **kw) ** 2).sum(), x)

    def weight_grad(x: Any, w: Any) -> Any:
        return T.grad((nnet.conv2d(x, w, **kw) ** 2).sum(), w)

    for fn in (input_grad, weight_grad):
        verify_grad(fn, [x0, w0], rng=np.random.RandomState(1), mode=mode(backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_transpose_and_explicit_gradients(backend: str) -> None:
    # conv2d_transpose and conv2d_grad_wrt_* equal the gradients of conv2d
    rng = np.random.default_rng(9)
    kw = {"border_mode": (1, 0), "subsample": (2, 2), "filter_dilation": (1, 2)}
    xv = rng.uniform(-1, 1, (2, 3, 7, 8))
    wv = rng.uniform(-1, 1, (4, 3, 3, 2))
    x, w, gy = T.tensor4("x"), T.tensor4("w"), T.tensor4("gy")
    cost = (nnet.conv2d(x, w, **kw) * gy).sum()
    gx, gw = T.grad(cost, [x, w])
    tr_kw = {
        "border_mode": kw["border_mode"],
        "input_dilation": kw["subsample"],
        "filter_dilation": kw["filter_dilation"],
    }
    transposed = nnet.conv2d_transpose(gy, w, (None, None, x.shape[2], x.shape[3]), **tr_kw)
    by_inputs = ac.conv2d_grad_wrt_inputs(gy, w, (2, 3, 7, 8), **kw)
    by_weights = ac.conv2d_grad_wrt_weights(x, gy, (4, 3, 3, 2), **kw)
    fn = arignote.function(
        [x, w, gy], [gx, gw, transposed, by_inputs, by_weights], mode=mode(backend)
    )
    gyv = rng.uniform(-1, 1, (2, 4, 4, 3))
    gxv, gwv, tv, iv, wv2 = fn(xv, wv, gyv)
    np.testing.assert_allclose(tv, gxv, atol=1e-12)
    np.testing.assert_allclose(iv, gxv, atol=1e-12)
    np.testing.assert_allclose(wv2, gwv, atol=1e-12)
    # the input gradient against the reference: d/dx sum(conv(x) * gy) by finite sums
    eye = np.zeros_like(xv)
    eye[1, 2, 3, 4] = 1
    expected = (ref_conv(eye, wv, pads=(1, 0), strides=2, dil=(1, 2)) * gyv).sum()
    np.testing.assert_allclose(gxv[1, 2, 3, 4], expected, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_conv3d_values(backend: str, dtype: str) -> None:
    rng = np.random.default_rng(10)
    xv = rng.uniform(-1, 1, (2, 2, 4, 5, 4)).astype(dtype)
    wv = rng.uniform(-1, 1, (3, 2, 2, 3, 2)).astype(dtype)
    x, w = T.tensor5("x", dtype=dtype), T.tensor5("w", dtype=dtype)
    outputs = [
        nnet.conv3d(x, w),
        nnet.conv3d(x, w, border_mode="full", subsample=(2, 1, 2)),
        nnet.conv3d(x, w, border_mode=(1, 0, 1), filter_dilation=(1, 2, 1)),
    ]
    got = arignote.function([x, w], outputs, mode=mode(backend))(xv, wv)
    _close(got[0], ref_conv(xv, wv), 24)
    _close(got[1], ref_conv(xv, wv, pads=(1, 2, 1), strides=(2, 1, 2)), 24)
    _close(got[2], ref_conv(xv, wv, pads=(1, 0, 1), dil=(1, 2, 1)), 24)


@pytest.mark.parametrize("backend", BACKENDS)
def test_conv3d_gradients(backend: str) -> None:
    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (1, 2, 3, 4, 3))
    w = rng.uniform(-1, 1, (2, 2, 2, 2, 2))
    verify_grad(
        lambda a, b: nnet.conv3d(a, b, border_mode="half", subsample=(1, 2, 1)),
        [x, w],
        rng=np.random.RandomState(0),
        mode=mode(backend),
    )


def test_shape_helpers() -> None:
    # Theano's formulas: out = (n + pl + pr - ((k - 1) * d + 1)) // s + 1
    assert ac.get_conv_shape_1axis(7, 3, "valid", 1) == 5
    assert ac.get_conv_shape_1axis(7, 3, "full", 2) == 5
    assert ac.get_conv_shape_1axis(7, 3, "half", 1, 2) == 7
    assert ac.get_conv_shape_1axis(7, 3, (1, 2), 1) == 8
    assert ac.get_conv_shape_1axis(None, 3, "valid", 1) is None
    assert ac.get_conv_output_shape((2, 4, 7, 8), (6, 4, 3, 2), "valid", (1, 1)) == (2, 6, 5, 7)
    assert ac.get_conv_output_shape((2, 4, 7, 8), (6, 4, 3, 2), (1, (0, 2)), (2, 1), (1, 2)) == (
        2,
        6,
        4,
        8,
    )
    assert ac.get_conv_gradweights_shape((2, 4, 7, 8), (2, 6, 5, 7), "valid", (1, 1)) == (
        6,
        4,
        3,
        2,
    )
    assert ac.get_conv_gradweights_shape((2, 4, 7, 8), (2, 6, 4, 4), "valid", (2, 2))[2:] == (
        None,
        None,
    )
    assert ac.get_conv_gradweights_shape_1axis(7, 9, "full", 1, 1) == 3
    assert ac.get_conv_gradinputs_shape(
        (6, 2, 3, 2), (2, 6, 5, 7), "valid", (1, 1), num_groups=2
    ) == (2, 4, 7, 8)
    assert ac.get_conv_gradinputs_shape_1axis(3, 9, "full", 1, 1) == 7
    assert ac.get_conv_gradinputs_shape_1axis(3, 9, "full", 2, 1) is None
    assert ac.check_conv_gradinputs_shape((2, 4, 7, 8), (6, 4, 3, 2), (2, 6, 5, 7), "valid", (1, 1))
    assert not ac.check_conv_gradinputs_shape(
        (2, 4, 7, 8), (6, 4, 3, 2), (2, 6, 5, 6), "valid", (1, 1)
    )
    assert ac.check_conv_gradinputs_shape(
        (2, 4, None, 8), (6, 4, 3, 2), (2, 6, 5, 7), "valid", (1, 1)
    )
    assert ac.border_mode_to_pad("half", 2, (3, 5)) == ((1, 1), (2, 2))
    assert ac.border_mode_to_pad((1, (2, 3)), 2, (3, 3)) == ((1, 1), (2, 3))
    assert ac.assert_conv_shape((2, 0, 3, 4)) == (2, 0, 3, 4)
    with pytest.raises(ValueError, match="invalid shape"):
        ac.assert_conv_shape((2, 3, 0, 4))
    with pytest.raises(ValueError, match="invalid border_mode"):
        ac.border_mode_to_pad("same", 2, (3, 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_shape_hint_mismatch(backend: str) -> None:
    x, w = T.tensor4("x"), T.tensor4("w")
    y = nnet.conv2d(x, w, input_shape=(2, 4, 7, 8), filter_shape=(None, 4, 3, 2))
    fn = arignote.function([x, w], y, mode=mode(backend))
    assert fn(X, W).shape == (2, 6, 5, 7)
    with pytest.raises(ValueError, match="shape"):
        fn(X[:, :, :, :7], W)
    with pytest.raises(ValueError, match="shape"):
        fn(X, W[:, :, :, :1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_run_time_shape_errors(backend: str) -> None:
    x, w = T.tensor4("x"), T.tensor4("w")
    fn = arignote.function([x, w], nnet.conv2d(x, w, num_groups=2), mode=mode(backend))
    with pytest.raises(ValueError, match="channels"):
        fn(X, W)  # 4 input channels, filters take 4 per group of 2
    with pytest.raises(ValueError, match="fit"):
        fn(X[:, :, :2], WG)  # 3 rows of kernel, 2 rows of input
    with pytest.raises(ValueError, match="empty spatial axis 1: 0"):
        fn(X, WG[:, :, :, :0])


def test_bad_arguments() -> None:
    x, w = T.tensor4("x"), T.tensor4("w")
    with pytest.raises(ValueError, match="border_mode"):
        nnet.conv2d(x, w, border_mode="same")
    with pytest.raises(ValueError, match="border_mode"):
        nnet.conv2d(x, w, border_mode=(1, -1))
    with pytest.raises(ValueError, match="subsample"):
        nnet.conv2d(x, w, subsample=(0, 1))
    with pytest.raises(ValueError, match="filter_dilation"):
        nnet.conv2d(x, w, filter_dilation=(1,))
    with pytest.raises(ValueError, match="num_groups"):
        nnet.conv2d(x, w, num_groups=0)
    with pytest.raises(TypeError, match="input must be a 4-D tensor"):
        nnet.conv2d(T.matrix(), w)
    with pytest.raises(NotImplementedError, match="unshared"):
        nnet.conv2d(x, w, unshared=True)
    with pytest.raises(ValueError, match="input_shape"):
        nnet.conv2d(x, w, input_shape=(2, 4, 7))
    with (
        pytest.warns(UserWarning, match="deprecated"),
        pytest.raises(ValueError, match="not be provided at the same time"),
    ):
        nnet.conv2d(x, w, input_shape=(2, 4, 7, 8), image_shape=(2, 4, 7, 8))
    with pytest.raises(ValueError, match="fit"):
        nnet.conv2d(T.tensor4(), T.constant(np.ones((1, 1, 3, 3))), input_shape=(1, 1, 2, 2))
    with pytest.warns(UserWarning, match="deprecated"):
        nnet.conv2d(x, w, image_shape=(2, 4, 7, 8))


@pytest.mark.parametrize("backend", BACKENDS)
def test_older_paths(backend: str) -> None:
    from arignote.tensor.nnet import conv, conv3d2d
    from arignote.tensor.signal import conv as signal_conv

    rng = np.random.default_rng(12)
    x, w = T.tensor4("x"), T.tensor4("w")
    s5, f5 = T.tensor5("s"), T.tensor5("f")
    m, k3 = T.matrix("m"), T.tensor3("k")
    op2 = ac.AbstractConv2d(border_mode="full", subsample=(1, 2))
    outputs = [
        conv.conv2d(x, w, image_shape=(2, 4, 7, 8), border_mode="full"),
        conv3d2d.conv3d(s5, f5),
        signal_conv.conv2d(m, k3),
        op2(x, w),
        ac.AbstractConv2d_gradInputs(subsample=(2, 1))(w[:4], x[:, :, :2, :4], (6, 5)),
    ]
    sv = rng.uniform(-1, 1, (2, 4, 3, 5, 5))  # (batch, time, channels, rows, columns)
    fv = rng.uniform(-1, 1, (2, 2, 3, 2, 3))
    mv, kv = rng.uniform(-1, 1, (6, 5)), rng.uniform(-1, 1, (3, 2, 2))
    fn = arignote.function(
        [x, w, s5, f5, m, k3], outputs, mode=mode(backend), on_unused_input="ignore"
    )
    old, c3, sig, abstract, gi = fn(X, W, sv, fv, mv, kv)
    _close(old, ref_conv(X, W, pads=(2, 1)), 24)
    as_ncdhw = ref_conv(sv.transpose(0, 2, 1, 3, 4), fv.transpose(0, 2, 1, 3, 4))
    _close(c3, as_ncdhw.transpose(0, 2, 1, 3, 4), 36)
    _close(sig, ref_conv(mv[None, None], kv[:, None])[0], 4)
    _close(abstract, ref_conv(X, W, pads=(2, 1), strides=(1, 2)), 24)
    assert gi.shape == (2, 4, 6, 5)


def _upsampled_two_by_two(two_by_two: np.ndarray, ratio: int) -> np.ndarray:
    """Theano's reference for bilinear upsampling of a 2x2 image (its test's
    `get_upsampled_twobytwo_mat`): interpolation weights 0..ratio, edges repeated."""
    kern = np.arange(ratio + 1)
    up = two_by_two[:, :, :, :1] * kern[::-1] + two_by_two[:, :, :, 1:] * kern
    up = up[:, :, :1, :] * kern[::-1][:, None] + up[:, :, 1:, :] * kern[:, None]
    for _ in range((ratio - 1) // 2):
        up = np.concatenate([up[:, :, :1, :], up, up[:, :, -1:, :]], axis=2)
        up = np.concatenate([up[:, :, :, :1], up, up[:, :, :, -1:]], axis=3)
    if ratio % 2 == 0:
        up = np.concatenate([up, up[:, :, -1:, :]], axis=2)
        up = np.concatenate([up, up[:, :, :, -1:]], axis=3)
    return up / float(ratio) ** 2


# Theano's test_fractional_bilinear_upsampling: channel 0 of the 3 (the others add 4, 8)
FRACTIONAL = np.array(
    [
        [1.0, 1.2, 1.8, 2.0],
        [1.28571429, 1.48571429, 2.08571429, 2.28571429],
        [2.42857143, 2.62857143, 3.22857143, 3.42857143],
        [3.0, 3.2, 3.8, 4.0],
    ]
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bilinear_upsampling(backend: str) -> None:
    two = np.array([[[[1, 2], [3, 4]]]], dtype="float64")
    x = T.tensor4("x")
    ratios = [2, 3, 4]
    outputs = [ac.bilinear_upsampling(x, r, use_1D_kernel=one) for r in ratios for one in (1, 0)]
    three = np.arange(1, 13, dtype="float64").reshape(1, 3, 2, 2)
    outputs.append(ac.bilinear_upsampling(x, frac_ratio=((7, 4), (5, 3)), use_1D_kernel=False))
    outputs += [ac.bilinear_kernel_1D(3, normalize=False), ac.bilinear_kernel_2D(2)]
    fn = arignote.function([x], outputs[:-3], mode=mode(backend))
    got = fn(two)
    for i, r in enumerate(ratios):
        np.testing.assert_allclose(got[2 * i], _upsampled_two_by_two(two, r), rtol=1e-12)
        np.testing.assert_allclose(got[2 * i + 1], _upsampled_two_by_two(two, r), rtol=1e-12)
    frac, k1, k2 = arignote.function([x], outputs[-3:], mode=mode(backend))(three)
    for c in range(3):
        np.testing.assert_allclose(frac[0, c], FRACTIONAL + 4 * c, rtol=1e-6)
    np.testing.assert_array_equal(k1, [1, 2, 3, 2, 1])
    np.testing.assert_allclose(k2, np.outer([1, 2, 1], [1, 2, 1]) / 4)
    with pytest.raises(ValueError, match="1D kernel"):
        ac.bilinear_upsampling(x, frac_ratio=(3, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_separable_causal_assert_shape(backend: str) -> None:
    rng = np.random.default_rng(13)
    x, dw, pw = T.tensor4("x"), T.tensor4("dw"), T.tensor4("pw")
    s, f = T.tensor3("s"), T.tensor3("f")
    outputs = [
        ac.separable_conv2d(x, dw, pw, num_channels=4, border_mode=1),
        ac.causal_conv1d(s, f, filter_shape=(3, 2, 3), filter_dilation=2),
        ac.assert_shape(x, (None, 4, 7, None), "x has the wrong shape"),
    ]
    fn = arignote.function([x, dw, pw, s, f], outputs, mode=mode(backend))
    dwv = rng.uniform(-1, 1, (8, 1, 3, 3))  # depth multiplier 2
    pwv = rng.uniform(-1, 1, (5, 8, 1, 1))
    sv, fv = rng.uniform(-1, 1, (2, 2, 9)), rng.uniform(-1, 1, (3, 2, 3))
    sep, causal, same = fn(X, dwv, pwv, sv, fv)
    depthwise = ref_conv(X, dwv, pads=1, groups=4)
    _close(sep, ref_conv(depthwise, pwv), 8 * 9 * 4)
    # output t sees inputs t - 4, t - 2, t (dilation 2), zeros before the start
    padded = np.pad(sv, [(0, 0), (0, 0), (4, 0)])
    expected = ref_conv(padded[:, :, None], fv[:, :, None], dil=(1, 2))[:, :, 0]
    _close(causal, expected, 6)
    assert causal.shape == (2, 3, 9)
    np.testing.assert_array_equal(same, X)
    checked = arignote.function([x], outputs[2] * 2, mode=mode(backend))
    with pytest.raises(ValueError, match="x has the wrong shape"):
        checked(X[:, :3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_corr_wrappers(backend: str) -> None:
    from arignote.tensor.nnet import corr, corr3d

    rng = np.random.default_rng(14)
    x, w, gy = T.tensor4("x"), T.tensor4("w"), T.tensor4("gy")
    v, u = T.tensor5("v"), T.tensor5("u")
    y = nnet.conv2d(x, w, filter_flip=False)
    gx, gw = T.grad((y * gy).sum(), [x, w])
    outputs = [
        corr.CorrMM(border_mode=(1, 0), subsample=(2, 1))(x, w),
        corr.CorrMM_gradWeights()(x, gy),
        corr.CorrMM_gradInputs()(w, gy),
        corr.CorrMM_gradWeights(subsample=(1, 1))(x, gy, shape=(3, 2)),
        gx,
        gw,
        corr3d.Corr3dMM(subsample=(1, 2, 1))(v, u),
    ]
    fn = arignote.function([x, w, gy, v, u], outputs, mode=mode(backend))
    vv, uv = rng.uniform(-1, 1, (1, 2, 4, 5, 4)), rng.uniform(-1, 1, (3, 2, 2, 2, 2))
    gyv = rng.uniform(-1, 1, (2, 6, 5, 7))
    fwd, by_weights, by_inputs, by_shape, gxv, gwv, c3 = fn(X, W, gyv, vv, uv)
    _close(fwd, ref_conv(X, W, pads=(1, 0), strides=(2, 1), flip=False), 24)
    np.testing.assert_allclose(by_weights, gwv, atol=1e-12)
    np.testing.assert_allclose(by_shape, gwv, atol=1e-12)
    np.testing.assert_allclose(by_inputs, gxv, atol=1e-12)
    _close(c3, ref_conv(vv, uv, strides=(1, 2, 1), flip=False), 16)
    with pytest.raises(ValueError, match="shape must be given"):
        corr.CorrMM_gradInputs(subsample=(2, 2))(w, gy)
