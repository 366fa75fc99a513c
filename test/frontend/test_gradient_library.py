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


# --- the R operator -----------------------------------------------------------------------


def _rop_families(m, r, v):
    """One output per family of R rule (m: 3x4 matrix, r: 1x4 row, v: 4-vector)."""
    from arignote.ifelse import ifelse
    from arignote.tensor import subtensor as S

    return {
        # elementwise, with broadcasting
        "elementwise": T.sin(m) * T.exp(r) + T.maximum(m, r) ** 2 / (1 + T.tanh(m) ** 2),
        "select": T.switch(m > 0.2, m * r, T.sqr(r) - m),
        # linear ops
        "layout": m.T.sum(axis=0) + S.reshape(m, (4, 3))[1:3].sum() + m.dimshuffle(1, 0)[0],
        "indexing": S.inc_subtensor(m[1:], r * 2).sum(axis=1)
        + S.set_subtensor(m[0, 1:3], v[:2])[:, 2]
        + m[[2, 0, 2]].sum(axis=1),
        "join": S.concatenate([m, r, S.alloc(v.sum(), 2, 4)]).sum(axis=0)[:3],
        "dot": T.dot(m, v) + T.dot(m, T.dot(m.T, m)).sum(axis=1),
        # no R rule: the double-L-operator fallback
        "fallback": T.prod(m, axis=1) + T.max(m * r, axis=1) + ifelse(v.sum() > 0, m, -m)[:, 0],
    }


@pytest.mark.parametrize("linker", LINKERS)
def test_rop_matches_finite_differences(linker: str) -> None:
    m, r, v = T.dmatrix("m"), T.drow("r"), T.dvector("v")
    dm, dr, dv = T.dmatrix("dm"), T.drow("dr"), T.dvector("dv")
    families = _rop_families(m, r, v)
    outs = list(families.values())
    rops = G.Rop(outs, [m, r, v], [dm, dr, dv])
    assert isinstance(rops, list) and len(rops) == len(outs)
    f = _fn([m, r, v], outs, linker)
    frop = _fn([m, r, v, dm, dr, dv], rops, linker)
    rng = np.random.default_rng(7)
    point = [rng.uniform(0.1, 0.9, (3, 4)), rng.uniform(0.1, 0.9, (1, 4)), rng.uniform(0.1, 0.9, 4)]
    direction = [rng.standard_normal(p.shape) for p in point]
    eps = 1e-6  # central differences: error O(eps**2) + rounding O(1e-16 / eps)
    plus = f(*[p + eps * d for p, d in zip(point, direction, strict=True)])
    minus = f(*[p - eps * d for p, d in zip(point, direction, strict=True)])
    got = frop(*point, *direction)
    for name, g, a, b in zip(families, got, plus, minus, strict=True):
        np.testing.assert_allclose(g, (a - b) / (2 * eps), rtol=1e-6, atol=1e-6, err_msg=name)
    # the markers, as Theano's R_op: grad_clip and grad_scale pass the tangent (a view),
    # zero_grad gives zeros
    marked = G.grad_clip(m, -1, 1).sum(axis=1) * 2 + G.zero_grad(m).sum(axis=1)
    marked = marked + G.grad_scale(m, 3.0).sum(axis=1)
    got = _fn([m, dm], G.Rop(marked, m, dm), linker)(point[0], direction[0])
    np.testing.assert_allclose(got, 3 * direction[0].sum(axis=1), rtol=1e-12)


@pytest.mark.parametrize("linker", LINKERS)
def test_rop_of_a_scan(linker: str) -> None:
    # (regression: the double-L trick seeded the scan's gradient with zeros, which the
    # scan's rule drops: the result did not depend on the direction at all)
    x, w, dw = T.dvector("x"), T.dscalar("w"), T.dscalar("dw")
    hs, _ = arignote.scan(
        lambda x_t, h, w: T.tanh(h * w + x_t),
        sequences=x,
        outputs_info=T.constant(0.0),
        non_sequences=w,
    )
    f = _fn([x, w, dw], [hs, G.Rop(hs, w, dw)], linker)
    xv, wv, eps = np.array([0.1, 0.2, 0.3]), 0.7, 1e-6
    numeric = (f(xv, wv + eps, 0.0)[0] - f(xv, wv - eps, 0.0)[0]) / (2 * eps)
    np.testing.assert_allclose(f(xv, wv, 1.0)[1], numeric, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(f(xv, wv, 2.0)[1], 2 * numeric, rtol=1e-6, atol=1e-9)


def test_rop_disconnected_outputs() -> None:
    x, y = T.dvectors("x", "y")
    with pytest.raises(G.DisconnectedInputError, match="Rop method was asked"):
        G.Rop(y * 2, x, T.dvector())
    z = G.Rop([x * 2, y], x, T.dvector("vx"), disconnected_outputs="ignore")
    assert z[1].eval({y: np.ones(2)}).tolist() == [0.0, 0.0]
    assert G.Rop(y, x, x, disconnected_outputs="ignore", return_disconnected="None") is None
    d = G.Rop(y, x, x, disconnected_outputs="ignore", return_disconnected="Disconnected")
    assert isinstance(d, G.DisconnectedType)
    with pytest.warns(UserWarning, match="Rop method was asked"):
        G.Rop(y, x, x, disconnected_outputs="warn")
    # disconnected_grad cuts forward mode too (Theano's R_op: None)
    with pytest.raises(G.DisconnectedInputError):
        G.Rop(G.disconnected_grad(x) * 2, x, x)


# --- verify_grad's arguments ----------------------------------------------------------------


def test_verify_grad_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    from arignote.dialects import ag
    from arignote.tensor import grad_rules

    pt = [np.array([0.3, -0.2, 0.5])]
    # every documented argument, Theano's spelling (rng: numpy.random, as Theano's example)
    G.verify_grad(
        T.tanh,
        pt,
        n_tests=3,
        rng=np.random,
        eps=1e-6,
        out_type="float64",
        abs_tol=1e-5,
        rel_tol=1e-5,
        mode=arignote.Mode(linker="py"),
        cast_to_output_type=False,
        no_debug_ref=True,
    )
    G.verify_grad(T.tanh, pt, rng=np.random.default_rng(0))  # a Generator works too
    G.verify_grad(
        T.tanh,
        [p.astype("float32") for p in pt],
        rng=np.random.RandomState(1),
        cast_to_output_type=True,
    )
    with pytest.raises(TypeError, match="complex"):
        G.verify_grad(T.tanh, pt, rng=np.random.RandomState(0), out_type="complex64")

    def wrong_exp(op, inputs, outputs, gz):
        return [gz[0] * outputs[0] * 1.5]

    monkeypatch.setitem(grad_rules.RULES, ag.ExpOp, wrong_exp)
    with pytest.raises(G.verify_grad.E_grad) as info:
        G.verify_grad(T.exp, pt, rng=np.random.RandomState(0))
    err = info.value
    # Theano's order: val1 is the analytic gradient, val2 the numeric one
    assert err.val1 == pytest.approx(1.5 * err.val2, rel=1e-4)
    # a loose enough tolerance accepts it (only both tolerances exceeded fail)
    G.verify_grad(T.exp, pt, rng=np.random.RandomState(0), abs_tol=10.0, rel_tol=1e-9)


def test_theano_paths() -> None:
    # theano.tensor exports these theano.gradient names; theano exports Rop, Lop,
    # subgraph_grad
    for name in (
        "Rop",
        "Lop",
        "numeric_grad",
        "verify_grad",
        "jacobian",
        "hessian",
        "consider_constant",
        "grad",
    ):
        assert getattr(T, name) is getattr(G, name) or name == "grad"
    for name in ("Rop", "Lop", "grad", "subgraph_grad"):
        assert getattr(arignote, name) is getattr(G, name)
    assert T.verify_grad.E_grad is G.GradientError
    with pytest.raises(AttributeError):
        T.no_such_name  # noqa: B018


def test_known_grads_null_and_disconnected() -> None:
    x = T.dvector("x")
    y = T.exp(x)
    z = y * 2
    g = G.grad(None, x, known_grads={y: T.ones_like(y)})
    np.testing.assert_allclose(g.eval({x: np.zeros(2)}), [1.0, 1.0])
    # Theano allows NullType and DisconnectedType known gradients
    with pytest.raises(G.NullTypeGradError, match="not implemented"):
        G.grad(None, x, known_grads={y: G.grad_not_implemented("Foo", 0, y)})
    g = G.grad(None, x, known_grads={y: G.DisconnectedType(y), z: T.ones_like(z)})
    np.testing.assert_allclose(g.eval({x: np.zeros(2)}), [2.0, 2.0])
