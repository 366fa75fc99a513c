"""Theano's `function()` semantics: shared variables, updates, givens, In/Out,
`Function.copy`, `default_update`, `Variable.eval` and `arignote.clone`, on both the
reference interpreter and native code."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.function import MissingInputError, UnusedInputError


@pytest.fixture(params=["py", "cvm"])
def mode(request: pytest.FixtureRequest) -> arignote.Mode:
    return arignote.Mode(linker=request.param)


# --- shared variables --------------------------------------------------------------------


def test_shared_types() -> None:
    assert arignote.shared(1).type == T.TensorType("int64", ())
    assert arignote.shared(1.5).type == T.TensorType("float64", ())
    assert arignote.shared(np.float32(1)).dtype == "float32"
    assert arignote.shared(True).dtype == "bool"
    v = arignote.shared(np.zeros((1, 3), np.float32), name="v")
    assert v.type == T.TensorType("float32", (False, False))  # length 1 is not broadcastable
    assert v.name == "v" and str(v) == "v" and v.owner is None
    r = arignote.shared(np.zeros((1, 3)), broadcastable=(True, False))
    assert r.broadcastable == (True, False)
    assert isinstance(v, arignote.Variable) and isinstance(v, arignote.SharedVariable)
    assert not hasattr(v, "default_update")


def test_shared_rejects() -> None:
    with pytest.raises(TypeError, match="symbolic"):
        arignote.shared(T.dscalar())
    with pytest.raises(TypeError, match="list"):
        arignote.shared([1, 2])
    with pytest.raises(TypeError, match="not supported"):
        arignote.shared(np.zeros(2, np.float16))
    with pytest.raises(TypeError, match="dimension"):
        arignote.shared(np.zeros((2, 3)), broadcastable=(True, False))


def test_get_set_value_borrow() -> None:
    data = np.arange(3.0)
    copied = arignote.shared(data)
    data[0] = 10
    assert copied.get_value()[0] == 0  # the constructor copies
    aliased = arignote.shared(data, borrow=True)
    data[1] = 20
    assert aliased.get_value()[1] == 20  # borrow=True aliases
    got = aliased.get_value()
    got[2] = 30
    assert aliased.get_value()[2] == 2  # get_value copies
    aliased.get_value(borrow=True)[2] = 40
    assert aliased.get_value()[2] == 40  # get_value(borrow=True) is the storage

    new = np.ones(3)
    copied.set_value(new)
    new[0] = 5
    assert copied.get_value()[0] == 1
    copied.set_value(new, borrow=True)
    new[1] = 7
    assert copied.get_value()[1] == 7


def test_set_value_checks() -> None:
    s = arignote.shared(np.zeros(3, np.float32))
    s.set_value(np.ones(2, np.float32))  # the shape may change
    assert s.get_value().shape == (2,)
    s.set_value(np.ones(2, np.int8))  # safe upcast
    assert s.get_value().dtype == np.float32
    with pytest.raises(TypeError, match="dimensions"):
        s.set_value(np.ones((2, 2), np.float32))
    with pytest.raises(TypeError, match="precision"):
        s.set_value(np.ones(2, np.float64))
    i = arignote.shared(0)
    i.set_value(3)
    with pytest.raises(TypeError):
        i.set_value(0.5)
    strict = arignote.shared(np.zeros(2), strict=True)
    with pytest.raises(TypeError, match="strict"):
        strict.set_value([1.0, 2.0])


# --- updates -------------------------------------------------------------------------------


def test_outputs_before_updates(mode: arignote.Mode) -> None:
    w = arignote.shared(1)
    x = T.iscalar("x")
    f = arignote.function([x], [w, w * 10], updates=[[w, w + x]], mode=mode)
    assert [int(v) for v in f(3)] == [1, 10]
    assert w.get_value() == 4
    assert [int(v) for v in f(1)] == [4, 40]
    assert w.get_value() == 5


def test_simultaneous_updates_and_shared_between_functions(mode: arignote.Mode) -> None:
    a = arignote.shared(np.array([1.0, 2.0]), name="a")
    b = arignote.shared(np.array([3.0, 4.0]), name="b")
    swap = arignote.function([], updates={a: b, b: a}, mode=mode)
    assert swap() == []
    np.testing.assert_array_equal(a.get_value(), [3.0, 4.0])
    np.testing.assert_array_equal(b.get_value(), [1.0, 2.0])
    # a second function reads and updates the same variable
    scale = arignote.function([], a.sum(), updates=[(a, a * 2)], mode=mode)
    assert scale() == 7.0
    swap()
    np.testing.assert_array_equal(a.get_value(), [1.0, 2.0])
    np.testing.assert_array_equal(b.get_value(), [6.0, 8.0])
    assert scale() == 3.0


def test_update_replaces_the_reference(mode: arignote.Mode) -> None:
    s = arignote.shared(np.zeros(2))
    before = s.get_value(borrow=True)
    copied = s.get_value()
    f = arignote.function([], updates=[(s, s + 1)], mode=mode)
    f()
    assert copied.tolist() == [0.0, 0.0]  # get_value() is a copy: never written to
    np.testing.assert_array_equal(s.get_value(), [1.0, 1.0])
    # native code computes the update in the stored array (`inplace-update`), which a
    # borrowed value then shows, as in Theano; the interpreter stores a new array
    in_place = mode.linker != "py"
    assert (s.get_value(borrow=True) is before) == in_place
    assert before.tolist() == ([1.0, 1.0] if in_place else [0.0, 0.0])
    # a borrowed value set from outside is read by the next call
    outside = np.array([5.0, 6.0])
    s.set_value(outside, borrow=True)
    f()
    np.testing.assert_array_equal(s.get_value(), [6.0, 7.0])


def test_update_errors() -> None:
    x = T.dscalar("x")
    s = arignote.shared(0.0)
    with pytest.raises(TypeError, match="update target must be a SharedVariable"):
        arignote.function([x], x, updates=[(x, x + 1)])
    with pytest.raises(TypeError, match="same type"):
        arignote.function([], updates=[(s, T.cast(s, "float32"))])
    f32 = arignote.shared(np.float32(0))
    with pytest.raises(TypeError, match="same type"):
        arignote.function([x], updates=[(f32, f32 + x)])  # float64 into float32
    v = arignote.shared(np.zeros(3))
    with pytest.raises(TypeError, match="broadcast"):
        arignote.function([], updates=[(v, v.dimshuffle("x", 0))])
    with pytest.raises(ValueError, match="already has an update"):
        arignote.function([], updates=[(s, s + 1), (s, s + 2)])
    with pytest.raises(TypeError, match="explicit input"):
        arignote.function([s], s + 1)
    with pytest.raises(TypeError):
        arignote.function([], updates=[(s, "text")])


def test_constant_update(mode: arignote.Mode) -> None:
    s = arignote.shared(np.ones(2))
    f = arignote.function([], updates=[(s, np.array([3.0, 4.0]))], mode=mode)
    f()
    np.testing.assert_array_equal(s.get_value(), [3.0, 4.0])


def test_default_update(mode: arignote.Mode) -> None:
    counter = arignote.shared(0, name="counter")
    counter.default_update = counter + 1
    total = arignote.shared(0, name="total")
    x = T.lscalar("x")
    f = arignote.function([x], x + counter, updates=[(total, total + x)], mode=mode)
    assert f(10) == 10 and f(10) == 11
    assert counter.get_value() == 2 and total.get_value() == 20
    g = arignote.function([x], x + counter, no_default_updates=True, mode=mode)
    g(0)
    assert counter.get_value() == 2
    h = arignote.function([x], x + counter, no_default_updates=[counter], mode=mode)
    h(0)
    assert counter.get_value() == 2
    # an explicit update wins over the default one
    k = arignote.function([], counter, updates=[(counter, counter * 3)], mode=mode)
    k()
    assert counter.get_value() == 6
    # a function that does not read the variable does not apply its default update
    arignote.function([x], x * 2, mode=mode)(1)
    assert counter.get_value() == 6


def test_default_update_type_error() -> None:
    s = arignote.shared(0)
    s.default_update = s + 0.5
    with pytest.raises(TypeError, match="same type"):
        arignote.function([], s)


# --- givens ----------------------------------------------------------------------------------


def test_givens_with_shared_dataset(mode: arignote.Mode) -> None:
    data = arignote.shared(np.arange(6.0).reshape(3, 2), name="data")
    x = T.dmatrix("x")
    w = arignote.shared(np.ones(2), name="w")
    cost = T.dot(x, w).sum()
    f = arignote.function([], cost, givens=[(x, data)], updates={w: w * 2}, mode=mode)
    assert f() == 15.0
    assert f() == 30.0
    data.set_value(np.ones((4, 2)))
    assert f() == 32.0


def test_givens_replacing_shared_and_intermediate(mode: arignote.Mode) -> None:
    state = arignote.shared(5)
    inc = T.iscalar("inc")
    foo = T.scalar(dtype=state.dtype)
    doubled = state * 2
    f = arignote.function([inc, foo], doubled + inc, givens={state: foo}, mode=mode)
    assert f(1, 3) == 7
    assert state.get_value() == 5
    y = T.lscalar("y")
    g = arignote.function([inc, y], doubled + inc, givens=[(doubled, y)], mode=mode)
    assert g(1, 100) == 101


GIVENS_LINKERS = ["py", "cvm"]


def _givens_mismatches() -> list[tuple[Any, Any, tuple[str, ...]]]:
    """(key, replacement, what the message names) for replacements Theano's rule refuses."""
    s = arignote.shared(np.ones(3), name="s")
    c = T.constant(np.ones(3))
    return [
        (s, np.ones(3, np.float32), ("s", "a value of shape (3,) and dtype float32", "dtypes")),
        (s, T.fvector("f"), ("s", "f", "the dtypes differ (float64 and float32")),
        (s, np.ones((2, 2)), ("s", "a value of shape (2, 2)", "dimensions differ (1 and 2)")),
        (s, T.matrix("m"), ("s", "m", "numbers of dimensions differ (1 and 2)")),
        (T.row("r"), T.matrix("m"), ("r", "m", "dimension 0 is broadcastable")),
        (c, T.constant(np.ones(4)), ("shape (3,), fixed", "of shape (4,)")),
        (c, s, ("shape (3,), fixed", "s of shape (?,)", "known only at run time")),
    ]


@pytest.mark.parametrize("index", range(7))
def test_givens_of_another_type_is_a_type_error_naming_both(index: int) -> None:
    key, value, named = _givens_mismatches()[index]
    with pytest.raises(TypeError) as info:
        arignote.function([], key * 2, givens={key: value})
    message = str(info.value)
    assert message.startswith(f"givens: cannot replace {key} ")
    for fragment in named:
        assert fragment in message, (fragment, message)
    with pytest.raises(TypeError, match="^clone: cannot replace"):
        arignote.clone(key * 2, replace={key: value})


@pytest.mark.parametrize("linker", GIVENS_LINKERS)
def test_givens_of_another_shape_runs_on_it(linker: str) -> None:
    """Shapes are not part of a type (Theano's rule): a shared variable holding 3
    values replaced by a constant (whose IR type has static lengths) of 4, or of 1
    (broadcastable where the shared variable is not, converted as Theano's
    `patternbroadcast` does), computes on the replacement."""
    mode = arignote.Mode(linker=linker)
    s = arignote.shared(np.ones(3), name="s")
    x = T.vector("x")
    four = T.constant(np.arange(4.0))
    f = arignote.function([], s * 2, givens={s: four}, mode=mode)
    np.testing.assert_array_equal(f(), np.arange(4.0) * 2)
    g = arignote.function([], [s * 2, s.sum()], givens={s: T.constant(np.ones(1))}, mode=mode)
    np.testing.assert_array_equal(g()[0], [2.0])
    h = arignote.function([x], x + s, givens={s: T.zeros((3,))}, mode=mode)
    np.testing.assert_array_equal(h(np.arange(3.0)), np.arange(3.0))
    # a length that does not fit the rest of the graph is a run-time shape error
    k = arignote.function([x], x + s, givens={s: four}, mode=mode)
    with pytest.raises(ValueError, match=r"operand shapes \(3,\) and \(4,\) do not match"):
        k(np.ones(3))
    t = arignote.clone(s * 2, replace={s: four})
    np.testing.assert_array_equal(arignote.function([], t, mode=mode)(), np.arange(4.0) * 2)


def test_givens_errors() -> None:
    x = T.dscalar("x")
    y = T.dscalar("y")
    with pytest.raises(TypeError, match="must be Variables"):
        arignote.function([y], x * 2, givens={"x": y})
    with pytest.raises(TypeError, match="the dtypes differ"):
        arignote.function([], x * 2, givens={x: T.fscalar()})
    with pytest.raises(RuntimeError, match="is an input to your function"):
        arignote.function([x], x * 2, givens={x: y})
    with pytest.raises(TypeError, match="givens must be"):
        arignote.function([y], x * 2, givens=y)
    with pytest.raises(MissingInputError):
        # a given that replaces nothing is ignored
        arignote.function([y], x * 2, givens={T.dscalar(): y}, on_unused_input="ignore")


# --- In, Out ---------------------------------------------------------------------------------


def test_in_defaults_and_keywords(mode: arignote.Mode) -> None:
    x, y, w = T.dscalars("x", "y", "w")
    f = arignote.function(
        [x, arignote.In(y, value=1), arignote.In(w, value=2, name="w_by_name")],
        (x + y) * w,
        mode=mode,
    )
    assert f(33) == 68.0
    assert f(33, 2) == 70.0
    assert f(33, 0, 1) == 33.0
    assert f(33, w_by_name=1) == 34.0
    assert f(x=33, y=0, w_by_name=1) == 33.0
    assert f(33, w_by_name=1, y=0) == 33.0
    with pytest.raises(TypeError, match="^Missing required input: x$"):
        f()
    with pytest.raises(TypeError, match=r"Unknown input or state: w\. .*\(x, y, w_by_name\)"):
        f(1, w=1)
    assert f["y"] == 1 and f[w] == 2
    f["y"] = 10
    assert f(0) == 20.0


def test_in_update_and_strict(mode: arignote.Mode) -> None:
    x = T.dscalar("x")
    acc = T.dscalar("acc")
    f = arignote.function([x, arignote.In(acc, value=0.0, update=acc + x)], acc + x, mode=mode)
    assert f(1) == 1.0 and f(2) == 3.0 and f["acc"] == 3.0
    s = T.dvector("s")
    g = arignote.function([arignote.In(s, strict=True)], s * 2, mode=mode)
    np.testing.assert_array_equal(g(np.ones(2)), [2.0, 2.0])
    with pytest.raises(TypeError, match="strict"):
        g([1.0, 2.0])


def test_in_allow_downcast() -> None:
    v = T.fvector("v")
    f = arignote.function([arignote.In(v, allow_downcast=True)], v * 2)
    np.testing.assert_allclose(f(np.array([0.1])), [0.2], rtol=1e-6)
    assert f(np.array([0.1])).dtype == np.float32


def test_out_borrow(mode: arignote.Mode) -> None:
    x = T.dvector("x")
    f = arignote.function([x], [arignote.Out(x * 2, borrow=True), x], mode=mode)
    data = np.arange(3.0)
    doubled, same = f(data)
    np.testing.assert_array_equal(doubled, [0.0, 2.0, 4.0])
    assert same is not data  # an input returned as an output is a copy
    g = arignote.function([x], arignote.Out(x + 1), mode=mode)
    np.testing.assert_array_equal(g(data), [1.0, 2.0, 3.0])


# --- Function.copy -------------------------------------------------------------------------


def test_copy_swap_and_delete_updates(mode: arignote.Mode) -> None:
    state = arignote.shared(0, name="state")
    other = arignote.shared(100, name="other")
    inc = T.lscalar("inc")
    acc = arignote.function([inc], state, updates=[(state, state + inc)], mode=mode, name="acc")
    same = acc.copy()
    assert same.name == "acc copy"
    assert acc(0) == 0 and same(5) == [0]  # a copy returns a list, as Theano's
    assert state.get_value() == 5  # a copy shares the shared variables
    swapped = acc.copy(swap={state: other})
    assert swapped(3) == [100]
    assert other.get_value() == 103 and state.get_value() == 5
    acc(1)
    assert state.get_value() == 6 and other.get_value() == 103
    frozen = acc.copy(delete_updates=True, name="frozen")
    assert frozen.name == "frozen"
    assert frozen(10) == [6] and state.get_value() == 6
    frozen_swapped = swapped.copy(delete_updates=True)
    assert frozen_swapped(1) == [103] and other.get_value() == 103
    with pytest.raises(ValueError, match="not found"):
        acc.copy(swap={arignote.shared(0): other})
    with pytest.raises(TypeError, match="conflicts"):
        acc.copy(swap={state: arignote.shared(0.0)})


def test_copy_keeps_defaults(mode: arignote.Mode) -> None:
    x = T.dscalar("x")
    y = T.dscalar("y")
    f = arignote.function([x, arignote.In(y, value=2.0)], x * y, mode=mode)
    g = f.copy()
    g["y"] = 3.0
    assert f(1) == 2.0 and g(1) == [3.0]


# --- eval, clone -----------------------------------------------------------------------------


def test_eval() -> None:
    x = T.dscalar("x")
    y = T.dscalar("y")
    z = x + y
    assert z.eval({x: 1.0, y: 2.0}) == 3.0
    assert z.eval({y: 5.0, x: 1.0}) == 6.0
    assert len(z._fn_cache) == 1  # compiled once per set of inputs
    s = arignote.shared(np.arange(3.0))
    np.testing.assert_array_equal((s * 2).eval(), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(s.eval(), [0.0, 1.0, 2.0])
    with pytest.raises(MissingInputError):
        z.eval({x: 1.0})
    with pytest.raises(UnusedInputError):
        x.eval({x: 1.0, y: 2.0})
    with pytest.raises(TypeError, match="dict"):
        z.eval([1.0, 2.0])


def test_clone() -> None:
    x = T.dscalar("x")
    y = T.dscalar("y")
    s = arignote.shared(10.0, name="s")
    z = (x + 1) * s
    z2 = arignote.clone(z, replace={x: y * 2})
    assert z2 is not z
    f = arignote.function([x, y], [z, z2], mode=arignote.Mode(linker="py"))
    assert [float(v) for v in f(1, 3)] == [20.0, 70.0]
    # the replacement is not itself substituted
    [w] = arignote.clone([x * 3], replace=[(x, x + 1)])
    assert w.eval({x: 1.0}) == 6.0
    # share_inputs=False makes new inputs; shared clones share the value
    z3 = arignote.clone(z, share_inputs=False)
    inputs = arignote.graph.graph_inputs([z3])
    assert all(i is not x and i is not s for i in inputs)
    assert {i.name for i in inputs} == {"x", "s"}
    shared_clone = next(i for i in inputs if isinstance(i, arignote.SharedVariable))
    s.set_value(2.0)
    assert shared_clone.get_value() == 2.0
    with pytest.raises(TypeError, match="the dtypes differ"):
        arignote.clone(z, replace={x: T.fscalar()})
    with pytest.raises(ValueError, match="neither"):
        arignote.clone(z, replace=x)
