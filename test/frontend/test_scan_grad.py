"""Gradients through `arignote.scan` (a reverse scan), checked by finite differences."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad


def _rnn_with_taps(x, h0, w, u, b):
    def step(xt, h2, h1, W, U):  # b is captured from outside the step
        return T.tanh(T.dot(xt, W) + T.dot(h1, U) + 0.5 * h2 + b)

    hs, _ = arignote.scan(
        step, sequences=x, outputs_info=dict(initial=h0, taps=[-2, -1]), non_sequences=[w, u]
    )
    return hs


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_rnn_with_taps_matches_finite_differences(linker: str) -> None:
    rng = np.random.default_rng(0)
    point = [
        rng.standard_normal((4, 2, 3)),
        rng.standard_normal((3, 2, 3)),  # one more history row than the taps need
        rng.standard_normal((3, 3)) * 0.5,
        rng.standard_normal((3, 3)) * 0.5,
        rng.standard_normal(3),
    ]
    verify_grad(_rnn_with_taps, point, mode=arignote.Mode(linker=linker), n_tests=1)


def test_sequence_taps_and_an_output_not_fed_back() -> None:
    def f(x, s0, w):
        (d, tot), _ = arignote.scan(
            lambda p, c, tot, w: [c * p * w, tot * w + c],
            sequences=dict(input=x, taps=[-1, 0]),
            outputs_info=[None, s0],
            non_sequences=w,
        )
        return d.sum() + tot.sum()

    rng = np.random.default_rng(1)
    point = [rng.standard_normal(5), np.array(0.3), np.array(0.7)]
    verify_grad(f, point, mode=arignote.Mode(linker="py"), n_tests=1)


def test_truncate_gradient() -> None:
    x, h0, w = T.matrix("x"), T.vector("h0"), T.matrix("w")

    def hs(truncate):
        out, _ = arignote.scan(
            lambda xt, h, w: T.tanh(xt + T.dot(h, w)),
            sequences=x,
            outputs_info=h0,
            non_sequences=w,
            truncate_gradient=truncate,
        )
        return out[-1].sum()

    full = arignote.grad(hs(-1), [x, h0])
    cut = arignote.grad(hs(2), [x, h0])
    f = arignote.function([x, h0, w], [*full, *cut])
    rng = np.random.default_rng(2)
    gx, gh, tx, th = f(rng.standard_normal((5, 3)), rng.standard_normal(3), rng.random((3, 3)))
    np.testing.assert_allclose(tx[-2:], gx[-2:], rtol=1e-12)
    assert not tx[:-2].any() and not th.any() and gh.any()


def _tanh_step(xt, h, w):
    return T.tanh(xt * w + h)


@pytest.mark.parametrize(
    "kwargs", [dict(go_backwards=True), dict(n_steps=3)], ids=["go_backwards", "n_steps"]
)
def test_backwards_and_fewer_steps_than_rows(kwargs) -> None:
    def f(x, h0, w):
        hs, _ = arignote.scan(_tanh_step, sequences=x, outputs_info=h0, non_sequences=w, **kwargs)
        return hs

    rng = np.random.default_rng(4)
    point = [rng.standard_normal((5, 3)), rng.standard_normal(3), rng.standard_normal(3)]
    verify_grad(f, point, mode=arignote.Mode(linker="py"), n_tests=1)


def test_map_gradient() -> None:
    def f(x, w):
        ys, _ = arignote.map(lambda v, w: T.exp(v * w), sequences=x, non_sequences=w)
        return ys

    rng = np.random.default_rng(5)
    point = [rng.standard_normal((4, 2)), rng.standard_normal(2)]
    verify_grad(f, point, mode=arignote.Mode(linker="py"), n_tests=1)


def _scans(f: arignote.Function) -> list:
    from arignote.dialects import ag

    return [op for op in f.maker.fgraph.func.walk() if isinstance(op, ag.ScanOp)]


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_last_row_cost_seeds_the_reverse_scan(linker: str) -> None:
    """The gradient of a cost of `h[-1]` is zeros but for the last row: that row is the
    reverse scan's initial carried gradient, no sequence of zeros (no IncSubtensor)."""
    from bench.rnn import arignote_graph, init, numpy_call

    inputs, hs = arignote_graph()
    grads = arignote.grad(hs[-1].sum(), inputs[2:])
    f = arignote.function(inputs, [hs[-1], *grads], mode=arignote.Mode(linker=linker))
    names = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert not any("IncSubtensor" in n or "Join" in n for n in names)
    forward, backward = _scans(f)
    assert len(backward.sequences) == 3  # x_t, h_{t-1}, h_t: no incoming-gradient rows
    assert forward.with_initial_outputs == {0}  # [h0, h_1, ...]: the states h_{t-1} read
    data = init(6, 3, 4, 5, np.float64)
    data = (data[0], np.random.default_rng(1).standard_normal(data[1].shape), *data[2:])
    for got, want in zip(f(*data), numpy_call(*data), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_last_row_cost_with_two_taps_and_truncation() -> None:
    def last(x, h0, w, u, b):
        return _rnn_with_taps(x, h0, w, u, b)[-1]

    rng = np.random.default_rng(6)
    point = [
        rng.standard_normal((4, 2, 3)),
        rng.standard_normal((2, 2, 3)),
        rng.standard_normal((3, 3)) * 0.5,
        rng.standard_normal((3, 3)) * 0.5,
        rng.standard_normal(3),
    ]
    verify_grad(last, point, mode=arignote.Mode(linker="py"), n_tests=1)
    x, h0, w = T.matrix("x"), T.vector("h0"), T.matrix("w")
    out, _ = arignote.scan(
        lambda xt, h, w: T.tanh(xt + T.dot(h, w)),
        sequences=x,
        outputs_info=h0,
        non_sequences=w,
        truncate_gradient=2,
    )
    seeded = arignote.grad(out[-1].sum(), [x, h0])
    general = arignote.grad(out[-1].sum() + 0 * out[0].sum(), [x, h0])
    f = arignote.function([x, h0, w], [*seeded, *general])
    xv, hv, wv = rng.standard_normal((5, 3)), rng.standard_normal(3), rng.random((3, 3))
    gx, gh, hx, hh = f(xv, hv, wv)
    np.testing.assert_allclose(gx, hx, rtol=1e-12)
    np.testing.assert_allclose(gh, hh, rtol=1e-12)
    assert gx[-2:].any() and not gx[:-2].any()


def test_fed_back_output_without_incoming_gradient() -> None:
    """Only the output that is not fed back reaches the cost: the fed-back one's incoming
    gradient is zeros, and its carried gradient is all that flows back."""

    def f(x, s0, w):
        (d, _), _ = arignote.scan(
            lambda p, c, tot, w: [c * p * w, tot * w + c],
            sequences=dict(input=x, taps=[-1, 0]),
            outputs_info=[None, s0],
            non_sequences=w,
        )
        return d.sum()

    rng = np.random.default_rng(7)
    point = [rng.standard_normal(5), np.array(0.3), np.array(0.7)]
    verify_grad(f, point, mode=arignote.Mode(linker="py"), n_tests=1)


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_states_returned_with_the_gradient(linker: str) -> None:
    """`hs` is a view of the forward scan's history buffer (scan-history): returned, it is
    a copy (it aliases nothing), and the gradient reads the same buffer."""
    from bench.rnn import arignote_graph, init, numpy_call

    inputs, hs = arignote_graph()
    X, H0, W, U, B = inputs
    grads = arignote.grad(hs[-1].sum(), [W, U, B, H0])
    f = arignote.function(inputs, [hs, *grads], mode=arignote.Mode(linker=linker))
    assert _scans(f)[0].with_initial_outputs == {0}
    x, h0, w, u, b = init(5, 2, 3, 4, np.float64)
    h0 = np.random.default_rng(2).standard_normal(h0.shape)
    got_hs, gw, gu, gb, gh0 = f(x, h0, w, u, b)
    want_h, want_w, want_u, want_b = numpy_call(x, h0, w, u, b)
    np.testing.assert_allclose(got_hs[-1], want_h, rtol=1e-12)
    assert got_hs.shape == (5, 2, 4) and not np.shares_memory(got_hs, h0)
    for got, want in zip([gw, gu, gb], [want_w, want_u, want_b], strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    eps, bumped = 1e-6, h0.copy()
    bumped[1, 2] += eps
    slope = (f(x, bumped, w, u, b)[0][-1].sum() - got_hs[-1].sum()) / eps
    np.testing.assert_allclose(gh0[1, 2], slope, rtol=1e-4)


def test_debugmode_checks_the_rnn_gradient() -> None:
    from arignote.compile.debugmode import DebugMode

    x, h0, w = T.tensor3("x"), T.matrix("h0"), T.matrix("w")
    hs, _ = arignote.scan(
        lambda xt, h, w: T.tanh(xt + T.dot(h, w)), sequences=x, outputs_info=h0, non_sequences=w
    )
    f = arignote.function([x, h0, w], arignote.grad(hs[-1].sum(), [w, h0]), mode=DebugMode())
    rng = np.random.default_rng(8)
    gw, gh = f(rng.standard_normal((4, 2, 3)), rng.standard_normal((2, 3)), rng.random((3, 3)))
    assert gw.shape == (3, 3) and gh.shape == (2, 3)


@pytest.mark.parametrize("linker", ["py", "cvm"])
@pytest.mark.parametrize(
    "initial",
    [
        lambda c: T.zeros((3,)) + c,  # lengths fixed when the graph is built
        lambda c: T.constant(np.ones(3)),
        lambda c: T.alloc(c, 3),
    ],
    ids=["zeros", "constant", "alloc"],
)
def test_initial_state_of_fixed_shape(linker: str, initial) -> None:
    """The state's initial value has the static shape (3,), the step's results an unknown
    length: the reverse scan re-applies the step to values of the fixed shape (it once
    failed to verify: `'ag.mul' op result type tensor<?xf64> does not match the inferred
    type tensor<3xf64>`)."""

    def f(x, w, c):
        hs, _ = arignote.scan(
            lambda xt, h: T.tanh(T.dot(h, w) + xt), sequences=[x], outputs_info=[initial(c)]
        )
        return (hs**2).sum() + hs[-1].sum()

    rng = np.random.default_rng(2)
    point = [rng.standard_normal((4, 3)), rng.standard_normal((3, 3)) * 0.5, np.array(0.3)]
    verify_grad(f, point, mode=arignote.Mode(linker=linker), n_tests=1)
