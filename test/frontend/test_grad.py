"""`arignote.grad`, `Lop`/`Rop`, `jacobian`/`hessian` and `verify_grad`.

Every differentiable `ag` op is checked with `verify_grad` (symbolic gradient against
central finite differences, float64) on both backends, with broadcasting operands; the
special points (zeros, ties) are checked against exact values.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.dialects import ag
from arignote.gradient import (
    DisconnectedInputError,
    GradientError,
    Lop,
    Rop,
    grad,
    hessian,
    jacobian,
    verify_grad,
)
from arignote.tensor import grad_rules

BACKENDS = ["py", "cvm"]


def mode(backend: str) -> arignote.Mode:
    return arignote.Mode(linker=backend)


def compile_(inputs: list[Any], outputs: Any, backend: str = "py") -> Any:
    return arignote.function(inputs, outputs, mode=mode(backend), on_unused_input="ignore")


RNG = np.random.default_rng(1234)


def pos(*shape: int) -> np.ndarray:
    """Values in [0.5, 2): away from the kinks and poles of abs, log, sqrt, pow."""
    return RNG.uniform(0.5, 2.0, size=shape)


def signed(*shape: int) -> np.ndarray:
    """Values of both signs with |v| in [0.3, 2): away from 0."""
    return RNG.uniform(0.3, 2.0, size=shape) * RNG.choice([-1.0, 1.0], size=shape)


def distinct(*shape: int) -> np.ndarray:
    """Well-separated distinct values (no ties for max/min/maximum)."""
    n = int(np.prod(shape))
    return (RNG.permutation(n) * 0.7 - n * 0.3).reshape(shape).astype(np.float64)


M, ROW, COL, S = (3, 4), (1, 4), (3, 1), ()

# name -> (fun, point). Points whose array has a length-1 axis become broadcastable inputs.
CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray]]] = {
    "add_row_matrix": (lambda a, b: a + b, [pos(*ROW), pos(*M)]),
    "add_scalar_matrix": (lambda a, b: a + b, [pos(), pos(*M)]),
    "sub_col_matrix": (lambda a, b: a - b, [pos(*COL), pos(*M)]),
    "mul_row_matrix": (lambda a, b: a * b, [signed(*ROW), signed(*M)]),
    "mul_scalar_matrix": (lambda a, b: a * b, [signed(), signed(*M)]),
    "mul_vector_matrix": (lambda a, b: a * b, [signed(4), signed(*M)]),
    "div_matrix_row": (lambda a, b: a / b, [signed(*M), pos(*ROW)]),
    "div_scalar_matrix": (lambda a, b: a / b, [signed(), pos(*M)]),
    "pow_matrix_row": (lambda a, b: a**b, [pos(*M), signed(*ROW)]),
    "pow_constant_exponent": (lambda a: a**3, [signed(*M)]),
    "maximum_row_matrix": (lambda a, b: T.maximum(a, b), [distinct(*ROW), distinct(*M) + 0.35]),
    "minimum_matrix_scalar": (lambda a, b: T.minimum(a, b), [distinct(*M), np.array(0.35)]),
    "mod_floats": (lambda a, b: a % b, [pos(*M) + 2.0, np.array(0.9)]),
    "neg": (lambda a: -a, [signed(*M)]),
    "abs": (lambda a: abs(a), [signed(*M)]),
    "exp": (lambda a: T.exp(a), [signed(*M)]),
    "log": (lambda a: T.log(a), [pos(*M)]),
    "tanh": (lambda a: T.tanh(a), [signed(*M)]),
    "sqrt": (lambda a: T.sqrt(a), [pos(*M)]),
    "switch_row_matrix": (lambda a, b: T.switch(b > 0, a, b * 2), [signed(*ROW), signed(*M)]),
    "cast_f32_f64": (lambda a: T.cast(a, "float64") ** 2, [pos(*M).astype("float32")]),
    "cast_f64_f32": (lambda a: T.cast(a, "float32") * 3, [pos(*M).astype("float32")]),
    "dimshuffle_permute_newaxis": (lambda a: a.dimshuffle(1, "x", 0) * pos(4, 1, 3), [pos(*M)]),
    "dimshuffle_drop": (lambda a: a.dimshuffle(1) * pos(4), [pos(*ROW)]),
    "sum_axis": (lambda a: T.sum(a, axis=1), [signed(*M)]),
    "sum_all_keepdims": (lambda a: T.sum(a, keepdims=True) * pos(*M), [signed(*M)]),
    "prod_axis": (lambda a: T.prod(a, axis=0), [signed(*M)]),
    "max_axis": (lambda a: T.max(a, axis=1), [distinct(*M)]),
    "min_all": (lambda a: T.min(a), [distinct(*M)]),
    "dot_vector_vector": (lambda a, b: T.dot(a, b), [signed(4), signed(4)]),
    "dot_matrix_vector": (lambda a, b: T.dot(a, b), [signed(*M), signed(4)]),
    "dot_vector_matrix": (lambda a, b: T.dot(a, b), [signed(3), signed(*M)]),
    "dot_matrix_matrix": (lambda a, b: T.dot(a, b), [signed(*M), signed(4, 2)]),
    "sigmoid_chain": (lambda a, b: 1 / (1 + T.exp(-T.dot(a, b))), [signed(*M), signed(4)]),
    "mean_sqr": (lambda a: T.mean(T.sqr(a), axis=0), [signed(*M)]),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_verify_grad(case: str, backend: str) -> None:
    fun, point = CASES[case]
    verify_grad(fun, point, n_tests=2, rng=np.random.RandomState(0), mode=mode(backend))


# Math ops that newer versions of the dialect add: checked when the dialect has them.
OPTIONAL_CASES = {
    "Log1pOp": signed(*M) * 0.4,
    "Expm1Op": signed(*M),
    "SigmoidOp": signed(*M),
    "SoftplusOp": signed(*M),
    "FloorOp": signed(*M),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("op_name", sorted(OPTIONAL_CASES))
def test_verify_grad_optional_math_ops(op_name: str, backend: str) -> None:
    if not hasattr(ag, op_name):
        pytest.skip(f"this dialect has no {op_name}")
    from arignote.graph import apply_op

    def fun(a: Any) -> Any:
        return apply_op(getattr(ag, op_name)(a.value))

    verify_grad(fun, [OPTIONAL_CASES[op_name]], rng=np.random.RandomState(0), mode=mode(backend))


def test_every_differentiable_op_has_a_rule() -> None:
    comparisons = {ag.LtOp, ag.LeOp, ag.GtOp, ag.GeOp, ag.EqOp, ag.NeOp}
    # isnan, isinf, and_, or_, xor, invert: bool or integer results, as the comparisons
    comparisons |= {ag.OPS[e.name] for e in ag.TABLE if not e.differentiable_type}
    # tri_gamma, gammainc, ...: Theano implements no gradient, so neither is there a rule
    comparisons |= {ag.OPS[e.name] for e in ag.TABLE if not e.grad_defined}
    ops = [*ag.BINARY_OPS, *ag.UNARY_OPS, ag.SelectOp, ag.CastOp, ag.DimShuffleOp]
    ops += [*ag.REDUCE_OPS, ag.DotOp, *ag.INDEXING_OPS, ag.IfOp, ag.PrintOp, ag.ScanOp]
    ops += [ag.PythonOp]  # a custom op's rule calls its `grad`
    import arignote.compile.ops  # noqa: F401 - registers the rule of ag.python_op

    ops += [*ag.DATA_SHAPE_OPS]  # shapes and indexing (issue 13 item 3)
    # linear algebra (issue 13 item 5): ag.eig and ag.qr have no gradient, as in Theano
    ops += [ag.MatrixInverseOp, ag.DetOp, ag.CholeskyOp, ag.SolveOp, ag.EighOp, ag.SvdOp]
    ops += [*ag.CUMULATIVE_OPS, ag.SortOp]  # extra_ops and sort; argsort/searchsorted give i64
    ops += [*ag.COMPLEX_OPS]
    ops += [*ag.CONV_OPS]  # convolution (issue 14, conv)
    ops += [ag.AllreduceOp]  # collectives (issue 17): the same allreduce of the gradient
    ops += [*ag.POOL_OPS]  # pooling (issue 14)
    # nnet functions (issue 14): softmax_xent_pair is made after differentiation (fast_run)
    ops += [op for op in ag.SOFTMAX_OPS if op is not ag.SoftmaxXentPairOp]
    # MRG draws (issue 14): their rule (no gradient through a sample, as Theano) is
    # registered by the module that builds them
    import arignote.sandbox.rng_mrg  # noqa: F401

    ops += [*ag.RANDOM_OPS]
    import arignote.scan_module  # noqa: F401 - registers the rule of ag.scan

    assert {op for op in ops if op not in comparisons} == set(grad_rules.RULES)


# --- values at special points --------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_seed_04_sigmoid(backend: str) -> None:
    x = T.fscalar("x")
    y = 1 / (1 + T.exp(-x))
    dx = arignote.grad(y, x)
    assert dx.dtype == "float32"
    f = compile_([x], dx, backend)
    result = f(3)
    assert result.dtype == np.float32
    assert abs(result - 0.045176659730912) < 1e-6


def test_special_points() -> None:
    x = T.dmatrix("x")
    v = T.dvector("v")
    w = T.dvector("w")
    outs = [
        grad(T.sum(T.prod(x, axis=1)), x),  # zeros in the product
        grad(T.max(v), v),  # ties share the gradient
        grad(T.sum(T.maximum(v, w)), [v, w]),  # ties go to the first operand
        grad(T.sum(abs(v)), v),  # 0 at 0
        grad(T.sum(v**w), [v, w]),  # d/dw is 0 where v == 0
    ]
    f = compile_([x, v, w], [outs[0], outs[1], *outs[2], outs[3], *outs[4]])
    xv = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 4.0]])
    vv = np.array([1.0, 3.0, 3.0, 0.0])
    wv = np.array([1.0, 3.0, 2.0, 2.0])
    gprod, gmax, gmax_v, gmax_w, gabs, gpow_v, gpow_w = f(xv, vv, wv)
    np.testing.assert_allclose(gprod, [[6, 0, 0], [0, 0, 0], [8, 4, 2]])
    np.testing.assert_allclose(gmax, [0, 1, 1, 0])
    np.testing.assert_allclose(gmax_v, [1, 1, 1, 0])
    np.testing.assert_allclose(gmax_w, [0, 0, 0, 1])
    np.testing.assert_allclose(gabs, [1, 1, 1, 0])
    np.testing.assert_allclose(gpow_v, wv * vv ** (wv - 1))
    np.testing.assert_allclose(gpow_w, [0.0, 27 * np.log(3), 9 * np.log(3), 0.0])


# --- the API and its errors ------------------------------------------------------------


def test_cost_must_be_scalar() -> None:
    x = T.dvector("x")
    with pytest.raises(TypeError, match="cost must be a scalar."):
        grad(x * 2, x)
    with pytest.raises(TypeError, match="wrt must not be a set"):
        grad(T.sum(x), {x})
    with pytest.raises(TypeError, match="Expected Variable"):
        grad(T.sum(x), [x, 3])


def test_result_form_follows_wrt() -> None:
    x, y = T.dvectors("x", "y")
    cost = T.sum(x * y)
    assert isinstance(grad(cost, x), arignote.Variable)
    assert isinstance(grad(cost, [x, y]), list)
    assert isinstance(grad(cost, (x, y)), tuple)
    assert isinstance(arignote.grad(cost, [x]), list)
    assert isinstance(T.grad(cost, x), arignote.Variable)


def test_disconnected_inputs() -> None:
    x, y = T.dvectors("x", "y")
    cost = T.sum(x)
    with pytest.raises(DisconnectedInputError, match="not part of the computational graph"):
        grad(cost, y)
    with pytest.warns(UserWarning, match="not part of the computational graph"):
        gy = grad(cost, y, disconnected_inputs="warn")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gx, gy2 = grad(cost, [x, y], disconnected_inputs="ignore")
    assert grad(cost, y, disconnected_inputs="ignore", return_disconnected="None") is None
    with pytest.raises(ValueError, match="disconnected_inputs"):
        grad(cost, y, disconnected_inputs="bogus")
    f = compile_([x, y], [gx, gy, gy2])
    rx, ry, ry2 = f(np.ones(3), np.arange(2.0))
    np.testing.assert_array_equal(rx, np.ones(3))
    np.testing.assert_array_equal(ry, np.zeros(2))
    np.testing.assert_array_equal(ry2, np.zeros(2))


def test_integer_and_discrete_paths_give_zero() -> None:
    i = T.ivector("i")
    x = T.dvector("x")
    cost = T.sum(i * x) + T.sum(x > 0) + T.sum(T.cast(x, "int32")) + T.sum(x // 2)
    gi, gx = grad(cost, [i, x])
    assert gi.dtype == arignote.config.floatX
    assert gx.dtype == "float64"
    f = compile_([i, x], [gi, gx])
    ri, rx = f(np.array([1, 2], dtype="int32"), np.array([0.5, -1.5]))
    np.testing.assert_array_equal(ri, [0, 0])
    np.testing.assert_array_equal(rx, [1, 2])
    # A float variable used only by a comparison is connected, with a zero gradient.
    gz = grad(T.sum(x > 0), x)
    np.testing.assert_array_equal(compile_([x], gz)(np.array([1.0, -1.0])), [0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_stays_float32(backend: str) -> None:
    # The seed-06 pattern: float64 constants and a float64 mean, cast back to float32.
    x = T.fmatrix("x")
    y = T.fvector("y")
    w = T.fvector("w")
    b = T.fscalar("b")
    p_1 = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p_1) - (1 - y) * T.log(1 - p_1)
    cost = T.cast(T.mean(T.cast(xent, "float64")), "float32") + 0.01 * T.sum(w**2)
    gw, gb = T.grad(cost, [w, b])
    assert (gw.dtype, gb.dtype) == ("float32", "float32")
    f = compile_([x, y, w, b], [gw, gb], backend)
    rng = np.random.default_rng(0)
    xv = rng.standard_normal((5, 3)).astype("float32")
    yv = (rng.random(5) > 0.5).astype("float32")
    wv = rng.standard_normal(3).astype("float32")
    rw, rb = f(xv, yv, wv, np.float32(0.1))
    assert rw.dtype == np.float32 and rb.dtype == np.float32
    p = 1 / (1 + np.exp(-(xv.astype(float) @ wv + 0.1)))
    np.testing.assert_allclose(rw, xv.T @ (p - yv) / 5 + 0.02 * wv, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rb, np.mean(p - yv), rtol=1e-4, atol=1e-5)


def test_consider_constant_known_grads_and_names() -> None:
    x = T.dvector("x")
    y = 2 * x
    cost = T.sum(y * x)
    cost.name = "cost"
    g_all = grad(cost, x)
    g_const = grad(cost, x, consider_constant=[y])
    assert g_all.name == "(dcost/dx)"
    # known_grads: the gradient on y is given; the cost is None.
    g_known = grad(None, x, known_grads={y: T.constant(np.array([1.0, 10.0]))})
    f = compile_([x], [g_all, g_const, g_known])
    r_all, r_const, r_known = f(np.array([1.0, 3.0]))
    np.testing.assert_allclose(r_all, [4.0, 12.0])
    np.testing.assert_allclose(r_const, [2.0, 6.0])
    np.testing.assert_allclose(r_known, [2.0, 20.0])
    with pytest.raises(AssertionError, match="can't both be None"):
        grad(None, x)


def test_grad_of_the_wrt_itself() -> None:
    s = T.dscalar("s")
    np.testing.assert_allclose(compile_([s], grad(s, s))(2.0), 1.0)


# --- L and R operators, jacobian, hessian --------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_lop_rop(backend: str) -> None:
    a = T.dmatrix("a")
    x = T.dvector("x")
    u = T.dvector("u")
    v = T.dvector("v")
    f = T.tanh(T.dot(a, x)) * 2
    lop = Lop(f, x, u)
    rop = Rop(f, x, v)
    lop_a, rop_list = Lop(f, [a, x], u), Rop([f], [x], [v])
    assert isinstance(lop_a, list) and isinstance(rop_list, list)
    fn = compile_([a, x, u, v], [lop, rop, lop_a[0]], backend)
    rng = np.random.default_rng(3)
    av, xv = rng.standard_normal((3, 4)), rng.standard_normal(4)
    uv, vv = rng.standard_normal(3), rng.standard_normal(4)
    r_lop, r_rop, r_lop_a = fn(av, xv, uv, vv)
    jac = 2 * (1 - np.tanh(av @ xv) ** 2)[:, None] * av  # d f / d x, (3, 4)
    np.testing.assert_allclose(r_lop, jac.T @ uv)
    np.testing.assert_allclose(r_rop, jac @ vv)
    np.testing.assert_allclose(r_lop_a, np.outer(2 * (1 - np.tanh(av @ xv) ** 2) * uv, xv))


def test_rop_errors() -> None:
    x, y = T.dvectors("x", "y")
    with pytest.raises(ValueError, match="mismatched dimensionality"):
        Rop(x * 2, x, T.dmatrix())
    # Theano 1.0: a DisconnectedInputError (a ValueError) for an output that does not
    # depend on wrt
    with pytest.raises(ValueError, match="not part of the computational graph"):
        Rop(x * 2, y, T.dvector())


def test_jacobian_and_hessian() -> None:
    s = T.dscalar("s")
    x = T.dvector("x")
    # A scalar expression: jacobian is grad.
    js = jacobian(T.sum(x**2), x)
    # A vector of static length 3 (computed from a constant).
    jv = jacobian(T.constant(np.array([1.0, 2.0, 3.0])) * s**2, [s])
    assert isinstance(jv, list) and jv[0].ndim == 1
    f = compile_([s, x], [js, jv[0]])
    r_js, r_jv = f(1.5, np.array([1.0, 2.0]))
    np.testing.assert_allclose(r_js, [2.0, 4.0])
    np.testing.assert_allclose(r_jv, np.array([1.0, 2.0, 3.0]) * 3.0)
    # A vector of run-time length: a scan over its elements, as Theano.
    fx = compile_([x], [jacobian(x * 2, x), hessian(T.sum(x**3), x)])
    r_j, r_h = fx(np.array([1.0, 2.0]))
    np.testing.assert_allclose(r_j, 2 * np.eye(2))
    np.testing.assert_allclose(r_h, np.diag([6.0, 12.0]))
    # A broadcastable vector has the static length 1: its Hessian is computable.
    b = T.TensorType("float64", (True,))("b")
    h = hessian(T.sum(b**3), b)
    np.testing.assert_allclose(compile_([b], h)(np.array([2.0])), [[12.0]])


# --- the checker itself ----------------------------------------------------------------


def test_verify_grad_detects_a_wrong_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    def wrong_exp(op: Any, inputs: Any, outputs: Any, gz: Any) -> list[Any]:
        return [gz[0] * outputs[0] * 1.01]

    monkeypatch.setitem(grad_rules.RULES, ag.ExpOp, wrong_exp)
    with pytest.raises(verify_grad.E_grad) as info:
        verify_grad(lambda a: T.exp(a), [signed(3)], rng=np.random.RandomState(0))
    assert info.type is GradientError and issubclass(GradientError, AssertionError)
    err = info.value
    assert err.abs_err > err.abs_tol and err.rel_err > err.rel_tol
    assert "numeric gradient and analytic gradient exceed tolerance" in str(err)


def test_verify_grad_rejects_bad_arguments() -> None:
    with pytest.raises(TypeError, match="floating point inputs"):
        verify_grad(lambda a: a * 2, [np.arange(3)])
    with pytest.raises(TypeError, match="outputs a list"):
        verify_grad(lambda a: (a, a), [np.ones(3)])
    with pytest.raises(NotImplementedError, match="multiple outputs"):  # Theano's, for a list
        verify_grad(lambda a: [a, a], [np.ones(3)])
