"""Updates of shared variables computed over the stored value (the `inplace-update` pass
and the runtime's use of `ag.inplace_results`), on both linkers."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.debugmode import DebugMode
from arignote.compile.mode import native_function
from arignote.dialects import ag


@pytest.fixture(params=["py", "cvm"])
def mode(request: pytest.FixtureRequest) -> arignote.Mode:
    return arignote.Mode(linker=request.param)


def _native(mode: arignote.Mode) -> bool:
    return mode.linker != "py"


def test_gemm_accumulates_into_the_stored_weights(mode: arignote.Mode) -> None:
    rng = np.random.default_rng(0)
    x_val, d_val = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    w_val = rng.standard_normal((4, 3))
    w = arignote.shared(w_val, name="w")
    x, d = T.dmatrix("x"), T.dmatrix("d")
    f = arignote.function(
        [x, d], T.dot(x, w).sum(), updates=[(w, w - 0.1 * T.dot(x.T, d))], mode=mode
    )
    names = [str(node.op) for node in f.maker.fgraph.toposort()]
    assert "Gemm{A.T,inplace}" in names, names
    [gemm] = [n for n in f.maker.fgraph.toposort() if str(n.op) == "Gemm{A.T,inplace}"]
    assert gemm.op.destroy_map == {0: [4]}
    held = w.get_value()  # a copy
    stored = w.get_value(borrow=True)
    out = f(x_val, d_val)
    np.testing.assert_allclose(out, (x_val @ w_val).sum(), rtol=1e-12)  # the old value
    expected = w_val - 0.1 * x_val.T @ d_val
    np.testing.assert_allclose(w.get_value(), expected, rtol=1e-12)
    np.testing.assert_array_equal(held, w_val)
    assert (w.get_value(borrow=True) is stored) == _native(mode)
    f(x_val, d_val)  # the second call reads the updated value
    np.testing.assert_allclose(w.get_value(), expected - 0.1 * x_val.T @ d_val, rtol=1e-12)


def test_readers_of_the_old_value_come_first(mode: arignote.Mode) -> None:
    """W's update is emitted before V's, which reads W: the pass moves it after V's; and
    W's old value is also an output."""
    w = arignote.shared(np.arange(3.0), name="w")
    v = arignote.shared(np.ones(3), name="v")
    stored = w.get_value(borrow=True)
    f = arignote.function([], [w, T.exp(w)], updates=[(w, w * 2), (v, v + w.sum())], mode=mode)
    old, e = f()
    np.testing.assert_array_equal(old, [0.0, 1.0, 2.0])
    np.testing.assert_allclose(e, np.exp([0.0, 1.0, 2.0]))
    np.testing.assert_array_equal(w.get_value(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(v.get_value(), [4.0, 4.0, 4.0])
    assert (w.get_value(borrow=True) is stored) == _native(mode)
    assert old is not w.get_value(borrow=True)
    optimized = f.maker.fgraph.func
    assert ag.result_pairs(optimized, ag.INPLACE_RESULTS_ATTRIBUTE) == {2: 0, 3: 1}


def test_arrays_that_cannot_take_the_update() -> None:
    """A non-contiguous, read-only or aliased stored array gets a new array instead."""
    x = T.dvector("x")
    w = arignote.shared(np.zeros(3), name="w")
    f = arignote.function([x], [], updates=[(w, w + x)])
    base = np.arange(6.0)
    w.set_value(base[::2], borrow=True)  # not contiguous
    f(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), [1.0, 3.0, 5.0])
    np.testing.assert_array_equal(base, np.arange(6.0))
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    w.set_value(frozen, borrow=True)
    f(np.ones(3))
    np.testing.assert_array_equal(w.get_value(), [1.0, 1.0, 1.0])
    assert not frozen.any()
    stored = w.get_value(borrow=True)
    f(stored)  # the input is the stored array itself: w + w, not computed over itself
    np.testing.assert_array_equal(w.get_value(), [2.0, 2.0, 2.0])
    assert w.get_value(borrow=True) is not stored
    assert stored.tolist() == [1.0, 1.0, 1.0]
    kept = w.get_value(borrow=True)
    f(np.ones(3))  # a fit array is used again: the update is computed in it
    assert w.get_value(borrow=True) is kept
    np.testing.assert_array_equal(kept, [3.0, 3.0, 3.0])


def test_runtime_refuses_a_donor_of_another_shape() -> None:
    """`ag.inplace_results` pairs types, not shapes: the native call (both its entry
    point and its Python path) uses the input's array only when the shapes match, and
    never an array that shares memory with another input or is read-only."""
    a, b = T.dvector("a"), T.dvector("b")
    module = arignote.function([a, b], a * 2, on_unused_input="ignore").module.clone()
    fn = next(iter(module.ops))
    ag.set_result_pairs(fn, ag.INPLACE_RESULTS_ATTRIBUTE, {0: 1})  # a * 2 may go into b
    native = native_function(module, fn.sym_name.data)
    assert native.aliases == {0: 1}
    assert native.fast_entry is not None
    for call in (native.fast_entry.call, native):
        x, same, other = np.arange(3.0), np.zeros(3), np.zeros(4)
        result = call(x, same)
        result = result if isinstance(result, np.ndarray) else result[0]
        assert result is same and same.tolist() == [0.0, 2.0, 4.0]
        result = call(x, other)
        result = result if isinstance(result, np.ndarray) else result[0]
        assert result is not other and not other.any()
        np.testing.assert_array_equal(result, [0.0, 2.0, 4.0])
        result = call(x, x)  # the donor is also the input that is read
        result = result if isinstance(result, np.ndarray) else result[0]
        assert result.tolist() == [0.0, 2.0, 4.0] and x.tolist() == [0.0, 1.0, 2.0]
        frozen = np.zeros(3)
        frozen.flags.writeable = False
        result = call(x, frozen)
        result = result if isinstance(result, np.ndarray) else result[0]
        assert result is not frozen and not frozen.any()


def test_debugmode_accepts_declared_in_place_updates() -> None:
    w = arignote.shared(np.arange(4.0), name="w")
    x = T.dvector("x")
    f = arignote.function([x], (w * x).sum(), updates=[(w, w - 0.5 * x)], mode=DebugMode())
    assert f(np.ones(4)) == 6.0
    np.testing.assert_array_equal(w.get_value(), [-0.5, 0.5, 1.5, 2.5])


def test_excluding_inplace_keeps_updates_out_of_place() -> None:
    w = arignote.shared(np.zeros(2), name="w")
    f = arignote.function([], [], updates=[(w, w + 1)], mode=arignote.Mode().excluding("inplace"))
    stored = w.get_value(borrow=True)
    f()
    assert w.get_value(borrow=True) is not stored and not stored.any()
    assert ag.result_pairs(f.maker.fgraph.func, ag.INPLACE_RESULTS_ATTRIBUTE) == {}


def test_update_with_more_static_dimensions_than_its_variable(mode: arignote.Mode) -> None:
    """`w + numpy.ones(5)` has the static shape (5,), `w` a dynamic one: the update's IR
    type differs from the variable's, so it is stored by copy (it once failed to verify)."""
    w = arignote.shared(np.zeros(5), name="w")
    m = arignote.shared(np.zeros((2, 3)), name="m")
    f = arignote.function(
        [], [], updates=[(w, w + np.ones(5)), (m, m - np.full((2, 3), 0.5))], mode=mode
    )
    f()
    f()
    np.testing.assert_array_equal(w.get_value(), np.full(5, 2.0))
    np.testing.assert_array_equal(m.get_value(), np.full((2, 3), -1.0))
    w.set_value(np.zeros(3))  # the constant's shape still rules
    with pytest.raises(ValueError, match="do not match"):
        f()
