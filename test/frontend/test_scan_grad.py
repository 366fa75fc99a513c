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
