"""Linear algebra of Theano's `theano.tensor.slinalg` (SciPy's in Theano, no SciPy here):
Cholesky factors, linear solves (general, symmetric, triangular), generalized symmetric
eigenvalues, the matrix exponential and the Kronecker product.

`cholesky` and `solve` are `ag` ops computed by LAPACK in native code (`ag.cholesky`:
`potrf`; `ag.solve`: `gesv`, or `trtrs` for triangular `a`) and by NumPy in the
interpreter; `eigvalsh`, `expm`, `cho_solve` and `kron` are compositions. Gradients are
Theano's (`Cholesky.L_op`, `Solve.L_op`); those of the compositions come from their
parts (for `eigvalsh` they equal Theano's `EigvalshGrad`; for `expm` they are exact,
where Theano's `ExpmGrad` assumes a diagonalizable matrix). A matrix that is not
positive definite (`cholesky`) or singular (`solve`) raises `numpy.linalg.LinAlgError`
naming the op on both linkers (or, for `Cholesky(on_error='nan')`, gives NaNs).
"""

from __future__ import annotations

import logging
from typing import Any

from xdsl.ir import Operation

from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic as T
from arignote.tensor import subtensor as S
from arignote.tensor.grad_rules import RULES
from arignote.tensor.nlinalg import (
    LinalgOp,
    alloc_diag,
    as_float_matrix,
    eigh,
    extract_diag,
    eye_like,
    matrix_dot,
    tril,
    triu,
)

logger = logging.getLogger(__name__)

imported_scipy = True
"""Theano's flag that its SciPy-backed ops are usable: always true here (no SciPy
needed)."""

MATRIX_STRUCTURES = (
    "general",
    "symmetric",
    "lower_triangular",
    "upper_triangular",
    "hermitian",
    "banded",
    "diagonal",
    "toeplitz",
)

__all__ = [
    "MATRIX_STRUCTURES",
    "Cholesky",
    "CholeskyGrad",
    "Eigvalsh",
    "EigvalshGrad",
    "Expm",
    "ExpmGrad",
    "Solve",
    "cho_solve",
    "cholesky",
    "eigvalsh",
    "expm",
    "kron",
    "solve",
    "solve_lower_triangular",
    "solve_symmetric",
    "solve_triangular",
    "solve_upper_triangular",
]


def _same_dtype(a: Variable, b: Variable) -> tuple[Variable, Variable]:
    dtype = "float64" if "float64" in (a.dtype, b.dtype) else "float32"
    return T.cast(a, dtype), T.cast(b, dtype)


def _built(name: str, make: Any) -> Operation:
    try:
        return make()
    except ValueError as e:
        raise ValueError(f"{name}: {str(e).split(': ', 1)[-1]}") from e


# --- Cholesky ------------------------------------------------------------------------------


class Cholesky(LinalgOp):
    """The Cholesky factor `L` (`lower`, `L Lᵀ = x`) or `U` (`Uᵀ U = x`) of a symmetric
    positive definite matrix, reading only that triangle of `x`. `on_error='raise'`
    raises LinAlgError for a matrix that is not positive definite; `'nan'` gives NaNs."""

    __props__ = ("lower", "destructive", "on_error")

    def __init__(self, lower: bool = True, on_error: str = "raise"):
        if on_error not in ("raise", "nan"):
            raise ValueError('on_error must be one of "raise" or ""nan"')
        self.lower = bool(lower)
        self.destructive = False
        self.on_error = on_error

    def __call__(self, x: Any) -> Variable:
        v = as_float_matrix("cholesky", x)
        nan = self.on_error == "nan"
        return apply_op(_built("cholesky", lambda: ag.CholeskyOp(v.value, self.lower, nan)))


cholesky = Cholesky()


def _cholesky_grad(chol_x: Variable, dz: Variable, lower: bool) -> Variable:
    """Murray's reverse-mode Cholesky gradient (Theano's `Cholesky.L_op`)."""
    if not lower:
        chol_x, dz = chol_x.T, dz.T

    def tril_and_halve_diagonal(mtx: Variable) -> Variable:
        return tril(mtx) - alloc_diag(extract_diag(mtx) / 2.0)

    def conjugate_solve_triangular(outer: Variable, inner: Variable) -> Variable:
        return solve_upper_triangular(outer.T, solve_upper_triangular(outer.T, inner.T).T)

    s = conjugate_solve_triangular(chol_x, tril_and_halve_diagonal(T.dot(chol_x.T, dz)))
    if lower:
        return tril(s + s.T) - alloc_diag(extract_diag(s))
    return triu(s + s.T) - alloc_diag(extract_diag(s))


def _cholesky_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], grads: list[Variable]
) -> list[Any]:
    assert isinstance(op, ag.CholeskyOp)
    (chol_x,), (dz,) = outputs, grads
    if op.nan_on_error is None:
        return [_cholesky_grad(chol_x, dz, op.lower is not None)]
    ok = T.TABLE_FUNCTIONS["invert"](T.TABLE_FUNCTIONS["isnan"](T.sum(chol_x)))
    chol_ok = T.switch(ok, chol_x, alloc_diag(T.ones_like(extract_diag(chol_x))))
    grad = _cholesky_grad(chol_ok, T.switch(ok, dz, T.zeros_like(dz)), op.lower is not None)
    return [T.switch(ok, grad, float("nan"))]


class CholeskyGrad(LinalgOp):
    """The gradient of `Cholesky(lower)` at `x` with factor `l` and output gradient `dz`
    (Theano's op; here Murray's formula, which gives the same triangle as Smith's
    algorithm Theano's op runs)."""

    __props__ = ("lower", "destructive")

    def __init__(self, lower: bool = True):
        self.lower = bool(lower)
        self.destructive = False

    def __call__(self, x: Any, l: Any, dz: Any) -> Variable:  # noqa: E741 - Theano's name
        lv, dzv = T.as_tensor_variable(l), T.as_tensor_variable(dz)
        return _cholesky_grad(lv, dzv, self.lower)


# --- solves --------------------------------------------------------------------------------

_ASSUME_A = {"gen": "general", "sym": "symmetric", "her": "symmetric", "pos": "symmetric"}


class Solve(LinalgOp):
    """`x` with `A x = b`, `A` square, `b` a vector or matrix (`x` has `b`'s shape).
    A "lower_triangular" / "upper_triangular" `A_structure` reads only that triangle
    (LAPACK `trtrs`); every other structure solves the general system (LAPACK `gesv`),
    as Theano's `Solve.perform`. LinAlgError when `A` is singular."""

    __props__ = ("A_structure", "lower", "overwrite_A", "overwrite_b")

    def __init__(
        self,
        A_structure: str = "general",  # noqa: N803 - Theano's names
        lower: bool = False,
        overwrite_A: bool = False,  # noqa: N803
        overwrite_b: bool = False,
    ):
        if A_structure not in MATRIX_STRUCTURES:
            raise ValueError("Invalid matrix structure argument", A_structure)
        self.A_structure = A_structure
        self.lower = lower
        self.overwrite_A = overwrite_A
        self.overwrite_b = overwrite_b

    def __call__(
        self, A: Any, b: Any, assume_a: str | None = None, lower: bool | None = None
    ) -> Variable:  # noqa: N803
        if assume_a is not None or lower is not None:
            return _solve_op(assume_a or "gen", bool(lower))(A, b)
        av = as_float_matrix("solve", A)
        bv = as_float_matrix("solve", b, (1, 2))
        av, bv = _same_dtype(av, bv)
        structure = self.A_structure
        if structure not in ag.lapack.SOLVE_STRUCTURES:
            structure = "general"
        return apply_op(_built("solve", lambda: ag.SolveOp(av.value, bv.value, structure)))


def _solve_op(assume_a: str, lower: bool) -> Solve:
    """SciPy's `solve(a, b, assume_a=..., lower=...)` as a `Solve`."""
    if assume_a not in _ASSUME_A:
        raise ValueError(f"solve: assume_a must be one of {sorted(_ASSUME_A)}, got {assume_a!r}")
    return Solve(_ASSUME_A[assume_a], lower)


solve = Solve()
solve_lower_triangular = Solve(A_structure="lower_triangular", lower=True)
solve_upper_triangular = Solve(A_structure="upper_triangular", lower=False)
solve_symmetric = Solve(A_structure="symmetric")


def solve_triangular(a: Any, b: Any, lower: bool = False) -> Variable:
    """SciPy's `solve_triangular(a, b, lower)`: reads only that triangle of `a`."""
    return (solve_lower_triangular if lower else solve_upper_triangular)(a, b)


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Variable:
    """SciPy's `cho_solve((c, lower), b)`: `x` with `A x = b` given `A`'s Cholesky factor
    `c` (lower triangular when `lower`, else upper), by two triangular solves."""
    c, lower = c_and_lower
    cv = T.as_tensor_variable(c)
    if lower:
        return solve_upper_triangular(cv.T, solve_lower_triangular(cv, b))
    return solve_upper_triangular(cv, solve_lower_triangular(cv.T, b))


_TRANSPOSED = {"lower_triangular": "upper_triangular", "upper_triangular": "lower_triangular"}


def _solve_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], grads: list[Variable]
) -> list[Any]:
    """Giles's reverse-mode gradient of `c = A \\ b` (Theano's `Solve.L_op`)."""
    assert isinstance(op, ag.SolveOp)
    (a, _), (c,), (c_bar,) = inputs, outputs, grads
    structure = op.structure_value
    b_bar = Solve(_TRANSPOSED.get(structure, structure))(a.T, c_bar)
    a_bar = -T.outer(b_bar, c) if c.ndim == 1 else -T.dot(b_bar, c.T)
    if structure == "lower_triangular":
        a_bar = tril(a_bar)
    elif structure == "upper_triangular":
        a_bar = triu(a_bar)
    return [a_bar, b_bar]


# --- generalized symmetric eigenvalues --------------------------------------------------


def _symmetric(a: Variable, lower: bool) -> Variable:
    """The symmetric matrix whose `lower` (or upper) triangle is `a`'s."""
    return tril(a) + tril(a, -1).T if lower else triu(a) + triu(a, 1).T


def _reduced(a: Variable, b: Variable, lower: bool) -> tuple[Variable, Variable]:
    """`C = L⁻¹ A L⁻ᵀ` with `b = L Lᵀ` (the standard problem with the eigenvalues of
    `A v = w B v`), and `L`."""
    chol = Cholesky(lower=True)(_symmetric(b, lower))
    half = solve_lower_triangular(chol, _symmetric(a, lower))
    return solve_lower_triangular(chol, half.T), chol


class Eigvalsh(LinalgOp):
    """The ascending eigenvalues of `a v = w b v` for symmetric `a` and symmetric
    positive definite `b` (`b` None: of `a`), reading the `lower` (or upper) triangles
    (SciPy's `eigvalsh(a, b, lower)`)."""

    __props__ = ("lower",)

    def __init__(self, lower: bool = True):
        if lower not in (True, False):
            raise ValueError(f"Eigvalsh: lower must be a bool, got {lower!r}")
        self.lower = lower

    def __call__(self, a: Any, b: Any = None) -> Variable:
        av = as_float_matrix("eigvalsh", a)
        uplo = "L" if self.lower else "U"
        if b is None:
            return eigh(av, uplo)[0]
        av, bv = _same_dtype(av, as_float_matrix("eigvalsh", b))
        c, _ = _reduced(av, bv, self.lower)
        return eigh(c, "L")[0]


def eigvalsh(a: Any, b: Any, lower: bool = True) -> Variable:
    """`Eigvalsh(lower)(a, b)`."""
    return Eigvalsh(lower)(a, b)


class EigvalshGrad(LinalgOp):
    """`[gA, gB]`, the gradient of `Eigvalsh(lower)(a, b)` for output gradient `gw`:
    `V diag(gw) Vᵀ` and `-V diag(gw * w) Vᵀ` (`V` the generalized eigenvectors), folded
    onto the triangle read (Theano's op, here a composition)."""

    __props__ = ("lower",)

    def __init__(self, lower: bool = True):
        self.lower = lower

    def __call__(self, a: Any, b: Any, gw: Any) -> list[Variable]:
        av, bv = _same_dtype(as_float_matrix("eigvalsh", a), as_float_matrix("eigvalsh", b))
        c, chol = _reduced(av, bv, self.lower)
        w, z = eigh(c, "L")
        v = solve_upper_triangular(chol.T, z)
        g_a = matrix_dot(v, alloc_diag(gw), v.T)
        g_b = -matrix_dot(v, alloc_diag(gw * w), v.T)
        return [self._fold(g_a), self._fold(g_b)]

    def _fold(self, g: Variable) -> Variable:
        return tril(g) + triu(g, 1).T if self.lower else triu(g) + tril(g, -1).T


# --- Kronecker product -----------------------------------------------------------------


def kron(a: Any, b: Any) -> Variable:
    """The Kronecker product, as `scipy.linalg.kron` (Theano's composition): for
    matrices, `(a.rows * b.rows, a.cols * b.cols)`. TypeError when the dimensions sum to
    less than 3."""
    av, bv = T.as_tensor_variable(a), T.as_tensor_variable(b)
    if av.ndim + bv.ndim <= 2:
        raise TypeError(
            f"kron: inputs dimensions must sum to 3 or more. You passed {av.ndim} and {bv.ndim}."
        )
    o = T.outer(av, bv)
    shape = [av.shape[i] for i in range(av.ndim)] + [bv.shape[i] for i in range(bv.ndim)]
    o = S.reshape(o, shape, ndim=av.ndim + bv.ndim)
    if o.ndim == 3:
        return S.flatten(o.dimshuffle(1, 0, 2))
    shf = o.dimshuffle(0, 2, 1, *range(3, o.ndim))
    lengths = [shape[0] * shape[2], shape[1] * shape[3], *shape[4:]]
    return S.reshape(shf, lengths, ndim=len(lengths))


# --- matrix exponential -----------------------------------------------------------------

_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
"""The coefficients of the [13/13] Padé approximant of `exp` (Higham 2005)."""

THETA_13 = 5.371920351148152
"""The largest 1-norm for which the [13/13] approximant is accurate to double precision."""

MAX_SQUARINGS = 1100
"""A bound on the squarings (a finite float64 norm never needs more than about 1024);
it also keeps a NaN norm, whose integer conversion is undefined, from asking for an
absurd count."""


def _pade13(a: Variable, ident: Variable) -> tuple[Variable, Variable]:
    """`U` and `V` of the [13/13] approximant `(V - U)⁻¹ (V + U)` at `a`."""
    b = _PADE13
    a2 = T.dot(a, a)
    a4 = T.dot(a2, a2)
    a6 = T.dot(a4, a2)
    inner_u = T.dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
    u = T.dot(a, inner_u + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    inner_v = T.dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
    v = inner_v + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
    return u, v


def _squared(x: Variable, count: Variable) -> Variable:
    """`x` squared `count` times (a scan of `count + 1` steps whose first keeps `x`, so
    that its last step exists when `count` is 0)."""
    from arignote.scan_module import scan

    def step(k: Variable, r: Variable) -> Variable:
        return T.switch(T.eq(k, 0), r, T.dot(r, r))

    outputs, _ = scan(step, sequences=[S.arange(count + 1)], outputs_info=[x])
    return outputs[-1]


class Expm(LinalgOp):
    """The matrix exponential of a square matrix, by scaling and squaring with the
    [13/13] Padé approximant (Higham 2005, the algorithm of `scipy.linalg.expm` without
    its lower-degree shortcuts): `A / 2**s` with `s = max(0, ceil(log2(|A|_1 / θ13)))`,
    then `s` squarings, a `scan` of run-time length."""

    def __call__(self, A: Any) -> Variable:  # noqa: N803 - Theano's name
        a = as_float_matrix("expm", A)
        n = a.shape[0]
        ident = eye_like(n, a.dtype)
        norm1 = T.max(T.sum(abs(a), axis=0))
        ratio = T.maximum(norm1 / THETA_13, 1.0)
        steps = T.TABLE_FUNCTIONS["ceil"](T.TABLE_FUNCTIONS["log2"](ratio))
        # an integer: the count is piecewise constant, no gradient flows into it
        count = T.minimum(T.maximum(T.cast(steps, "int64"), 0), MAX_SQUARINGS)
        scaled = a / T.TABLE_FUNCTIONS["exp2"](T.cast(count, a.dtype))
        u, v = _pade13(scaled, ident)
        return _squared(solve(v - u, v + u), count)


expm = Expm()


class ExpmGrad(LinalgOp):
    """The gradient of `expm` at `A` for the output gradient `gA`: the vector-Jacobian
    product of the composition (exact; Theano's op uses an eigendecomposition)."""

    def __call__(self, A: Any, gA: Any) -> Variable:  # noqa: N803 - Theano's names
        from arignote.gradient import grad

        a = as_float_matrix("expm", A)
        return grad(T.sum(expm(a) * gA), a)


# linear algebra (issue 13 item 5)
RULES.update({ag.CholeskyOp: _cholesky_rule, ag.SolveOp: _solve_rule})
