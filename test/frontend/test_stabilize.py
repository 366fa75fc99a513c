"""The `stabilize` rewrites keep saturating expressions finite, in values and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import arignote
import arignote.tensor as T


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_logistic_cross_entropy_saturates_finitely(linker: str) -> None:
    z = T.fvector("z")
    y = T.fvector("y")
    p = 1 / (1 + T.exp(-z))
    xent = -y * T.log(p) - (1 - y) * T.log(1 - p)
    cost = xent.sum()
    gz = arignote.grad(cost, z)
    f = arignote.function([z, y], [xent, gz], mode=arignote.Mode(linker=linker))
    zs = np.array([-200.0, -30.0, 0.0, 30.0, 200.0], np.float32)
    ys = np.array([1.0, 1.0, 0.0, 0.0, 0.0], np.float32)
    err, grad = f(zs, ys)
    assert np.isfinite(err).all() and np.isfinite(grad).all()
    # the exact values: softplus(-z) where y = 1, softplus(z) where y = 0
    expected = np.where(ys == 1, np.logaddexp(0, -zs), np.logaddexp(0, zs))
    np.testing.assert_allclose(err, expected, rtol=1e-5)
    np.testing.assert_allclose(grad, 1 / (1 + np.exp(-zs.astype(np.float64))) - ys, atol=1e-6)


@pytest.mark.parametrize("linker", ["py", "cvm"])
def test_exp_minus_one_and_log1p_forms(linker: str) -> None:
    x = T.dvector("x")
    f = arignote.function(
        [x], [T.exp(x) - 1, T.log(1 + x), T.log(1 + T.exp(x))], mode=arignote.Mode(linker=linker)
    )
    a = np.array([1e-12, -1e-12, 800.0, -800.0])
    em1, l1p, sp = f(a)
    np.testing.assert_allclose(em1[:2], np.expm1(a[:2]), rtol=1e-12)
    np.testing.assert_allclose(l1p[:2], np.log1p(a[:2]), rtol=1e-12)
    np.testing.assert_allclose(sp, np.logaddexp(0, a), rtol=1e-12)


def test_fast_compile_does_not_stabilize() -> None:
    x = T.dvector("x")
    f = arignote.function([x], T.log(1 + T.exp(x)), mode="FAST_COMPILE")
    assert "softplus" not in str(f.maker.fgraph.toposort())
    g = arignote.function([x], T.log(1 + T.exp(x)))
    assert "softplus" in str(g.maker.fgraph.toposort())


def test_grad_stabilizes_a_copy_of_the_loss_alone() -> None:
    """`grad` rewrites a copy of the ops a stabilize pattern is for and those below them
    up to the cost: the layers under the loss are shared by the cost and its gradient
    (one `dot` per layer in the function, not two), the user's graph is left as built,
    and the gradient is that of the stable form."""
    from arignote.graph import ancestors

    rng = np.random.default_rng(0)
    x, y = T.dmatrix("x"), T.ivector("y")
    h, params = x, []
    for i in range(3):
        w = arignote.shared(rng.standard_normal((4, 4)) * 0.5, name=f"w{i}")
        params.append(w)
        h = T.tanh(T.dot(h, w))
    p = T.nnet.softmax(h)
    cost = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    before = [op.name for op in ancestors([cost.value])]
    grads = arignote.grad(cost, params)
    assert [op.name for op in ancestors([cost.value])] == before  # the user's graph
    graph = ancestors([cost.value] + [g.value for g in grads])
    assert sum(op.name == "ag.tanh" for op in graph) == 3  # shared, not copied
    assert "ag.logsoftmax" in {op.name for op in graph}  # the stable form's gradient
    f = arignote.function([x, y], [cost, *grads], mode=arignote.Mode(linker="py"))
    emitted = f.module
    # 3 forward, 2 backward per layer but the first (x is no wrt); a copied forward
    # pass made it 11
    assert sum(op.name == "ag.dot" for op in emitted.walk()) == 3 + 2 * 3 - 1
    xs, ys = rng.standard_normal((5, 4)), np.array([0, 1, 2, 3, 0], np.int32)
    c, *gs = f(xs, ys)

    def loss(ws: list[np.ndarray]) -> float:
        a = xs
        for w in ws:
            a = np.tanh(a @ w)
        a = a - a.max(axis=1, keepdims=True)
        logp = a - np.log(np.exp(a).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(5), ys].mean())

    ws = [w.get_value() for w in params]
    assert c == pytest.approx(loss(ws), rel=1e-12)
    for k, g in enumerate(gs):  # central differences, error O(eps**2)
        numeric = np.zeros_like(ws[k])
        for idx in np.ndindex(*ws[k].shape):
            up = [w.copy() for w in ws]
            down = [w.copy() for w in ws]
            up[k][idx] += 1e-6
            down[k][idx] -= 1e-6
            numeric[idx] = (loss(up) - loss(down)) / 2e-6
        np.testing.assert_allclose(g, numeric, atol=1e-7)


def test_grad_copies_nothing_when_no_pattern_applies() -> None:
    x = T.dvector("x")
    w = arignote.shared(np.ones(3), name="w")
    cost = T.sum(T.tanh(x * w) ** 2)
    from arignote.graph import ancestors

    forward = {id(op) for op in ancestors([cost.value])}
    (g,) = arignote.grad(cost, [w])
    # every op the gradient reads beside its own is one of the cost's
    new = [op for op in ancestors([g.value]) if id(op) not in forward]
    assert all(op.name != "ag.tanh" for op in new)


def test_grad_stabilizes_a_scan_step_too() -> None:
    """A `log(sigmoid)` in a scan's step is differentiated in its stable form, finite at
    ±800: `grad` copies a scan holding a pattern's op (and what reads it), and the
    scan's gradient differentiates its step through `grad` too."""
    from arignote.graph import ancestors

    x = T.dvector("x")
    w = arignote.shared(np.array(1.0), name="w")

    def step(x_t, acc):
        return acc + T.log(1 / (1 + T.exp(-w * x_t)))

    out, _ = arignote.scan(step, sequences=x, outputs_info=T.constant(0.0))
    cost = -out[-1]
    g = arignote.grad(cost, w)
    names = [inner.name for op in ancestors([g.value]) for inner in op.walk()]
    assert "ag.softplus" in names  # log(sigmoid(z)) = -softplus(-z), in the copied step
    f = arignote.function([x], [cost, g])
    xs = np.array([-800.0, 2.0, 800.0])
    c, d = f(xs)
    np.testing.assert_allclose(c, np.logaddexp(0, -xs).sum(), rtol=1e-12)
    np.testing.assert_allclose(d, (-xs * np.exp(-np.logaddexp(0, xs))).sum(), rtol=1e-12)
