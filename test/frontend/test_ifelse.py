"""`arignote.ifelse`: Theano's lazy conditional, on both linkers and in every mode.

Laziness is proven with branches that would fail: an operand-shape mismatch or an index
out of range in the branch that is not taken must not raise, in the interpreter and in
native code (where the shape function must not run the other branch's checks either).
"""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.compile.debugmode import DebugMode
from arignote.ifelse import IfElse, ifelse

LINKERS = ["py", "cvm"]


def _mode(linker: str, optimizer: str = "fast_run") -> arignote.Mode:
    return arignote.Mode(linker=linker, optimizer=optimizer)


# --- the frontend --------------------------------------------------------------------------


def test_result_forms_and_graph_view() -> None:
    c = T.scalar("c")
    x, y = T.vectors("x", "y")
    z = ifelse(c, x, y, name="pick")
    assert isinstance(z.owner.op, IfElse)
    assert str(z.owner.op) == "if{pick}"
    assert z.owner.inputs == [c, x, y]
    assert z.type == x.type
    pair = ifelse(c, [x, T.sum(x)], [y, T.sum(y)])
    assert isinstance(pair, list) and len(pair) == 2
    assert pair[0].owner.op.n_outs == 2
    triple = ifelse(c, (x,), (y,))
    assert isinstance(triple, tuple) and len(triple) == 1
    assert "if{}" in arignote.printing.debugprint(ifelse(c, x, y), file="str")


def test_errors() -> None:
    c = T.scalar("c")
    x, y = T.vectors("x", "y")
    with pytest.raises(ValueError, match="same number of variables"):
        ifelse(c, [x, y], [x])
    with pytest.raises(TypeError, match="identical types"):
        ifelse(c, x, T.matrix("m"))
    with pytest.raises(TypeError, match="identical types"):
        ifelse(c, x, T.ivector("i"))
    with pytest.raises(TypeError, match="identical types"):
        ifelse(c, x, T.row("r")[0:1, :].dimshuffle(1, 0))  # broadcastable pattern differs
    with pytest.raises(TypeError, match="has to be a scalar"):
        ifelse(x, x, y)


def test_number_branch_takes_the_other_dtype() -> None:
    c = T.iscalar("c")
    s = T.fscalar("s")
    z = ifelse(c, s, 0)
    assert z.dtype == "float32"
    f = arignote.function([c, s], z)
    assert f(0, 2.5) == 0.0 and f(3, 2.5) == np.float32(2.5)


def test_branch_only_ops_are_placed_in_the_regions() -> None:
    a, b = T.scalars("a", "b")
    x, y = T.matrices("x", "y")
    shared = T.sum(x)  # used by the condition too: must stay outside
    z = ifelse(T.lt(a, shared), T.mean(x) + shared, T.mean(y))
    f = arignote.function([a, b, x, y], z, on_unused_input="ignore", mode=_mode("py"))
    func = f.maker.fgraph.func
    top = [op.name for op in func.body.ops]
    assert top.count("ag.reduce_sum") == 1  # the shared sum; the means are in the regions
    (if_op,) = [op for op in func.body.ops if op.name == "ag.if"]
    then_names = [op.name for op in if_op.regions[0].ops]
    else_names = [op.name for op in if_op.regions[1].ops]
    assert "ag.reduce_sum" in then_names and "ag.reduce_sum" in else_names
    nodes = [str(n.op) for n in f.maker.fgraph.toposort()]
    assert nodes[-1] == "if{}" and "Sum{axis=(0, 1)}" in nodes


def test_test_values_follow_the_taken_branch() -> None:
    with arignote.change_flags(compute_test_value="raise"):
        c = T.iscalar("c")
        x = T.vector("x")
        c.tag.test_value = np.int32(0)
        x.tag.test_value = np.arange(3.0)
        z = ifelse(c, x[2], x[1])
        assert z.tag.test_value == 1.0
        c.tag.test_value = np.int32(4)
        assert ifelse(c, x[2], x[1]).tag.test_value == 2.0


# --- results, both linkers -------------------------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_values_and_shapes(linker: str) -> None:
    c = T.iscalar("c")
    x = T.vector("x")
    y = T.vector("y")
    # branch shapes differ (x[1:] vs y): the shape function computes the condition
    z, total = ifelse(c, [x[1:] * 2, T.sum(x)], [y, T.sum(y) + 1])
    w = z.sum() + total  # the if results are also used further (not only returned)
    f = arignote.function([c, x, y], [z, total, w], mode=_mode(linker))
    xs, ys = np.arange(4.0), np.ones(2)
    r = f(1, xs, ys)
    np.testing.assert_allclose(r[0], [2.0, 4.0, 6.0])
    assert r[1] == 6.0 and r[2] == 18.0
    r = f(0, xs, ys)
    np.testing.assert_allclose(r[0], [1.0, 1.0])
    assert r[1] == 3.0 and r[2] == 5.0


@pytest.mark.parametrize("linker", LINKERS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int8", "bool"])
def test_condition_dtypes(linker: str, dtype: str) -> None:
    c = T.scalar("c", dtype=dtype)
    x = T.matrix("x")
    f = arignote.function([c, x], ifelse(c, x, -x), mode=_mode(linker))
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(f(np.array(1, dtype=dtype), m), m)
    np.testing.assert_array_equal(f(np.array(0, dtype=dtype), m), -m)
    if dtype.startswith("float"):
        np.testing.assert_array_equal(f(np.array(np.nan, dtype=dtype), m), m)  # NaN is true


@pytest.mark.parametrize("linker", LINKERS)
def test_nested_and_repeated_values(linker: str) -> None:
    a, b = T.iscalars("a", "b")
    x = T.vector("x")
    inner = ifelse(b, x + 1, x * 3)
    z, z2, z3 = ifelse(a, [inner, inner, x], [x, x * 0, inner.sum() + x])
    f = arignote.function([a, b, x], [z, z2, z3], mode=_mode(linker))
    xs = np.array([1.0, 2.0])
    for av, bv in [(1, 1), (1, 0), (0, 1), (0, 0)]:
        expected_inner = xs + 1 if bv else xs * 3
        got = f(av, bv, xs)
        if av:
            expected = [expected_inner, expected_inner, xs]
        else:
            expected = [xs, xs * 0, expected_inner.sum() + xs]
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(g, e)


# --- laziness -----------------------------------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_shape_mismatch_in_the_branch_not_taken(linker: str) -> None:
    c = T.iscalar("c")
    x, y = T.vectors("x", "y")
    f = arignote.function([c, x, y], ifelse(c, x + y, x), mode=_mode(linker))
    xs, ys = np.ones(3), np.ones(4)
    np.testing.assert_array_equal(f(0, xs, ys), xs)  # x + y would fail: not computed
    with pytest.raises(ValueError, match="differ|do not match"):
        f(1, xs, ys)
    np.testing.assert_array_equal(f(1, xs, np.ones(3)), 2 * xs)


@pytest.mark.parametrize("linker", LINKERS)
def test_index_out_of_range_in_the_branch_not_taken(linker: str) -> None:
    i = T.lscalar("i")
    x = T.vector("x")
    # the condition is computed from the inputs: i < len(x)
    f = arignote.function([i, x], ifelse(T.lt(i, x.shape[0]), x[i], x[0] * 0), mode=_mode(linker))
    xs = np.array([5.0, 6.0, 7.0])
    assert f(2, xs) == 7.0
    assert f(10, xs) == 0.0  # x[10] is out of range but not taken


@pytest.mark.parametrize("linker", LINKERS)
def test_failing_branch_with_equal_shapes(linker: str) -> None:
    # both branches yield a scalar: with checks in the branch, the condition is still
    # computed in the shape function, so the failing branch's checks do not run
    c = T.iscalar("c")
    x, y = T.vectors("x", "y")
    f = arignote.function([c, x, y], ifelse(c, T.sum(x * y), T.sum(x)), mode=_mode(linker))
    assert f(0, np.ones(3), np.ones(5)) == 3.0
    with pytest.raises(ValueError):
        f(1, np.ones(3), np.ones(5))


def test_uncomputable_condition_with_differing_shapes_is_not_implemented() -> None:
    a = T.iscalar("a")
    x, y = T.vectors("x", "y")
    c2 = ifelse(a, T.sum(x), T.sum(y))  # a condition from another ifelse's result
    z = ifelse(T.gt(c2, 0), x[1:], y)
    with pytest.raises(NotImplementedError, match="condition cannot be computed"):
        arignote.function([a, x, y], z, mode=_mode("cvm"))
    f = arignote.function([a, x, y], z, mode=_mode("py"))
    np.testing.assert_array_equal(f(1, np.ones(3), -np.ones(2)), np.ones(2))


# --- modes ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "mode", [DebugMode(), arignote.Mode(optimizer="fast_compile"), _mode("py", "fast_compile")]
)
def test_modes(mode: arignote.Mode) -> None:
    c = T.iscalar("c")
    x, y = T.vectors("x", "y")
    f = arignote.function([c, x, y], ifelse(c, T.exp(x) + y, x), mode=mode)
    xs = np.array([0.0, 1.0])
    np.testing.assert_allclose(f(1, xs, np.ones(2)), np.exp(xs) + 1)
    np.testing.assert_allclose(f(0, xs, np.ones(3)), xs)  # lazy in every mode


def test_cse_keeps_branch_ops_in_their_regions() -> None:
    c = T.iscalar("c")
    x, y = T.vectors("x", "y")
    # the same expression written in both branches: cse must not merge them outside
    z = ifelse(c, T.sum(x + y), T.sum(x + y) * 2)
    f = arignote.function([c, x, y], z)
    (if_op,) = [op for op in f.maker.fgraph.func.body.ops if op.name == "ag.if"]
    assert all(any(op.name == "ag.add" for op in r.ops) for r in if_op.regions)
    assert f(1, np.ones(2), np.ones(2)) == 4.0
    assert f(0, np.ones(2), np.ones(2)) == 8.0


# --- gradient -------------------------------------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_grad_of_both_branches(linker: str) -> None:
    c = T.iscalar("c")
    x, y = T.vectors("x", "y")
    cost = ifelse(c, T.sum(x * y), T.sum(x + 2 * y))
    gx, gy = arignote.grad(cost, [x, y])
    f = arignote.function([c, x, y], [gx, gy], mode=_mode(linker))
    xs, ys = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    g = f(1, xs, ys)
    np.testing.assert_allclose(g[0], ys)
    np.testing.assert_allclose(g[1], xs)
    g = f(0, xs, ys)
    np.testing.assert_allclose(g[0], [1.0, 1.0])
    np.testing.assert_allclose(g[1], [2.0, 2.0])


@pytest.mark.parametrize("positive", [True, False])
def test_verify_grad(positive: bool) -> None:
    rng = np.random.default_rng(0)

    def fun(x: T.Variable, y: T.Variable) -> T.Variable:
        a, b = ifelse(T.gt(T.sum(x), 0), [T.tanh(x) * y, T.sum(y)], [x**2, T.sum(x * y)])
        return a * b

    x0 = rng.uniform(0.1, 1.0, size=(3,)) * (1 if positive else -1)
    arignote.gradient.verify_grad(fun, [x0, rng.uniform(-1, 1, size=(3,))], rng=rng)


# --- shared variables, updates, givens, clone -------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_shared_branch_values_and_updates(linker: str) -> None:
    c = T.iscalar("c")
    w = arignote.shared(np.array([1.0, 2.0]), name="w")
    count = arignote.shared(np.int64(0), name="count")
    step = ifelse(c, w * 2, w)  # a shared variable as a branch value
    f = arignote.function(
        [c], step, updates=[(count, ifelse(c, count + 1, count))], mode=_mode(linker)
    )
    np.testing.assert_array_equal(f(1), [2.0, 4.0])
    np.testing.assert_array_equal(f(0), [1.0, 2.0])
    f(5)
    assert count.get_value() == 2


@pytest.mark.parametrize("linker", LINKERS)
def test_givens_and_clone_reach_into_branches(linker: str) -> None:
    c = T.iscalar("c")
    x, y = T.vectors("x", "y")
    z = ifelse(c, T.sum(x), T.sum(y))
    u = T.vector("u")
    f = arignote.function([c, u, y], z, givens={x: u * 10}, mode=_mode(linker))
    assert f(1, np.ones(2), np.ones(3)) == 20.0
    z2 = arignote.clone(z, replace={y: u + 1})
    g = arignote.function([c, x, u], z2, mode=_mode(linker))
    assert g(0, np.ones(2), np.ones(3)) == 6.0


def test_index_computed_by_ifelse() -> None:
    c = T.iscalar("c")
    i, j = T.lscalars("i", "j")
    x = T.vector("x")
    w = x[ifelse(c, i, j)]
    f = arignote.function([c, i, j, x], w, mode=_mode("py"))
    assert f(1, 2, 0, np.arange(3.0)) == 2.0 and f(0, 2, 0, np.arange(3.0)) == 0.0
    # the shape function would need the value of the ag.if result
    with pytest.raises(NotImplementedError, match="needs the value of ag.if"):
        arignote.function([c, i, j, x], w, mode=_mode("cvm"))


@pytest.mark.parametrize("linker", LINKERS)
def test_specialize_rewrites_inside_a_branch(linker: str) -> None:
    c = T.iscalar("c")
    m, x = T.matrix("m"), T.vector("x")
    f = arignote.function([c, m, x], ifelse(c, T.dot(m, x) * 2, x), mode=_mode(linker))
    (if_op,) = [op for op in f.maker.fgraph.func.body.ops if op.name == "ag.if"]
    assert [op.name for op in if_op.regions[0].ops] == ["ag.constant", "ag.gemv", "ag.yield"]
    np.testing.assert_allclose(f(1, np.eye(2), np.ones(2)), [2.0, 2.0])
    np.testing.assert_allclose(f(0, np.eye(3), np.ones(2)), [1.0, 1.0])  # gemv not run


@pytest.mark.parametrize("linker", LINKERS)
def test_static_lengths_that_differ_join(linker: str) -> None:
    c = T.iscalar("c")
    x = T.vector("x")
    z = ifelse(c, np.array([1.0, 2.0, 3.0]), x)  # tensor<3xf64> and tensor<?xf64>
    assert z.type == x.type
    zeros = ifelse(c, T.zeros((2,)), T.ones((3,)))  # tensor<2xf64> and tensor<3xf64>
    f = arignote.function([c, x], [z, zeros * 2], mode=_mode(linker))
    r = f(1, np.ones(5))
    np.testing.assert_array_equal(r[0], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(r[1], [0.0, 0.0])
    r = f(0, np.ones(5))
    np.testing.assert_array_equal(r[0], np.ones(5))
    np.testing.assert_array_equal(r[1], [2.0, 2.0, 2.0])


def test_nanguard_names_the_node_inside_a_branch() -> None:
    from arignote.compile.monitoring import NanGuardError, NanGuardMode

    c = T.iscalar("c")
    x = T.vector("x")
    f = arignote.function(
        [c, x], ifelse(c, T.log(x), x), mode=NanGuardMode(nan_is_error=True, inf_is_error=True)
    )
    np.testing.assert_array_equal(f(0, -np.ones(2)), -np.ones(2))  # log not run: no NaN
    with pytest.raises(NanGuardError) as info:
        f(1, -np.ones(2))
    assert "ag.log" in str(info.value)
