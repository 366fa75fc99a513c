"""Linear algebra (`arignote.tensor.nlinalg` / `slinalg`, issue 13 item 5) against NumPy, on
both linkers, in float32 and float64.

Inputs are well-conditioned random matrices: `G + n I` (`G` standard normal, `n = 5`;
its 2-norm condition number is measured, not assumed) and the symmetric positive
definite `G Gᵀ + n I`. Tolerances come from the backward-stability bounds of the LAPACK
algorithms: a result computed in precision `eps` (2**-23 or 2**-52) differs from the
exact one (NumPy in float64 from the same inputs) by at most `C * n * cond * eps`
relative to its norm, with `C = 64` a generous constant for the algorithms' small
polynomial factors; values that need no inversion (reconstructions, residuals,
orthogonality) by `C * n * eps`. Eigenvectors and singular vectors are compared through
their defining equations (sign-free), not entry by entry.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pytest

import arignote
import arignote.tensor as T
from arignote.gradient import verify_grad
from arignote.tensor import nlinalg, slinalg

LINKERS = ["py", "cvm"]
DTYPES = ["float32", "float64"]
N = 5
C = 64


def mode(linker: str) -> Any:
    return arignote.Mode(linker=linker)


def eps(dtype: str) -> float:
    return float(np.finfo(dtype).eps)


def general(n: int, seed: int, dtype: str = "float64") -> np.ndarray:
    g = np.random.default_rng(seed).standard_normal((n, n))
    return (g + n * np.eye(n)).astype(dtype)


def spd(n: int, seed: int, dtype: str = "float64") -> np.ndarray:
    g = np.random.default_rng(seed).standard_normal((n, n))
    return (g @ g.T + n * np.eye(n)).astype(dtype)


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    scale = max(np.linalg.norm(np.asarray(expected, np.float64)), 1e-300)
    return float(np.linalg.norm(np.asarray(got, np.float64) - expected) / scale)


def assert_close(name: str, got: Any, expected: Any, bound: float, dtype: str) -> None:
    got = np.asarray(got)
    assert got.dtype == np.dtype(dtype), (name, got.dtype)
    assert got.shape == np.shape(expected), (name, got.shape, np.shape(expected))
    error = relative_error(got, np.asarray(expected, np.float64))
    assert error <= bound, f"{name}: relative error {error:.3g} > bound {bound:.3g}"


# --- values ------------------------------------------------------------------------------


@cache
def _values_function(linker: str, dtype: str) -> Any:
    x, s, b = T.matrix("x", dtype=dtype), T.matrix("s", dtype=dtype), T.matrix("b", dtype=dtype)
    v = T.vector("v", dtype=dtype)
    w, vecs = nlinalg.eigh(s)
    wu, vu = nlinalg.Eigh("U")(s)
    real_spectrum = T.dot(s, nlinalg.alloc_diag(T.cast(T.arange(1, N + 1), dtype)))
    ew, ev = nlinalg.eig(real_spectrum)
    u, sv, vt = nlinalg.svd(b)
    ur, svr, vtr = nlinalg.svd(b, full_matrices=False)
    q, r = nlinalg.qr(b)
    qc, rc = nlinalg.qr(b, "complete")
    h, tau = nlinalg.qr(b, "raw")
    outputs = {
        "inverse": nlinalg.matrix_inverse(x),
        "det": nlinalg.det(x),
        "solve": slinalg.solve(x, b[:, :2]),
        "solve_vector": slinalg.solve(x, v),
        "solve_symmetric": slinalg.solve_symmetric(s, v),
        "solve_assume_pos": slinalg.solve(s, v, assume_a="pos"),
        "solve_lower": slinalg.solve_lower_triangular(x, b[:, :2]),
        "solve_upper": slinalg.solve_upper_triangular(x, v),
        "solve_triangular": slinalg.solve_triangular(x, v, lower=True),
        "cholesky": slinalg.cholesky(s),
        "cholesky_upper": slinalg.Cholesky(lower=False)(s),
        "cho_solve": slinalg.cho_solve((slinalg.cholesky(s), True), v),
        "cho_solve_upper": slinalg.cho_solve((slinalg.Cholesky(lower=False)(s), False), v),
        "eigh_w": w,
        "eigh_residual": T.dot(s, vecs) - vecs * w.dimshuffle("x", 0),
        "eigh_orthogonal": T.dot(vecs.T, vecs),
        "eighU_w": wu,
        "eighU_residual": T.dot(s, vu) - vu * wu.dimshuffle("x", 0),
        "eigvalsh": slinalg.eigvalsh(s, None),
        "eigvalsh_b": slinalg.eigvalsh(s, s + T.dot(x, x.T)),
        "eig_w": ew,
        "eig_residual": T.dot(real_spectrum, ev) - ev * ew.dimshuffle("x", 0),
        "eig_norms": T.sum(ev * ev, axis=0),
        "svd_s": sv,
        "svd_values": nlinalg.svd(b, compute_uv=False),
        "svd_u_orthogonal": T.dot(u.T, u),
        "svd_vt_orthogonal": T.dot(vt, vt.T),
        "svd_reduced": nlinalg.matrix_dot(ur * svr.dimshuffle("x", 0), vtr),
        "qr_reduced": T.dot(q, r),
        "qr_q_orthogonal": T.dot(q.T, q),
        "qr_r": r,
        "qr_r_mode": nlinalg.qr(b, "r"),
        "qr_complete": T.dot(qc, rc),
        "qr_complete_q": T.dot(qc.T, qc),
        "qr_raw_h": h,
        "qr_raw_tau": tau,
        "pinv": nlinalg.pinv(b),
        "trace": nlinalg.trace(x),
        "extract_diag": nlinalg.extract_diag(b),
        "alloc_diag": nlinalg.alloc_diag(v),
        "diag": nlinalg.diag(nlinalg.diag(x)),
        "norm_fro": nlinalg.norm(x, None),
        "norm_inf": nlinalg.norm(x, "inf"),
        "norm_1": nlinalg.norm(x, 1),
        "norm_v2": nlinalg.norm(v, None),
        "norm_v3": nlinalg.norm(v, 3),
        "norm_v0": nlinalg.norm(v, 0),
        "matrix_power": nlinalg.matrix_power(x, 3),
        "kron": slinalg.kron(x[:2, :3], b[:3, :2]),
        "expm": slinalg.expm(x / 4),
        "expm_large": slinalg.expm(x * 3),
        "tensorinv": nlinalg.tensorinv(T.reshape(T.dot(x, x.T)[:4, :4], (2, 2, 2, 2))),
        "tensorsolve": nlinalg.tensorsolve(
            T.reshape(x[:4, :4], (2, 2, 4)), T.reshape(v[:4], (2, 2))
        ),
    }
    fn = arignote.function([x, s, b, v], list(outputs.values()), mode=mode(linker))
    return list(outputs), fn


def _expm(a: np.ndarray) -> np.ndarray:
    """The exponential by its eigendecomposition (a reference for diagonalizable `a`,
    in complex arithmetic)."""
    w, v = np.linalg.eig(a)
    return (v @ np.diag(np.exp(w)) @ np.linalg.inv(v)).real


def _references(x: np.ndarray, s: np.ndarray, b: np.ndarray, v: np.ndarray) -> dict[str, Any]:
    """NumPy's values in float64, and the identities the sign-free checks expect."""
    la = np.linalg
    n, m = b.shape
    lower, upper = np.tril(x), np.triu(x)
    chol = la.cholesky(s)
    q, r = la.qr(b)
    h, tau = la.qr(b, "raw")
    c = la.cholesky(s + x @ x.T)
    ci = la.inv(c)
    return {
        "inverse": la.inv(x),
        "det": la.det(x),
        "solve": la.solve(x, b[:, :2]),
        "solve_vector": la.solve(x, v),
        "solve_symmetric": la.solve(s, v),
        "solve_assume_pos": la.solve(s, v),
        "solve_lower": la.solve(lower, b[:, :2]),
        "solve_upper": la.solve(upper, v),
        "solve_triangular": la.solve(lower, v),
        "cholesky": chol,
        "cholesky_upper": chol.T,
        "cho_solve": la.solve(s, v),
        "cho_solve_upper": la.solve(s, v),
        "eigh_w": la.eigvalsh(s),
        "eigh_residual": np.zeros((N, N)),
        "eigh_orthogonal": np.eye(N),
        "eighU_w": la.eigvalsh(s),
        "eighU_residual": np.zeros((N, N)),
        "eigvalsh": la.eigvalsh(s),
        "eigvalsh_b": la.eigvalsh(ci @ s @ ci.T),
        "eig_w": la.eig(s @ np.diag(np.arange(1.0, N + 1)))[0],
        "eig_residual": np.zeros((N, N)),
        "eig_norms": np.ones(N),
        "svd_s": la.svd(b, compute_uv=False),
        "svd_values": la.svd(b, compute_uv=False),
        "svd_u_orthogonal": np.eye(n),
        "svd_vt_orthogonal": np.eye(m),
        "svd_reduced": b,
        "qr_reduced": b,
        "qr_q_orthogonal": np.eye(min(n, m)),
        "qr_r": r,
        "qr_r_mode": r,
        "qr_complete": b,
        "qr_complete_q": np.eye(n),
        "qr_raw_h": h,
        "qr_raw_tau": tau,
        "pinv": la.pinv(b),
        "trace": np.trace(x),
        "extract_diag": np.diag(b),
        "alloc_diag": np.diag(v),
        "diag": np.diag(np.diag(x)),
        "norm_fro": la.norm(x),
        "norm_inf": la.norm(x, np.inf),
        "norm_1": la.norm(x, 1),
        "norm_v2": la.norm(v),
        "norm_v3": la.norm(v, 3),
        "norm_v0": np.count_nonzero(v),
        "matrix_power": la.matrix_power(x, 3),
        "kron": np.kron(x[:2, :3], b[:3, :2]),
        "expm": _expm(x / 4),
        "expm_large": _expm(x * 3),
        "tensorinv": la.tensorinv((x @ x.T)[:4, :4].reshape(2, 2, 2, 2)),
        "tensorsolve": la.tensorsolve(x[:4, :4].reshape(2, 2, 4), v[:4].reshape(2, 2)),
    }


SIGN_FREE = {"eig_w", "eig_residual"}
"""Results in LAPACK's order (`eig`'s eigenvalues are compared sorted). `eig` is tried on
`s diag(1..n)`, similar to the symmetric `D^½ s D^½`: real eigenvalues."""

ZERO = {"eigh_residual", "eighU_residual", "eig_residual"}
"""Residuals: bounded relative to the matrix's norm instead of their own."""


def _bound(name: str, dtype: str, kappa: float) -> float:
    unit = C * N * eps(dtype)
    if name.startswith("expm"):
        return unit * kappa * 50  # Padé + squaring: error grows with the norm's squarings
    if name in ("qr_r", "qr_r_mode", "qr_raw_h", "qr_raw_tau", "pinv", "eig_w", "eigvalsh_b"):
        return unit * kappa
    if name.startswith(("inverse", "det", "solve", "cho_", "tensor", "matrix_power")):
        return unit * kappa
    return unit


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("linker", LINKERS)
def test_values_against_numpy(linker: str, dtype: str) -> None:
    x64, s64 = general(N, 1), spd(N, 2)
    b64 = np.random.default_rng(3).standard_normal((N, 3))
    v64 = np.random.default_rng(4).standard_normal(N)
    x, s, b, v = (a.astype(dtype) for a in (x64, s64, b64, v64))
    names, fn = _values_function(linker, dtype)
    got = dict(zip(names, fn(x, s, b, v), strict=True))
    # the references see the inputs as rounded to `dtype`
    expected = _references(*(a.astype(np.float64) for a in (x, s, b, v)))
    kappa = max(np.linalg.cond(x64), np.linalg.cond(s64), np.linalg.cond(b64), 1.0)
    for name in names:
        value, reference = got[name], expected[name]
        if name in SIGN_FREE:
            value, reference = np.sort(value), np.sort(np.real(reference))
        if name in ZERO:
            scale = np.linalg.norm(s) * (1 if "eigh" in name else N)
            residual = np.linalg.norm(np.asarray(value, np.float64)) / scale
            assert residual <= _bound(name, dtype, kappa), (name, residual)
            continue
        if name == "norm_v0":
            assert value == reference and value.dtype.kind in "iu", (name, value)
            continue
        if name.startswith("qr_r") and name != "qr_raw_tau":
            value, reference = np.abs(value), np.abs(reference)  # a row's sign is a convention
        assert_close(name, value, reference, _bound(name, dtype, kappa), dtype)


@pytest.mark.parametrize("linker", LINKERS)
def test_lstsq_and_empty_and_strided_operands(linker: str) -> None:
    """`lstsq` as NumPy's (residuals only for full column rank and more rows); an empty
    matrix; operands that are transposed or strided views (copied for LAPACK)."""
    a, b, sq = T.dmatrix("a"), T.dmatrix("b"), T.dmatrix("sq")
    xs, residuals, rank, sv = nlinalg.lstsq()(a, b, -1)
    inv_t = nlinalg.matrix_inverse(sq.T)
    inv_strided = nlinalg.matrix_inverse(sq[::2, ::2])
    fn = arignote.function(
        [a, b, sq],
        [xs, residuals, rank, sv, inv_t, inv_strided, nlinalg.det(sq)],
        mode=mode(linker),
    )
    tall = np.random.default_rng(5).standard_normal((6, 3)) + np.eye(6, 3) * 3
    rhs = np.random.default_rng(6).standard_normal((6, 2))
    square = general(6, 7)
    got = fn(tall, rhs, square)
    x_np, res_np, rank_np, s_np = np.linalg.lstsq(tall, rhs, rcond=None)
    bound = C * 6 * eps("float64") * np.linalg.cond(tall)
    assert relative_error(got[0], x_np) <= bound
    assert relative_error(got[1], res_np) <= bound and got[1].shape == res_np.shape
    assert int(got[2]) == rank_np and got[2].dtype == np.int64
    assert relative_error(got[3], s_np) <= bound
    got = fn(square, rhs, square)
    assert got[1].shape == (0,)  # square: no residuals, as NumPy
    assert relative_error(got[4], np.linalg.inv(square.T)) <= bound * 10
    assert relative_error(got[5], np.linalg.inv(square[::2, ::2])) <= bound * 10
    empty = fn(tall, rhs, np.zeros((0, 0)))
    assert empty[4].shape == (0, 0) and empty[6] == 1.0  # det of a 0x0 matrix is 1


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize("linker", LINKERS)
def test_numerical_failures_raise_linalgerror(linker: str) -> None:
    x, v = T.dmatrix("x"), T.dvector("v")
    cases = [
        (nlinalg.matrix_inverse(x), "ag.matrix_inverse", "Singular matrix"),
        (slinalg.solve(x, v), "ag.solve", "Singular matrix"),
        (slinalg.solve_lower_triangular(x, v), "ag.solve", "Singular matrix"),
        (slinalg.cholesky(x), "ag.cholesky", "not positive definite"),
        (nlinalg.eig(x)[0], "ag.eig", "complex eigenvalues"),
    ]
    singular = np.ones((3, 3))
    singular[1, 1] = 0.0  # also for a triangular solve: a zero on the diagonal
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # eigenvalues ±i
    for output, op_name, reason in cases:
        fn = arignote.function([x, v], output, mode=mode(linker), on_unused_input="ignore")
        value = rotation if op_name == "ag.eig" else singular
        with pytest.raises(np.linalg.LinAlgError, match=reason) as info:
            fn(value, np.ones(3))
        assert op_name in str(info.value)
    # the determinant of a singular matrix is 0, no error
    fn = arignote.function([x], nlinalg.det(x), mode=mode(linker))
    assert fn(singular) == 0.0
    # on_error='nan' gives NaNs instead
    fn = arignote.function([x], slinalg.Cholesky(on_error="nan")(x), mode=mode(linker))
    assert np.isnan(fn(-np.eye(3))).all()
    np.testing.assert_allclose(fn(4 * np.eye(2)), 2 * np.eye(2))


@pytest.mark.parametrize("linker", LINKERS)
def test_shapes_are_checked(linker: str) -> None:
    x, b = T.dmatrix("x"), T.dmatrix("b")
    fn = arignote.function([x], nlinalg.matrix_inverse(x), mode=mode(linker))
    with pytest.raises(
        ValueError, match=r"ag.matrix_inverse.*expected a square matrix, got shape \(2, 3\)"
    ):
        fn(np.ones((2, 3)))
    fn = arignote.function([x, b], slinalg.solve(x, b), mode=mode(linker))
    with pytest.raises(ValueError, match="ag.solve.*do not match"):
        fn(np.eye(3), np.ones((2, 2)))
    with pytest.raises(ValueError, match="ag.eigh.*expected a square matrix"):
        arignote.function([x], nlinalg.eigh(x)[0], mode=mode(linker))(np.ones((3, 2)))


def test_static_errors() -> None:
    fixed = T.TensorType("float64", (False, False))
    with pytest.raises(TypeError, match="matrix_inverse: expected a 2-d tensor"):
        nlinalg.matrix_inverse(T.dvector())
    with pytest.raises(TypeError, match="AllocDiag only works on vectors"):
        nlinalg.alloc_diag(T.dmatrix())
    with pytest.raises(ValueError, match="square"):
        nlinalg.det(T.as_tensor_variable(np.ones((2, 3))))
    with pytest.raises(ValueError, match="Invalid matrix structure"):
        slinalg.Solve("sideways")
    with pytest.raises(ValueError, match="on_error"):
        slinalg.Cholesky(on_error="ignore")
    with pytest.raises(ValueError, match="qr: unrecognized mode"):
        nlinalg.qr(fixed(), "economic")
    with pytest.raises(TypeError, match="kron: inputs dimensions must sum to 3 or more"):
        slinalg.kron(T.dvector(), T.dvector())
    with pytest.raises(ValueError, match="Invalid norm order"):
        nlinalg.norm(T.dmatrix(), "nuc")
    with pytest.raises(NotImplementedError):
        nlinalg.norm(T.dtensor3(), None)


def test_dtypes_and_theano_objects() -> None:
    """Integer operands compute in Theano's float dtype; ops compare by their props."""
    assert nlinalg.matrix_inverse(T.imatrix()).dtype == "float64"
    assert nlinalg.det(T.matrix(dtype="int8")).dtype == "float32"
    assert slinalg.solve(T.fmatrix(), T.dvector()).dtype == "float64"
    assert slinalg.cholesky(T.fmatrix()).dtype == "float32"
    assert nlinalg.Eigh("U") == nlinalg.Eigh("U") != nlinalg.Eigh("L")
    assert slinalg.solve_lower_triangular == slinalg.Solve("lower_triangular", lower=True)
    assert str(slinalg.cholesky) == "Cholesky{lower=True, destructive=False, on_error='raise'}"
    assert T.nlinalg is nlinalg and slinalg.imported_scipy
    assert len(nlinalg.svd(T.dmatrix(), compute_uv=False).type.broadcastable) == 1


# --- gradients ---------------------------------------------------------------------------


def _spd_graph(a: Any) -> Any:
    """`A Aᵀ + n I`: symmetric positive definite, built in the graph so that the
    finite differences perturb it symmetrically."""
    return T.dot(a, a.T) + N * nlinalg.alloc_diag(T.ones_like(a[0]))


GRADIENTS: dict[str, Any] = {
    "matrix_inverse": lambda a, b: nlinalg.matrix_inverse(a),
    "det": lambda a, b: nlinalg.det(a),
    "cholesky": lambda a, b: slinalg.cholesky(_spd_graph(a)),
    "cholesky_upper": lambda a, b: slinalg.Cholesky(lower=False)(_spd_graph(a)),
    "solve": lambda a, b: slinalg.solve(a, b),
    "solve_lower": lambda a, b: slinalg.solve_lower_triangular(a, b[:, 0]),
    "solve_upper": lambda a, b: slinalg.solve_upper_triangular(a, b),
    "solve_symmetric": lambda a, b: slinalg.solve_symmetric(_spd_graph(a), b),
    "cho_solve": lambda a, b: slinalg.cho_solve((slinalg.cholesky(_spd_graph(a)), True), b),
    "eigh": lambda a, b: _eigh_cost(nlinalg.eigh(_spd_graph(a))),
    "eigh_upper": lambda a, b: _eigh_cost(nlinalg.Eigh("U")(_spd_graph(a))),
    "eigvalsh": lambda a, b: slinalg.eigvalsh(_spd_graph(a), _spd_graph(T.outer(b[:, 0], b[:, 1]))),
    "svd_values": lambda a, b: nlinalg.svd(a, compute_uv=False),
    "svd_reduced": lambda a, b: _svd_cost(nlinalg.svd(b, full_matrices=False)),
    "pinv": lambda a, b: nlinalg.pinv(b),
    "expm": lambda a, b: slinalg.expm(a / 4),
    "tensorinv": lambda a, b: nlinalg.tensorinv(T.reshape(a[:4, :4], (2, 2, 2, 2))),
    "kron": lambda a, b: slinalg.kron(a[:2], b),
    "trace_norm": lambda a, b: nlinalg.trace(a) * nlinalg.norm(b, None),
}


def _eigh_cost(pair: Any) -> Any:
    w, v = pair
    return w.sum() + (v * v * T.arange(N)).sum()  # squares: free of the eigenvectors' signs


def _svd_cost(triple: Any) -> Any:
    u, s, vt = triple
    return s.sum() + (u * u).sum(axis=1) + (vt * vt * T.arange(3)).sum()


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients(name: str) -> None:
    """Theano's gradients, checked by finite differences (float64, cvm)."""
    a = general(N, 8) / N
    a = a + np.eye(N) if name in ("solve_lower", "solve_upper", "matrix_inverse") else a
    b = np.random.default_rng(9).standard_normal((N, 3))
    verify_grad(GRADIENTS[name], [a, b], rng=np.random.default_rng(10), mode=mode("cvm"))


@pytest.mark.parametrize(
    "name", ["matrix_inverse", "cholesky", "solve_lower", "eigh", "svd_values"]
)
def test_gradients_interpreted(name: str) -> None:
    a = general(N, 11) / N + np.eye(N)
    b = np.random.default_rng(12).standard_normal((N, 3))
    verify_grad(GRADIENTS[name], [a, b], rng=np.random.default_rng(13), mode=mode("py"))


def test_grad_helpers_match_theano_ops() -> None:
    """`EighGrad`, `CholeskyGrad`, `EigvalshGrad` and `ExpmGrad` give the gradients
    `grad` computes through the ops."""
    s, gw, gv, g = T.dmatrix("s"), T.dvector("gw"), T.dmatrix("gv"), T.dmatrix("g")
    b = T.dot(g, g.T) + 4 * nlinalg.alloc_diag(T.ones_like(gw))  # distinct eigenvalues
    w, v = nlinalg.eigh(s)
    chol = slinalg.cholesky(s)
    cost = (w * gw).sum() + (v * gv).sum()
    pairs = [
        (nlinalg.EighGrad("L")(s, w, v, gw, gv), arignote.grad(cost, s)),
        (slinalg.CholeskyGrad()(s, chol, g), arignote.grad((chol * g).sum(), s)),
        (
            slinalg.EigvalshGrad()(s, b, gw)[0],
            arignote.grad((slinalg.eigvalsh(s, b) * gw).sum(), s),
        ),
        (slinalg.ExpmGrad()(s, g), arignote.grad((slinalg.expm(s) * g).sum(), s)),
    ]
    fn = arignote.function(
        [s, gw, gv, g], [x for pair in pairs for x in pair], on_unused_input="ignore"
    )
    rng = np.random.default_rng(14)
    values = fn(
        spd(4, 15) / 4,
        rng.standard_normal(4),
        rng.standard_normal((4, 4)),
        rng.standard_normal((4, 4)),
    )
    for helper, through_grad in zip(values[::2], values[1::2], strict=True):
        np.testing.assert_allclose(helper, through_grad, rtol=1e-8, atol=1e-8)
