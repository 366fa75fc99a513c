"""Theano's scan library (issue 13 item 7): repeat-until loops (`until`), `strict`,
`go_backwards` with taps, `scan_checkpoints`' errors and the shorthands `map`, `reduce`,
`foldl`, `foldr`, on both linkers (the native one without falling back to the
interpreter)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.mode import InterpreterFallbackWarning
from arignote.gradient import grad, verify_grad
from arignote.scan_module import until

LINKERS = ["py", "cvm"]


def _f(inputs, outputs, linker, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error", InterpreterFallbackWarning)
        return arignote.function(inputs, outputs, mode=arignote.Mode(linker=linker), **kwargs)


def test_until_import_paths() -> None:
    from arignote.scan_module.scan_utils import until as from_utils

    assert from_utils is until is arignote.scan_module.until
    with pytest.raises(AssertionError, match="0-d"):
        until(T.vector())


@pytest.mark.parametrize("linker", LINKERS)
def test_until_theano_example(linker: str) -> None:
    # doc/library/scan.txt: the powers of two up to the first one above max_value
    def power_of_2(previous_power, max_value):
        return previous_power * 2, until(previous_power * 2 > max_value)

    max_value = T.dscalar("max_value")
    values, _ = arignote.scan(
        power_of_2, outputs_info=T.constant(1.0), non_sequences=max_value, n_steps=1024
    )
    capped, _ = arignote.scan(
        power_of_2, outputs_info=T.constant(1.0), non_sequences=max_value, n_steps=5
    )
    f = _f([max_value], [values, capped, values.shape[0]], linker)
    got, got_capped, length = f(45.0)
    np.testing.assert_array_equal(got, [2.0, 4.0, 8.0, 16.0, 32.0, 64.0])
    np.testing.assert_array_equal(got_capped, [2.0, 4.0, 8.0, 16.0, 32.0])  # n_steps bounds
    assert length == 6
    np.testing.assert_array_equal(f(0.5)[0], [2.0])  # the stopping step is included
    assert f(1e300)[0].shape == (997,)


@pytest.mark.parametrize("linker", LINKERS)
def test_until_return_forms_and_updates(linker: str) -> None:
    x = T.dvector("x")
    counter = arignote.shared(np.array(0, dtype="int64"), name="counter")

    def with_updates(x_t, acc):  # (outputs, updates, until)
        new = acc + x_t
        return [new, new * 2], {counter: counter + 1}, until(new > 5)

    (acc, twice), updates = arignote.scan(
        with_updates, sequences=x, outputs_info=[T.constant(0.0), None]
    )
    # (outputs, until) with an integer condition (nonzero is true)
    evens, _ = arignote.scan(lambda x_t: (x_t * 3, until(T.cast(x_t, "int64") % 2)), sequences=x)
    f = _f([x], [acc, twice, evens], linker, updates=updates)
    r = f(np.array([1.0, 2.0, 3.0, 4.0, 5.0]))
    np.testing.assert_array_equal(r[0], [1.0, 3.0, 6.0])
    np.testing.assert_array_equal(r[1], [2.0, 6.0, 12.0])
    np.testing.assert_array_equal(r[2], [3.0])  # 1 is odd: stops at once
    assert counter.get_value() == 3  # the steps run
    r = f(np.array([1.0, 1.0]))  # never true: all the steps
    np.testing.assert_array_equal(r[0], [1.0, 2.0])
    assert counter.get_value() == 5


def test_until_must_come_last() -> None:
    x = T.dvector("x")
    with pytest.raises(ValueError, match="at the end the conclusion"):
        arignote.scan(lambda x_t: (until(x_t > 0), x_t), sequences=x)
    with pytest.raises(ValueError, match="number of steps"):
        arignote.scan(lambda h: (h, until(h > 0)), outputs_info=T.constant(0.0))


@pytest.mark.parametrize("linker", LINKERS)
def test_until_without_steps(linker: str) -> None:
    n = T.lscalar("n")
    h0 = T.dvector("h0")
    hs, _ = arignote.scan(lambda h: (h + 1, until(h.sum() > 3)), outputs_info=h0, n_steps=n)
    f = _f([h0, n], hs, linker)
    assert f(np.zeros(2), 0).shape == (0, 2)
    # the condition reads the state before the step: 0, 2, then 4 > 3 stops
    np.testing.assert_array_equal(f(np.zeros(2), 10), [[1, 1], [2, 2], [3, 3]])


@pytest.mark.parametrize("linker", LINKERS)
def test_until_gradient(linker: str) -> None:
    def step(x_t, h, w):
        new = T.tanh(h * w + x_t)
        return new, until(abs(new) > 0.9)

    def forward(x, w):
        hs, _ = arignote.scan(step, sequences=x, outputs_info=T.constant(0.0), non_sequences=w)
        return hs

    xv, wv = np.array([0.1, 0.3, 0.5, 2.0, 0.2, 0.1]), 0.7
    verify_grad(forward, [xv, np.array(wv)], mode=arignote.Mode(linker=linker))
    x, w = T.dvector("x"), T.dscalar("w")
    hs = forward(x, w)
    gx, gw = grad((hs**2).sum(), [x, w])
    r_hs, r_gx, r_gw = _f([x, w], [hs, gx, gw], linker)(xv, wv)
    # NumPy: 4 steps run (tanh(2 + ...) > 0.9), backpropagation through them
    hs_np, h = [], 0.0
    for v in xv:
        h = np.tanh(h * wv + v)
        hs_np.append(h)
        if abs(h) > 0.9:
            break
    np.testing.assert_allclose(r_hs, hs_np)
    carry, gx_np, gw_np = 0.0, np.zeros_like(xv), 0.0
    for t in reversed(range(len(hs_np))):
        d = (2 * hs_np[t] + carry) * (1 - hs_np[t] ** 2)
        gx_np[t] = d
        gw_np += d * (hs_np[t - 1] if t else 0.0)
        carry = d * wv
    np.testing.assert_allclose(r_gx, gx_np, rtol=1e-12)
    np.testing.assert_allclose(r_gw, gw_np, rtol=1e-12)


def test_strict_is_theanos_missing_input_error() -> None:
    # Theano's test_strict_mode_ex: a shared variable not passed in non_sequences
    w = arignote.shared(np.array([[-1.0, 2.0], [3.0, -4.0]]))
    x0 = T.dvector("x0")
    with pytest.raises(arignote.MissingInputError, match="Input 1 of the graph .*strict=True"):
        arignote.scan(lambda x: T.dot(x, w), outputs_info=[x0], n_steps=10, strict=True)
    loose, _ = arignote.scan(lambda x: T.dot(x, w), outputs_info=[x0], n_steps=3)
    strict, _ = arignote.scan(
        lambda x, w_: T.dot(x, w_), outputs_info=[x0], non_sequences=[w], n_steps=3, strict=True
    )
    f = arignote.function([x0], [loose[-1], strict[-1]])
    a, b = f(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(a, b)


def _theano_slices(x: np.ndarray, taps: list[int], backwards: bool) -> list[list[float]]:
    """Theano's sequence slices per step: tap k of step t reads x[t + k - min(taps, 0)],
    over len(x) - (max(taps, 0) - min(taps, 0)) steps; go_backwards reverses each tap's
    window (scan.py, `maxtap_proxy`/`mintap_proxy`)."""
    low, high = min(min(taps), 0), max(max(taps), 0)
    n = len(x) - (high - low)
    if backwards:
        return [[x[len(x) - 1 - high + k - t] for k in taps] for t in range(n)]
    return [[x[t + k - low] for k in taps] for t in range(n)]


@pytest.mark.parametrize("linker", LINKERS)
def test_sequence_taps_and_go_backwards_follow_theano(linker: str) -> None:
    x = T.dvector("x")
    xv = np.arange(7.0) + 1
    cases = [
        ([-1, 0], False),
        ([-1, 0], True),
        ([1, 2], False),
        ([1, 2], True),
        ([-2], False),
        ([-2], True),
        ([2, -1], False),
        ([2, -1], True),
        ([0], True),
    ]
    outs = []
    for taps, backwards in cases:
        out, _ = arignote.scan(
            lambda *a: T.stack(list(a)),
            sequences=dict(input=x, taps=taps),
            go_backwards=backwards,
        )
        outs.append(out)
    got = _f([x], outs, linker)(xv)
    for (taps, backwards), g in zip(cases, got, strict=True):
        want = np.array(_theano_slices(xv, taps, backwards))
        np.testing.assert_array_equal(g, want, err_msg=f"taps {taps}, go_backwards {backwards}")


@pytest.mark.parametrize("linker", LINKERS)
def test_go_backwards_with_outputs_and_gradient(linker: str) -> None:
    # The outputs are produced in step order; the sequences are read from their end.
    def fun(x, h0):
        hs, _ = arignote.scan(
            lambda xm1, x0, h: T.tanh(h + xm1 - 2 * x0),
            sequences=dict(input=x, taps=[-1, 0]),
            outputs_info=dict(initial=h0, taps=[-1]),
            go_backwards=True,
        )
        return hs

    x, h0 = T.dvector("x"), T.dscalar("h0")
    xv, h0v = np.array([0.1, -0.2, 0.3, 0.4]), np.array(0.5)
    got = _f([x, h0], fun(x, h0), linker)(xv, h0v)
    h, want = float(h0v), []
    for t in range(3):  # step t reads x[2 - t] (tap -1) and x[3 - t] (tap 0)
        h = np.tanh(h + xv[2 - t] - 2 * xv[3 - t])
        want.append(h)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    verify_grad(fun, [xv, h0v], mode=arignote.Mode(linker=linker))


@pytest.mark.parametrize("linker", LINKERS)
def test_map_reduce_foldl_foldr(linker: str) -> None:
    x, y = T.dvectors("x", "y")
    m, _ = arignote.map(lambda a, b: a * b, sequences=[x, y])
    r, _ = arignote.reduce(lambda a, acc: acc * 10 + a, sequences=x, outputs_info=T.constant(0.0))
    fl, _ = arignote.foldl(lambda a, acc: acc * 10 + a, sequences=x, outputs_info=T.constant(0.0))
    fr, _ = arignote.foldr(lambda a, acc: acc * 10 + a, sequences=x, outputs_info=T.constant(0.0))
    mb, _ = arignote.map(lambda a: a + 1, sequences=x, go_backwards=True)
    got = _f([x, y], [m, r, fl, fr, mb], linker)(
        np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])
    )
    np.testing.assert_array_equal(got[0], [4.0, 10.0, 18.0])
    assert got[1] == 123.0 and got[2] == 123.0 and got[3] == 321.0
    np.testing.assert_array_equal(got[4], [4.0, 3.0, 2.0])


def test_scan_checkpoints_errors() -> None:
    x, h0 = T.dmatrix("x"), T.dvector("h0")
    with pytest.raises(RuntimeError, match="scan_checkpoints doesn't work with taps."):
        arignote.scan_module.scan_checkpoints(
            lambda v, h: h + v, sequences=x, outputs_info=dict(initial=h0, taps=[-1])
        )
    out, _ = arignote.scan_module.scan_checkpoints(
        lambda v, h: h + v, sequences=x, outputs_info=h0, save_every_N=2, padding=False
    )
    f = arignote.function([x, h0], out)
    np.testing.assert_array_equal(f(np.ones((4, 2)), np.zeros(2)), [[2.0, 2.0], [4.0, 4.0]])
    with pytest.raises(ValueError):
        f(np.ones((3, 2)), np.zeros(2))  # padding=False: the length must be a multiple


@pytest.mark.parametrize("linker", LINKERS)
def test_until_nested_in_a_scan(linker: str) -> None:
    # the inner loop's length depends on the step: native code falls back (documented)
    x = T.dvector("x")

    def outer(x_t):
        inner, _ = arignote.scan(
            lambda h: (h * 2, until(h * 2 > x_t)), outputs_info=T.constant(1.0), n_steps=50
        )
        return inner.shape[0]

    out, _ = arignote.scan(outer, sequences=x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InterpreterFallbackWarning)
        f = arignote.function([x], out, mode=arignote.Mode(linker=linker))
    np.testing.assert_array_equal(f(np.array([3.0, 10.0, 100.0])), [2, 4, 7])
