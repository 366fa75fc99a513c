"""Basic subtensors as views (`lowering/loops/ag_views.py`): results equal to NumPy's on both
linkers, a view's source never overwritten in place while the view is read, outputs
never aliasing the inputs or each other, DebugMode's checks."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.debugmode import DebugMode
from arignote.compile.mode import Mode

LINKERS = ["py", "cvm"]


def _names(f: arignote.Function) -> list[str]:
    return [str(n.op) for n in f.maker.fgraph.toposort()]


@pytest.mark.parametrize("linker", LINKERS)
def test_views_compute_numpy_slices(linker: str) -> None:
    x, i = T.dmatrix("x"), T.lscalar("i")
    e = T.exp(x)
    outs = [
        (e[::-1] * 2).sum(axis=0),
        e[1:, ::2].sum(),
        e[-1] + e[0],
        e[i:][::-2].sum(axis=1),
        T.tanh(x[::-1][1:, ::-1]),
        e[i, 1::-1] * 1,
    ]
    f = arignote.function([x, i], outs, mode=Mode(linker=linker))
    xv = np.random.default_rng(0).standard_normal((5, 4))
    ev = np.exp(xv)
    want = [
        (ev[::-1] * 2).sum(axis=0),
        ev[1:, ::2].sum(),
        ev[-1] + ev[0],
        ev[1:][::-2].sum(axis=1),
        np.tanh(xv[::-1][1:, ::-1]),
        ev[1, 1::-1],
    ]
    for got, expected in zip(f(xv, 1), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    with pytest.raises(IndexError, match="out of bounds"):
        f(xv, 7)


def test_subtensor_view_map() -> None:
    x = T.dmatrix("x")
    f = arignote.function([x], [T.exp(x)[::-1].sum()])
    node = next(n for n in f.maker.fgraph.toposort() if str(n.op).startswith("Subtensor"))
    assert node.op.view_map == {0: [0]}
    assert node.op.destroy_map == {}


@pytest.mark.parametrize("linker", LINKERS)
def test_live_view_keeps_its_source(linker: str) -> None:
    """tanh is exp's last direct user, but exp's reverse view is read after it: writing
    tanh over exp's buffer would change what the view reads."""
    x = T.dvector("x")
    e = T.exp(x)
    out = e[::-1] + T.tanh(e) * 3
    f = arignote.function([x], out, mode=Mode(linker=linker).excluding("fusion"))
    assert "Elemwise{tanh}" in _names(f)  # not Elemwise{tanh}[(0, 0)]
    xv = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f(xv), np.tanh(np.exp(xv)) * 3 + np.exp(xv)[::-1], rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_operand_viewed_by_another_operand_is_kept(linker: str) -> None:
    """`e + e[::-1]`: add is the last user of both, but writing `e[i]` while `e[n-1-i]`
    is still to be read would be wrong."""
    x = T.dvector("x")
    e = T.exp(x)
    f = arignote.function(
        [x], [(e + e[::-1]).sum(), e[1:] * e[:-1]], mode=Mode(linker=linker).excluding("fusion")
    )
    assert not any(name.startswith("Elemwise{add}[") for name in _names(f))
    xv = np.linspace(-1, 2, 6)
    ev = np.exp(xv)
    s, p = f(xv)
    np.testing.assert_allclose(s, (ev + ev[::-1]).sum(), rtol=1e-12)
    np.testing.assert_allclose(p, ev[1:] * ev[:-1], rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_outputs_never_alias_inputs_or_each_other(linker: str) -> None:
    x = T.dmatrix("x")
    e = T.exp(x)
    outs = [x[::-1], x[1:], x[0], e, e[::-1], e[::-1]]
    f = arignote.function([x], outs, mode=Mode(linker=linker))
    xv = np.arange(6.0).reshape(3, 2)
    xs = xv.copy()
    got = f(xv)
    for k, a in enumerate(got):
        assert not np.shares_memory(a, xv)
        assert all(not np.shares_memory(a, b) for b in got[k + 1 :])
    for a in got:
        a[...] = -7.0
    np.testing.assert_array_equal(xv, xs)
    again = f(xv)
    np.testing.assert_array_equal(again[0], xs[::-1])
    np.testing.assert_allclose(again[4], np.exp(xs)[::-1], rtol=1e-15)


def test_debugmode_accepts_views() -> None:
    x = T.dmatrix("x")
    h = T.tanh(T.dot(x, x) + 1)
    r = h[::-1]
    f = arignote.function([x], [(r * h).sum(axis=1), r[1:, 0], x[-1] * 2], mode=DebugMode())
    xv = np.random.default_rng(3).standard_normal((3, 3))
    hv = np.tanh(xv @ xv + 1)
    a, b, c = f(xv)
    np.testing.assert_allclose(a, (hv[::-1] * hv).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(b, hv[::-1][1:, 0], rtol=1e-12)
    np.testing.assert_allclose(c, xv[-1] * 2, rtol=1e-12)


_EXTREME = [-(2**63), -(2**63) + 1, -(2**62) - 1, -11, -1, 0, 3, 2**62 + 1, 2**63 - 1]
"""Slice parts at and near the ends of int64 (the first two are the values the `ag`
encoding once took for "dynamic" and "absent")."""


def _extreme_slices() -> list[slice]:
    big = [-(2**63), 2**63 - 1, -(2**62) - 1, 2**64]
    steps = [-(2**63), -(2**63) + 1, 2**63 - 1, 2**64, -(2**64), -3, 2, None]
    slices = [slice(None, None, s) for s in steps]
    slices += [slice(b, None, s) for b in big for s in (None, -1)]
    slices += [slice(None, b, s) for b in big for s in (None, -1)]
    slices += [slice(-(2**63), 2**63 - 1, 2**63 - 1), slice(2**63 - 1, -(2**63), -(2**63))]
    return slices


@pytest.mark.parametrize("linker", LINKERS)
def test_extreme_static_slices_match_numpy(linker: str) -> None:
    """Regression: `v[::-2**63]` failed to compile (the step read as "dynamic"), and
    bounds beyond int64 were rejected."""
    v = T.dvector("v")
    slices = _extreme_slices()
    outs = [v[s] for s in slices] + [T.set_subtensor(v[s], -1.0) for s in slices[:4]]
    f = arignote.function([v], outs, mode=Mode(linker=linker))
    for n in (0, 1, 10):
        a = np.arange(n, dtype=np.float64)
        want = [a[s] for s in slices]
        for s in slices[:4]:
            b = a.copy()
            b[s] = -1.0
            want.append(b)
        for s, got, expected in zip(slices + slices[:4], f(a), want, strict=True):
            np.testing.assert_array_equal(got, expected, err_msg=f"n={n}, {s}")


@pytest.mark.parametrize("linker", LINKERS)
def test_extreme_dynamic_slices_match_numpy(linker: str) -> None:
    """Regression: a run-time step of -2**63 overflowed the native slice length."""
    v, a, b, c = T.dvector("v"), T.lscalar("a"), T.lscalar("b"), T.lscalar("c")
    outs = [v[a:b:c], v[::c], v[a::c], v[:b:c]]
    f = arignote.function([v, a, b, c], outs, mode=Mode(linker=linker))
    rng = np.random.default_rng(0)
    for n in (0, 1, 10):
        x = np.arange(n, dtype=np.float64)
        for _ in range(150):
            i, j, k = (int(e) for e in rng.choice(_EXTREME, 3))
            if k == 0:
                continue
            got = f(x, i, j, k)
            want = [x[i:j:k], x[::k], x[i::k], x[:j:k]]
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(g, w, err_msg=f"n={n}, {i}:{j}:{k}")


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("index", [-(2**63), -(2**63) + 1, 2**63 - 1, 2**64])
def test_extreme_static_index_is_an_index_error(linker: str, index: int) -> None:
    """Regression: -2**63 and -2**63 + 1 were read as "dynamic" and "absent" (a leaked
    VerifyException), 2**64 as out of range for i64 (a ValueError)."""
    v = T.dvector("v")
    with pytest.raises(IndexError, match=f"index {index} is out of bounds"):
        arignote.function([v], v[index], mode=Mode(linker=linker))(np.zeros(3))
