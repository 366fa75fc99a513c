"""Scan accumulators kept in one row and updated in place (`scan_accumulate`): which
states qualify, and that the native results equal the reference interpreter's and a
NumPy BPTT."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.lowering.loops import ag_scan
from arignote.lowering.loops.scan_accumulate import accumulated_outputs
from bench.rnn import arignote_graph, numpy_call


def _rnn_function(linker: str):
    inputs, hs = arignote_graph()
    grads = arignote.grad(hs[-1].sum(), inputs[2:])
    return arignote.function(inputs, [hs[-1], *grads], mode=arignote.Mode(linker=linker))


def _rnn_point():
    rng = np.random.default_rng(0)
    return [
        rng.standard_normal((5, 2, 3)),
        rng.standard_normal((2, 3)),
        rng.standard_normal((3, 3)) * 0.5,
        rng.standard_normal((3, 3)) * 0.5,
        rng.standard_normal(3),
    ]


def _reverse_scans(f) -> list:
    scans = [op for op in f._compiled.optimized.walk() if op.name == "ag.scan"]
    return [op for op in scans if op.last_only_outputs]


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_rnn_gradients_match_numpy_bptt(linker: str) -> None:
    point = _rnn_point()
    results = _rnn_function(linker)(*point)
    for got, want in zip(results, numpy_call(*point), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_in_place_results_equal_the_ring_results(monkeypatch: pytest.MonkeyPatch) -> None:
    point = _rnn_point()
    f = _rnn_function("cvm")
    (reverse,) = _reverse_scans(f)
    assert accumulated_outputs(reverse) == {1, 2, 3}  # the gradients of w, u and b
    in_place = f(*point)
    monkeypatch.setattr(ag_scan, "accumulated_outputs", lambda op: set())
    ring = _rnn_function("cvm")(*point)
    for a, c in zip(in_place, ring, strict=True):
        np.testing.assert_array_equal(a, c)


def _last_row_scan(step, outputs_info, linker: str):
    x, w = T.matrix("x"), T.matrix("w")
    out, _ = arignote.scan(step(w), sequences=x, outputs_info=outputs_info)
    initial = outputs_info["initial"] if isinstance(outputs_info, dict) else outputs_info
    return arignote.function(
        [x, initial, w], out[-1], mode=arignote.Mode(linker=linker), on_unused_input="ignore"
    )


_CASES = {
    # name: (step, taps of the state, whether the state is kept in one row)
    "add": (lambda w: lambda xt, a: a + xt, None, {0}),
    "gemv": (lambda w: lambda xt, a: a + T.dot(w, xt), None, {0}),
    "read_twice": (lambda w: lambda xt, a: a + xt * a, None, set()),
    "taps_-2_-1": (lambda w: lambda xt, a2, a1: a1 + xt * a2, [-2, -1], set()),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_which_states_are_accumulated_and_results_match(name: str) -> None:
    step, taps, expected = _CASES[name]
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((6, 3)), rng.standard_normal((3, 3))
    if taps is None:
        info, a0 = T.vector("a0"), rng.standard_normal(3)
    else:
        info, a0 = dict(initial=T.matrix("a0"), taps=taps), rng.standard_normal((2, 3))
    native = _last_row_scan(step, info, "cvm")
    (scan,) = _reverse_scans(native)
    assert accumulated_outputs(scan) == expected
    want = _last_row_scan(step, info, "py")(x, a0, w)
    np.testing.assert_allclose(native(x, a0, w), want, rtol=1e-12, atol=1e-12)
