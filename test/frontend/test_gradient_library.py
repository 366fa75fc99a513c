"""Theano's `theano.gradient` library (issue 13 item 6): the gradient markers
(`zero_grad`, `disconnected_grad`, `undefined_grad`, `grad_clip`, `grad_scale`,
`consider_constant`), `NullType` gradients (`grad_undefined`, `grad_not_implemented`,
`NullTypeGradError`), `subgraph_grad`, `jacobian`/`hessian` of run-time lengths, the
R operator, integer inputs and `verify_grad`'s arguments, on both linkers."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote import gradient as G

LINKERS = ["py", "cvm"]


def _fn(inputs, outputs, linker):
    return arignote.function(inputs, outputs, mode=arignote.Mode(linker=linker))


@pytest.mark.parametrize("linker", LINKERS)
def test_markers_change_only_the_gradient(linker: str) -> None:
    x, m = T.dscalars("x", "m")
    fx = T.sin(x)
    outs = [
        G.grad_clip(x, -1, 1) ** 2,  # the value is x**2
        G.grad(G.grad_clip(x, -1, 1) ** 2, x),  # Theano's docstring example: 1.0
        G.grad(G.grad_scale(fx, -1.0), x),  # -cos(x)
        G.grad(G.grad_scale(fx, m), x),  # a symbolic multiplier
        G.grad(G.zero_grad(x) * x, x),  # only the unmarked factor: x
        G.grad(G.disconnected_grad(x) * x, x),  # the same, through the graph cut
        G.zero_grad(x) + G.disconnected_grad(x) + G.undefined_grad(x),
    ]
    r = _fn([x, m], outs, linker)(2.0, 3.0)
    np.testing.assert_allclose(r, [4.0, 1.0, -np.cos(2.0), 3 * np.cos(2.0), 2.0, 2.0, 6.0])


def test_marker_connectivity_and_errors() -> None:
    x, y = T.dscalars("x", "y")
    # zero_grad: connected, zero; disconnected_grad: disconnected (Theano's rules)
    assert G.grad(G.zero_grad(x) * 2, x).eval({x: 1.0}) == 0.0
    with pytest.raises(G.DisconnectedInputError, match="not part of the computational graph"):
        G.grad(G.disconnected_grad(x) * 2, x)
    out = G.grad(
        G.disconnected_grad(x) * 2,
        x,
        disconnected_inputs="ignore",
        return_disconnected="Disconnected",
    )
    assert isinstance(out, G.DisconnectedType)
    # undefined_grad: NullTypeGradError naming the op, or the NullType itself
    with pytest.raises(G.NullTypeGradError, match="UndefinedGrad op is mathematically undefined"):
        G.grad(T.exp(G.undefined_grad(x)) * y, [y, x])
    null = G.grad(G.undefined_grad(x) * 2, x, null_gradients="return")
    assert isinstance(null, G.NullType) and "undefined" in null.why_null
    assert issubclass(G.NullTypeGradError, TypeError)
    # y does not go through the marker: its gradient is fine
    assert G.grad(G.undefined_grad(x) * y, y).eval({x: 3.0, y: 1.0}) == 3.0
    with pytest.raises(AssertionError, match="upper_bound"):
        G.grad_clip(x, 1, -1)
    with pytest.warns(DeprecationWarning, match="consider_constant\\(\\) is deprecated"):
        c = G.consider_constant(x)
    assert G.grad(c * x, x).eval({x: 5.0}) == 5.0


def test_grad_not_implemented_names_the_op() -> None:
    x = T.dscalar("x")
    null = G.grad_not_implemented("MyOp", 0, x, "see issue 1")
    assert isinstance(null, G.NullType)
    assert null.why_null == (
        "This variable is Null because the grad method for input 0 (x) of the MyOp op "
        "is not implemented. see issue 1"
    )
    assert "mathematically undefined" in G.grad_undefined("MyOp", 1, x).why_null
    assert null() is null  # Theano spells it NullType(why)()


def test_op_without_rule_is_a_null_type_grad_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from arignote.dialects import ag
    from arignote.tensor.grad_rules import RULES

    monkeypatch.delitem(RULES, ag.TanhOp)
    x = T.dscalar("x")
    with pytest.raises(G.NullTypeGradError, match=r"input 0 \(x\) of the ag.tanh .* not impl"):
        G.grad(T.tanh(x) * 2, x)
    # a variable that does not go through the op is unaffected
    assert G.grad(T.tanh(x) + x, x, null_gradients="return").why_null


def test_subgraph_grad_matches_grad() -> None:
    # Theano's docstring example: backpropagate one layer at a time.
    rng = np.random.default_rng(0)
    x, t = T.dvectors("x", "t")
    w1 = arignote.shared(rng.standard_normal((3, 4)), name="w1")
    w2 = arignote.shared(rng.standard_normal((4, 2)), name="w2")
    a1 = T.tanh(T.dot(x, w1))
    a2 = T.tanh(T.dot(a1, w2))
    cost2 = T.sqr(a2 - t).sum() + T.sqr(w2.sum())
    cost1 = T.sqr(w1.sum())
    params, costs, ends = [[w2], [w1]], [cost2, cost1], [[a1], [x]]
    next_grad, param_grads = None, []
    for i in range(2):
        param_grad, next_grad = G.subgraph_grad(
            wrt=params[i], end=ends[i], start=next_grad, cost=costs[i]
        )
        next_grad = dict(zip(ends[i], next_grad, strict=True))
        param_grads.extend(param_grad)
    whole = G.grad(cost1 + cost2, [w2, w1])
    xv, tv = rng.standard_normal(3), rng.standard_normal(2)
    got = arignote.function([x, t], param_grads)(xv, tv)
    want = arignote.function([x, t], whole)(xv, tv)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
    wg, eg, sg, cg = G.subgraph_grad([w2], [a1], cost=cost2, details=True)
    assert sg is None and len(cg) == 2 and len(wg) == len(eg) == 1
    with pytest.raises(AssertionError, match="can't both be None"):
        G.subgraph_grad([w2], [a1])


@pytest.mark.parametrize("linker", LINKERS)
def test_jacobian_hessian_of_run_time_lengths(linker: str) -> None:
    x = T.dvector("x")
    a = T.dmatrix("a")
    y = T.exp(x) * x.sum()
    jx, ja = G.jacobian(T.dot(a, x) + y[:2], [x, a])
    h = G.hessian(T.sum(x**3) + T.sum(x[:2]) ** 2, x)
    f = _fn([x, a], [G.jacobian(y, x), jx, ja, h], linker)
    xv, av = np.array([0.1, 0.2, 0.3]), np.arange(6.0).reshape(2, 3)
    j, jxv, jav, hv = f(xv, av)
    np.testing.assert_allclose(j, np.diag(np.exp(xv)) * xv.sum() + np.exp(xv)[:, None])
    np.testing.assert_allclose(jxv, av + (np.diag(np.exp(xv)) * xv.sum() + np.exp(xv)[:, None])[:2])
    want_ja = np.zeros((2, 2, 3))
    want_ja[0, 0], want_ja[1, 1] = xv, xv
    np.testing.assert_allclose(jav, want_ja)
    np.testing.assert_allclose(hv, np.diag(6 * xv) + np.array([[2, 2, 0], [2, 2, 0], [0, 0, 0]]))
    # zero rows: an empty Jacobian of the right shape
    j0 = _fn([x], [G.jacobian(y, x), h], linker)(np.zeros(0))
    assert j0[0].shape == (0, 0) and j0[1].shape == (0, 0)


def test_jacobian_errors_and_disconnected() -> None:
    x, y = T.dvectors("x", "y")
    with pytest.raises(ValueError, match="1 dimensional variable as `expression`"):
        G.jacobian(T.outer(x, x), x)
    with pytest.raises(G.DisconnectedInputError):
        G.jacobian(x * 2, y)
    j = G.jacobian(x * 2, [x, y], disconnected_inputs="ignore")
    r = arignote.function([x, y], j)(np.ones(2), np.ones(3))
    np.testing.assert_allclose(r[0], 2 * np.eye(2))
    np.testing.assert_allclose(r[1], np.zeros((2, 3)))
    # linear cost: the Hessian is zeros (disconnected from the gradient: no error)
    h = G.hessian((x * 3).sum(), x)
    np.testing.assert_allclose(h.eval({x: np.ones(2)}), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1 dimensional variable as `wrt`"):
        G.hessian((x * 3).sum(), T.dmatrix())


def test_integer_inputs() -> None:
    # Theano: the gradient with respect to an integer variable is zeros of floatX
    # (the ops pass no gradient to integers); an integer cost is no error.
    i = T.ivector("i")
    x = T.dvector("x")
    gi, gx = G.grad((i * x).sum(), [i, x])
    assert gi.dtype == arignote.config.floatX and gx.dtype == "float64"
    r = arignote.function([i, x], [gi, gx])(np.array([1, 2], "int32"), np.array([3.0, 4.0]))
    np.testing.assert_allclose(r[0], [0.0, 0.0])
    np.testing.assert_allclose(r[1], [1.0, 2.0])
    gc = G.grad(i.sum(), i)
    np.testing.assert_allclose(gc.eval({i: np.array([1, 2], "int32")}), [0.0, 0.0])
    # a float input used only through integer results is connected, with zeros
    assert G.grad(T.cast(x, "int32").sum(), x).eval({x: np.array([1.5])})[0] == 0.0
    with pytest.raises(TypeError, match="known_grad of type"):
        G.grad(None, x, known_grads={x * 2: T.ivector()})
