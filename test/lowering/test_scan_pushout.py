"""`scan-pushout` end to end: scans whose products and accumulators move out of the loop
compute what they computed in the loop (both linkers, against the pass excluded and
NumPy), and the rewrite keeps its conditions (taps, go_backwards, n_steps, no step)."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.parser import Parser

import arignote
import arignote.tensor as T
from arignote.dialects import ag
from arignote.gradient import verify_grad
from arignote.lowering.driver import make_context

LINKERS = ["py", "cvm"]


def _functions(inputs, outputs, linker, **kwargs):
    """The function with scan-pushout (opt-in: it runs after the fast_run passes) and
    without it (the default)."""
    mode = arignote.Mode(linker=linker).including("scan-pushout")
    on = arignote.function(inputs, outputs, mode=mode, **kwargs)
    off = arignote.function(inputs, outputs, mode=arignote.Mode(linker=linker), **kwargs)
    return on, off


def _scans(f) -> list[ag.ScanOp]:
    """The top-level `ag.scan`s of `f`'s optimized IR."""
    module = Parser(make_context(), f.dump_ir()).parse_module()
    (function,) = module.ops
    return [op for op in function.walk() if isinstance(op, ag.ScanOp)]


def _top_level(f, op_type) -> int:
    module = Parser(make_context(), f.dump_ir()).parse_module()
    (function,) = module.ops
    return sum(isinstance(op, op_type) for op in function.regions[0].block.ops)


def _rnn(x, h0, w, u, b):
    hs, _ = arignote.scan(
        lambda xt, h, W, U, B: T.tanh(T.dot(xt, W) + T.dot(h, U) + B),
        sequences=x,
        outputs_info=h0,
        non_sequences=[w, u, b],
    )
    return hs


def _rnn_numpy(x, h0, w, u, b):
    """h_T and the gradients of sum(h_T) w.r.t. W, U, b, by BPTT written out."""
    hs = [h0]
    for t in range(len(x)):
        hs.append(np.tanh(x[t] @ w + hs[-1] @ u + b))
    gw, gu, gb = np.zeros_like(w), np.zeros_like(u), np.zeros_like(b)
    gh = np.ones_like(h0)
    for t in reversed(range(len(x))):
        d = gh * (1 - hs[t + 1] ** 2)
        gw += x[t].T @ d
        gu += hs[t].T @ d
        gb += d.sum(axis=0)
        gh = d @ u.T
    return hs[-1], gw, gu, gb


def _rnn_point(rng, steps=5, batch=3, n_in=4, hidden=6):
    return [
        rng.standard_normal((steps, batch, n_in)),
        rng.standard_normal((batch, hidden)) * 0.5,
        rng.standard_normal((n_in, hidden)) * 0.5,
        rng.standard_normal((hidden, hidden)) * 0.5,
        rng.standard_normal(hidden) * 0.5,
    ]


@pytest.mark.parametrize("linker", LINKERS)
def test_rnn_forward_and_bptt(linker: str) -> None:
    """The RNN's x_t·W moves before the forward loop, the W, U and b accumulators of the
    reverse loop after it; the results are NumPy's BPTT."""
    X, H0, W, U, B = T.tensor3("x"), T.matrix("h0"), T.matrix("W"), T.matrix("U"), T.vector("b")
    hs = _rnn(X, H0, W, U, B)
    outputs = [hs[-1], *arignote.grad(hs[-1].sum(), [W, U, B])]
    on, off = _functions([X, H0, W, U, B], outputs, linker)
    point = _rnn_point(np.random.default_rng(0))
    expected = _rnn_numpy(*point)
    for got, without, want in zip(on(*point), off(*point), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(got, without, rtol=1e-10, atol=1e-12)
    forward, reverse = _scans(on)
    assert len(forward.sequences) == 1 and len(forward.non_sequences) == 2  # x·W outside
    assert len(reverse.initials) == 1  # only the carried gradient stays fed back
    assert len(_scans(off)[1].initials) == 4


def test_rnn_gradient_matches_finite_differences() -> None:
    verify_grad(
        lambda *v: _rnn(*v)[-1].sum(),
        _rnn_point(np.random.default_rng(1), steps=4, batch=2, n_in=3, hidden=3),
        mode=arignote.Mode(linker="cvm").including("scan-pushout"),
        n_tests=1,
    )


@pytest.mark.parametrize("linker", LINKERS)
def test_sequence_taps_and_go_backwards(linker: str) -> None:
    """Products of the rows of taps -1 and 0, walked backwards, and their gradient."""
    X, H0, W, V = T.tensor3("x"), T.matrix("h0"), T.matrix("W"), T.matrix("V")

    def step(x_prev, x_now, h, W, V):
        return T.tanh(T.dot(x_prev, W) + T.dot(x_now, V) + h)

    hs, _ = arignote.scan(
        step,
        sequences=dict(input=X, taps=[-1, 0]),
        outputs_info=H0,
        non_sequences=[W, V],
        go_backwards=True,
    )
    outputs = [hs, *arignote.grad(hs[-1].sum(), [W, V, X])]
    on, off = _functions([X, H0, W, V], outputs, linker)
    rng = np.random.default_rng(2)
    point = [
        rng.standard_normal((6, 2, 3)),
        rng.standard_normal((2, 4)),
        *(rng.standard_normal((3, 4)) * 0.5 for _ in range(2)),
    ]
    for got, want in zip(on(*point), off(*point), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    # Theano's go_backwards: step s reads x[n - 2 - s] (tap -1) and x[n - 1 - s] (tap 0)
    x = point[0]
    h = point[1]
    for s in range(len(x) - 1):
        h = np.tanh(x[len(x) - 2 - s] @ point[2] + x[len(x) - 1 - s] @ point[3] + h)
    np.testing.assert_allclose(on(*point)[0][-1], h, rtol=1e-10)
    forward = _scans(on)[0]
    # x_t·V read at tap 0, x_{t-1}·W at tap 1 of the reversed rows (go_backwards reads
    # each tap's window reversed, as Theano; its span of 1 keeps the number of steps,
    # so x itself, unread, is pruned)
    assert forward.sequence_tap_lists == [(0,), (0, 1)]


@pytest.mark.parametrize("linker", LINKERS)
def test_n_steps_shorter_than_the_sequences(linker: str) -> None:
    """With n_steps, the accumulators pair the rows the steps read (a window of the
    sequence) with the stacked values; n = 0 leaves no row, as without the pass."""
    A, D, acc0, n = T.tensor3("a"), T.tensor3("d"), T.matrix("acc0"), T.lscalar("n")
    acc, _ = arignote.scan(
        lambda a, d0, d1, acc: acc + T.dot(a.T, T.tanh(d1)),  # d0 unread: a tap span of 1
        sequences=[A, dict(input=D, taps=[0, 1])],
        outputs_info=acc0,
        n_steps=n,
    )
    on, off = _functions([A, D, acc0, n], [acc[-1:].sum(axis=0), acc[-1:]], linker)
    assert len(_scans(on)[0].initials) == 0 and len(_scans(off)[0].initials) == 1
    rng = np.random.default_rng(3)
    a, d = rng.standard_normal((7, 3, 4)), rng.standard_normal((8, 3, 5))
    a0 = rng.standard_normal((4, 5))
    for steps in (0, 1, 4):
        got, want = on(a, d, a0, steps), off(a, d, a0, steps)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        reference = a0 + sum((a[t].T @ np.tanh(d[t + 1]) for t in range(steps)), 0 * a0)
        np.testing.assert_allclose(got[0], reference if steps else 0 * a0, rtol=1e-10)
    with pytest.raises(ValueError):
        on(a, d, a0, 8)  # a has 7 rows: the scan refuses, as it does without the pass


@pytest.mark.parametrize("linker", LINKERS)
def test_what_must_stay(linker: str) -> None:
    """A product of the carried state stays; an accumulator whose every step is read
    stays; integer products (no BLAS) stay."""
    X, H0, W = T.tensor3("x"), T.matrix("h0"), T.matrix("W")
    hs, _ = arignote.scan(
        lambda xt, h, W: h + T.dot(xt.T, T.dot(h, W)),
        sequences=X,
        outputs_info=H0,
        non_sequences=W,
    )
    on, off = _functions([X, H0, W], hs, linker)
    (scan,) = _scans(on)
    assert len(scan.initials) == 1 and _top_level(on, ag.ReshapeOp) == 0
    rng = np.random.default_rng(4)
    point = [
        rng.standard_normal((4, 3, 3)),
        rng.standard_normal((3, 3)),
        rng.standard_normal((3, 3)),
    ]
    np.testing.assert_allclose(on(*point), off(*point), rtol=1e-12)
    IX, IW = T.itensor3("ix"), T.imatrix("iw")
    ys, _ = arignote.scan(lambda xt, w: T.dot(xt, w), sequences=IX, non_sequences=IW)
    f = arignote.function([IX, IW], ys, mode=arignote.Mode(linker=linker).including("scan-pushout"))
    assert _top_level(f, ag.ReshapeOp) == 0
    ix, iw = np.arange(24).reshape(2, 3, 4).astype("int32"), np.ones((4, 2), "int32")
    np.testing.assert_array_equal(f(ix, iw), ix @ iw)


def test_reshapes_of_views_and_intermediates() -> None:
    """The reshapes the pass emits, natively: of a reversed view (the last axis kept:
    one division per row; or not), of a dead intermediate (its buffer taken over), of
    a strided argument."""
    X = T.tensor3("x")
    rev = X[::-1]
    outputs = [
        rev.reshape((-1, X.shape[2])),
        rev.reshape((X.shape[0], -1)),
        T.exp(X).reshape((-1, X.shape[2])) * 2,
        X[:, ::2].reshape((-1,)),
    ]
    f = arignote.function([X], outputs, mode=arignote.Mode(linker="cvm"))
    x = np.random.default_rng(5).standard_normal((4, 6, 3))
    r = x[::-1]
    expected = [
        r.reshape(-1, 3),
        r.reshape(4, -1),
        np.exp(x).reshape(-1, 3) * 2,
        x[:, ::2].reshape(-1),
    ]
    for got, want in zip(f(x), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12)
