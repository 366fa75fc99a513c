"""Linear algebra (Theano's `theano.tensor.nlinalg`): inverse, determinant, eigensystems,
SVD, QR, pseudo-inverse, norms and the helpers built from them.

The factorizations are `ag` ops computed by LAPACK in native code (`ag.matrix_inverse`,
`ag.det`, `ag.eigh`, `ag.eig`, `ag.svd`, `ag.qr`; see `arignote.dialects.ag.lapack`) and
by `numpy.linalg` in the interpreter; the rest are compositions of tensor operations,
so their gradients and both linkers come from those. Integer operands compute in the
float dtype of Theano's `upgrade_to_float` (int8/int16 -> float32, int32/int64 ->
float64). A numerical failure (a singular matrix, an eigensolver that did not converge)
raises `numpy.linalg.LinAlgError` naming the op on both linkers, where Theano raised
NumPy's.

Gradients, as Theano defines them: `matrix_inverse`, `det`, `eigh` (Theano's
`EighGrad`), `pinv` (Theano's formula), and here also `svd` with `full_matrices=False`
or `compute_uv=False` (Townsend's formula, for distinct non-zero singular values), which
Theano lacks. `eig` and `qr` have none, as in Theano.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from xdsl.ir import Operation

from arignote.dialects import ag
from arignote.graph import Variable, apply_op
from arignote.tensor import basic as T
from arignote.tensor import subtensor as S
from arignote.tensor.grad_rules import RULES

logger = logging.getLogger(__name__)

__all__ = [
    "AllocDiag",
    "Det",
    "Eig",
    "Eigh",
    "EighGrad",
    "ExtractDiag",
    "MatrixInverse",
    "MatrixPinv",
    "QRFull",
    "QRIncomplete",
    "SVD",
    "TensorInv",
    "TensorSolve",
    "alloc_diag",
    "det",
    "diag",
    "eig",
    "eigh",
    "extract_diag",
    "lstsq",
    "matrix_dot",
    "matrix_inverse",
    "matrix_power",
    "norm",
    "pinv",
    "qr",
    "svd",
    "tensorinv",
    "tensorsolve",
    "trace",
]

_FLOAT_OF_INT = {
    "bool": "float32",
    "int8": "float32",
    "int16": "float32",
    "int32": "float64",
    "int64": "float64",
}


def as_float_matrix(name: str, x: Any, ndims: Sequence[int] = (2,)) -> Variable:
    """`x` as a float tensor of one of `ndims` dimensions (TypeError naming `name`)."""
    v = T.as_tensor_variable(x)
    if v.ndim not in ndims:
        wanted = " or ".join(f"{n}-d" for n in ndims)
        raise TypeError(f"{name}: expected a {wanted} tensor, got a {v.ndim}-d one ({v.type})")
    if v.dtype in _FLOAT_OF_INT:
        v = T.cast(v, _FLOAT_OF_INT[v.dtype])
    return v


def apply_all(op: Operation) -> list[Variable]:
    """The variables of every result of a freshly built op."""
    first = apply_op(op)
    return [first, *(Variable(r) for r in op.results[1:])]


def _build(name: str, make: Any, x: Any) -> Operation:
    """`make(value)`, a ValueError of the op's static checks becoming Theano's error."""
    try:
        return make(x.value)
    except ValueError as e:
        raise ValueError(f"{name}: {str(e).split(': ', 1)[-1]}") from e


def eye_like(n: Any, dtype: str) -> Variable:
    """The `n x n` identity (`n` a symbolic length), of `dtype`."""
    i = S.arange(n)
    return T.cast(T.eq(i.dimshuffle(0, "x"), i.dimshuffle("x", 0)), dtype)


def tri_mask(x: Variable, lower: bool, k: int = 0) -> Variable:
    """The bool mask of `x`'s lower (`i >= j - k`) or upper (`i <= j - k`) triangle."""
    rows = S.arange(x.shape[0]).dimshuffle(0, "x")
    cols = S.arange(x.shape[1]).dimshuffle("x", 0)
    return T.ge(rows + k, cols) if lower else T.le(rows + k, cols)


def tril(x: Variable, k: int = 0) -> Variable:
    """The lower triangle of a matrix (`numpy.tril`)."""
    return T.switch(tri_mask(x, True, k), x, T.zeros_like(x))


def triu(x: Variable, k: int = 0) -> Variable:
    """The upper triangle of a matrix (`numpy.triu`)."""
    return T.switch(tri_mask(x, False, k), x, T.zeros_like(x))


class LinalgOp:
    """A Theano-style op object: equal by type and `__props__`, called on variables."""

    __props__: tuple[str, ...] = ()

    def _props(self) -> tuple[Any, ...]:
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._props() == other._props()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._props()))

    def __str__(self) -> str:
        if not self.__props__:
            return type(self).__name__
        shown = ", ".join(f"{p}={getattr(self, p)!r}" for p in self.__props__)
        return f"{type(self).__name__}{{{shown}}}"

    __repr__ = __str__


# --- inverse, determinant, products ----------------------------------------------------


class MatrixInverse(LinalgOp):
    """The inverse of a square matrix (LinAlgError when it is singular)."""

    def __call__(self, x: Any) -> Variable:
        v = as_float_matrix("matrix_inverse", x)
        return apply_op(_build("matrix_inverse", ag.MatrixInverseOp, v))


matrix_inverse = MatrixInverse()


def matrix_dot(*args: Any) -> Variable:
    """`args[0] · args[1] · ... · args[-1]`, left to right."""
    result = T.as_tensor_variable(args[0])
    for a in args[1:]:
        result = T.dot(result, a)
    return result


class Det(LinalgOp):
    """The determinant of a square matrix, a 0-d tensor (0 for a singular matrix)."""

    def __call__(self, x: Any) -> Variable:
        v = as_float_matrix("det", x)
        return apply_op(_build("det", ag.DetOp, v))


det = Det()


def matrix_power(M: Any, n: int) -> Variable:  # noqa: N803 - Theano's name
    """`M` to the integer power `n >= 0` by repeated products (Theano's; `n = 0` gives
    the scalar 1, as Theano)."""
    if int(n) != n or n < 0:
        raise ValueError(f"matrix_power: n must be a non-negative Python int, got {n!r}")
    m = T.as_tensor_variable(M)
    if n == 0:
        return T.as_tensor_variable(1)
    result = m
    for _ in range(int(n) - 1):
        result = T.dot(result, m)
    return result


# --- diagonals, trace, norms -----------------------------------------------------------


class ExtractDiag(LinalgOp):
    """The main diagonal of a matrix, a vector of length `min(rows, cols)`."""

    __props__ = ("offset", "axis1", "axis2", "view")

    def __init__(self, offset: int = 0, axis1: int = 0, axis2: int = 1, view: bool = False):
        if (offset, axis1, axis2) != (0, 0, 1):
            raise NotImplementedError("ExtractDiag: only the main diagonal of a matrix")
        self.offset, self.axis1, self.axis2, self.view = offset, axis1, axis2, view

    def __call__(self, x: Any) -> Variable:
        v = T.as_tensor_variable(x)
        if v.ndim != 2:
            raise TypeError(f"extract_diag: expected a matrix, got a {v.ndim}-d tensor")
        i = S.arange(T.minimum(v.shape[0], v.shape[1]))
        return v[i, i]


extract_diag = ExtractDiag()


class AllocDiag(LinalgOp):
    """The square matrix with the vector `x` on its diagonal, zeros elsewhere."""

    def __call__(self, x: Any) -> Variable:
        v = T.as_tensor_variable(x)
        if v.ndim != 1:
            raise TypeError(f"AllocDiag only works on vectors, got a {v.ndim}-d tensor")
        n = v.shape[0]
        i = S.arange(n)
        return S.set_subtensor(S.zeros((n, n), dtype=v.dtype)[i, i], v)


alloc_diag = AllocDiag()


def diag(x: Any) -> Variable:
    """A vector's diagonal matrix, or a matrix's diagonal (NumPy's `diag`, no `k`)."""
    v = T.as_tensor_variable(x)
    if v.ndim == 1:
        return alloc_diag(v)
    if v.ndim == 2:
        return extract_diag(v)
    raise TypeError(f"diag requires a vector or matrix argument, got a {v.ndim}-d tensor")


def trace(X: Any) -> Variable:  # noqa: N803 - Theano's name
    """The sum of the diagonal elements of the matrix `X`."""
    return T.sum(extract_diag(X))


def _vector_norm(x: Variable, ord: Any) -> Variable:  # noqa: A002 - Theano's name
    if ord is None:
        return T.sum(x**2) ** 0.5
    if ord == "inf":
        return T.max(abs(x))
    if ord == "-inf":
        return T.min(abs(x))
    if ord == 0:
        return T.sum(T.neq(x, 0))
    if isinstance(ord, str):
        raise ValueError("Invalid norm order for vectors.")
    return T.sum(abs(x**ord)) ** (1.0 / ord)


def _matrix_norm(x: Variable, ord: Any) -> Variable:  # noqa: A002 - Theano's name
    if ord is None or ord == "fro":
        return T.sum(abs(x**2)) ** 0.5
    if ord == "inf":
        return T.max(T.sum(abs(x), 1))
    if ord == "-inf":
        return T.min(T.sum(abs(x), 1))
    if ord == 1:
        return T.max(T.sum(abs(x), 0))
    if ord == -1:
        return T.min(T.sum(abs(x), 0))
    raise ValueError(f"Invalid norm order for matrices: {ord!r}")


def norm(x: Any, ord: Any) -> Variable:  # noqa: A002 - Theano's name
    """Theano's norms: of a vector, `ord` None (2-norm), 'inf', '-inf', 0 (the count of
    non-zeros) or a number p; of a matrix, None/'fro', 'inf', '-inf', 1 or -1."""
    v = T.as_tensor_variable(x)
    if v.ndim == 0:
        raise ValueError("'axis' entry is out of bounds.")
    if v.ndim == 1:
        return _vector_norm(v, ord)
    if v.ndim == 2:
        return _matrix_norm(v, ord)
    raise NotImplementedError("We don't support norm with ndim > 2")


# --- eigensystems ------------------------------------------------------------------------


class Eig(LinalgOp):
    """`[w, v]`: eigenvalues and right eigenvectors (unit columns) of a square matrix, as
    `numpy.linalg.eig`, for matrices with real eigenvalues (arignote has no complex
    dtype: complex ones raise LinAlgError). No gradient, as Theano."""

    def __call__(self, x: Any) -> list[Variable]:
        v = as_float_matrix("eig", x)
        return apply_all(_build("eig", ag.EigOp, v))


eig = Eig()


class Eigh(LinalgOp):
    """`[w, v]`: ascending eigenvalues and orthonormal eigenvectors of a symmetric
    matrix, reading its lower (`UPLO='L'`) or upper triangle."""

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):  # noqa: N803 - Theano's name
        if UPLO not in ("L", "U"):
            raise ValueError(f"Eigh: UPLO must be 'L' or 'U', got {UPLO!r}")
        self.UPLO = UPLO

    def __call__(self, x: Any) -> list[Variable]:
        v = as_float_matrix("eigh", x)
        return apply_all(_build("eigh", lambda a: ag.EighOp(a, self.UPLO == "U"), v))


def eigh(a: Any, UPLO: str = "L") -> list[Variable]:  # noqa: N803 - Theano's name
    """`Eigh(UPLO)(a)`."""
    return Eigh(UPLO)(a)


class EighGrad(LinalgOp):
    """The gradient of `Eigh(UPLO)` at `x` with eigenpairs `w, v` and output gradients
    `gw, gv` (Theano's op, here a composition): `V (diag(gw) + (F * Vᵀ gv)ᵀ) Vᵀ` with
    `F[m, n] = 1 / (w[n] - w[m])` off the diagonal, then folded onto the triangle the
    eigensolver reads."""

    __props__ = ("UPLO",)

    def __init__(self, UPLO: str = "L"):  # noqa: N803 - Theano's name
        self.UPLO = UPLO

    def __call__(self, x: Any, w: Any, v: Any, gw: Any, gv: Any) -> Variable:
        v_, w_ = T.as_tensor_variable(v), T.as_tensor_variable(w)
        differences = w_.dimshuffle("x", 0) - w_.dimshuffle(0, "x")
        off = T.neq(eye_like(w_.shape[0], "int8"), 1)
        f = T.switch(off, 1.0 / T.switch(off, differences, 1), 0)
        inner = T.transpose(f * T.dot(v_.T, gv))
        g = matrix_dot(v_, alloc_diag(gw) + inner, v_.T)
        lower = self.UPLO == "L"
        return tril(g) + triu(g, 1).T if lower else triu(g) + tril(g, -1).T


def _eigh_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], grads: list[Variable]
) -> list[Any]:
    assert isinstance(op, ag.EighOp)
    uplo = "U" if op.upper is not None else "L"
    (x,), (w, v), (gw, gv) = inputs, outputs, grads
    return [EighGrad(uplo)(x, w, v, gw, gv)]


# --- QR, SVD, pseudo-inverse, least squares ---------------------------------------------


class QRFull(LinalgOp):
    """`[q, r]` (or `[h, tau]` for mode 'raw') of `numpy.linalg.qr(x, mode)`."""

    __props__ = ("mode",)

    def __init__(self, mode: str):
        self.mode = mode

    def __call__(self, x: Any) -> list[Variable]:
        v = as_float_matrix("qr", x)
        return apply_all(_build("qr", lambda a: ag.QrOp(a, self.mode), v))


class QRIncomplete(QRFull):
    """`r` of `numpy.linalg.qr(x, mode)` for mode 'r'."""

    def __call__(self, x: Any) -> Variable:  # type: ignore[override]
        return super().__call__(x)[0]


def qr(a: Any, mode: str = "reduced") -> Any:
    """NumPy's QR decomposition: mode 'reduced' gives `[q, r]` of shapes `(M, K)`,
    `(K, N)` (`K = min(M, N)`), 'complete' `(M, M)`, `(M, N)`, 'r' only `r` `(K, N)`, and
    'raw' LAPACK's `[h, tau]` of shapes `(N, M)` (transposed) and `(K,)`."""
    if mode not in ag.lapack.QR_MODES:
        raise ValueError(f"qr: unrecognized mode {mode!r}")
    return QRIncomplete(mode)(a) if mode == "r" else QRFull(mode)(a)


class SVD(LinalgOp):
    """`[u, s, vt]` of `numpy.linalg.svd(x, full_matrices)`, or `s` alone without
    `compute_uv` (a list of one variable, as Theano's op has one output)."""

    __props__ = ("full_matrices", "compute_uv")

    def __init__(self, full_matrices: bool = True, compute_uv: bool = True):
        self.full_matrices = bool(full_matrices)
        self.compute_uv = bool(compute_uv)

    def __call__(self, x: Any) -> Any:
        v = as_float_matrix("svd", x)
        outs = apply_all(
            _build("svd", lambda a: ag.SvdOp(a, self.full_matrices, self.compute_uv), v)
        )
        return outs if self.compute_uv else outs[0]


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """`[u, s, vt]` (`s` descending, `u` and `vt` square with `full_matrices`), or `s`
    alone when `compute_uv` is false."""
    return SVD(full_matrices, compute_uv)(a)


def _svd_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], grads: list[Variable]
) -> list[Any]:
    """Townsend's gradient of the reduced SVD (`gs` alone without `compute_uv`)."""
    assert isinstance(op, ag.SvdOp)
    (a,) = inputs
    if op.compute_uv is None:
        u, s, vt = svd(a, full_matrices=False)
        return [matrix_dot(u, alloc_diag(grads[0]), vt)]
    if op.full_matrices is not None:
        raise NotImplementedError(
            "grad of svd with full_matrices=True (the extra singular vectors are not "
            "unique): use full_matrices=False"
        )
    (u, s, vt), (gu, gs, gvt) = outputs, grads
    v, gv = vt.T, gvt.T
    k = s.shape[0]
    s2 = s**2
    off = T.neq(eye_like(k, "int8"), 1)
    f = T.switch(off, 1.0 / T.switch(off, s2.dimshuffle("x", 0) - s2.dimshuffle(0, "x"), 1), 0)
    utgu, vtgv = T.dot(u.T, gu), T.dot(v.T, gv)
    j = f * (utgu - utgu.T)
    kk = f * (vtgv - vtgv.T)
    s_row, s_col = s.dimshuffle("x", 0), s.dimshuffle(0, "x")
    core = j * s_row + alloc_diag(gs) + s_col * kk
    term = matrix_dot(u, core, vt)
    eye_m, eye_n = eye_like(u.shape[0], a.dtype), eye_like(v.shape[0], a.dtype)
    term_u = matrix_dot(eye_m - T.dot(u, u.T), gu / s_row, vt)
    term_v = matrix_dot(u / s_row, gv.T, eye_n - T.dot(v, v.T))
    return [term + term_u + term_v]


class MatrixPinv(LinalgOp):
    """The Moore-Penrose pseudo-inverse, as `numpy.linalg.pinv` (singular values below
    `1e-15` times the largest count as zero), by the SVD; Theano's gradient."""

    def __call__(self, x: Any) -> Variable:
        v = as_float_matrix("pinv", x)
        u, s, vt = svd(v, full_matrices=False)
        cutoff = 1e-15 * T.max(s)
        kept = T.gt(s, cutoff)
        s_inv = T.switch(kept, 1.0 / T.switch(kept, s, 1), 0)
        return T.cast(T.dot(vt.T * s_inv.dimshuffle("x", 0), u.T), v.dtype)


pinv = MatrixPinv()


class lstsq(LinalgOp):  # noqa: N801 - Theano's name
    """`[x, residuals, rank, s]` of `numpy.linalg.lstsq(a, b, rcond)` for a matrix `b`,
    by the SVD: `x` minimizes `|a x - b|`, `residuals` are the squared residual norms
    per column (a vector of `b`'s columns when `a` has full column rank and more rows
    than columns, else empty), `rank` the count of singular values above `rcond` times
    the largest, `s` the singular values. No gradient, as Theano."""

    def __call__(self, a: Any, b: Any, rcond: Any = -1) -> list[Variable]:
        av = as_float_matrix("lstsq", a)
        bv = as_float_matrix("lstsq", b, (1, 2))
        u, s, vt = svd(av, full_matrices=False)
        rc = T.as_tensor_variable(rcond)
        eps = 2.220446049250313e-16 if av.dtype == "float64" else 1.1920929e-07
        cut = T.switch(T.lt(rc, 0), eps, rc) * T.max(s)
        kept = T.gt(s, cut)
        s_inv = T.switch(kept, 1.0 / T.switch(kept, s, 1), 0)
        b2 = bv if bv.ndim == 2 else bv.dimshuffle(0, "x")
        x = T.dot(vt.T * s_inv.dimshuffle("x", 0), T.dot(u.T, b2))
        rank = T.sum(kept, dtype="int64")
        m, n = av.shape[0], av.shape[1]
        full = T.TABLE_FUNCTIONS["and_"](T.eq(rank, n), T.gt(m, n))
        r2 = T.sum((T.dot(av, x) - b2) ** 2, axis=0)
        count = T.switch(full, r2.shape[0], 0)
        residuals = r2[S.arange(count)]
        if bv.ndim == 1:
            x = x[:, 0]
        return [x, T.cast(residuals, "float64"), rank, T.cast(s, "float64")]


# --- tensor inverse and solve ---------------------------------------------------------


class TensorInv(LinalgOp):
    """`numpy.linalg.tensorinv(a, ind)`: the inverse of `a` for `tensordot(., ., ind)`,
    of shape `a.shape[ind:] + a.shape[:ind]` (LinAlgError when the flattened matrix is
    singular; ValueError when it is not square)."""

    __props__ = ("ind",)

    def __init__(self, ind: int = 2):
        if int(ind) != ind or ind <= 0:
            raise ValueError(f"tensorinv: ind must be a positive integer, got {ind!r}")
        self.ind = int(ind)

    def __call__(self, a: Any) -> Variable:
        v = as_float_matrix("tensorinv", a, range(self.ind + 1, 33))
        dims = [v.shape[i] for i in range(v.ndim)]
        rows, cols = dims[: self.ind], dims[self.ind :]
        matrix = S.reshape(v, (_product(rows), _product(cols)))
        inverse = matrix_inverse(matrix)
        return S.reshape(inverse, cols + rows, ndim=v.ndim)


def _product(lengths: Sequence[Variable]) -> Variable:
    result = lengths[0]
    for length in lengths[1:]:
        result = result * length
    return result


def tensorinv(a: Any, ind: int = 2) -> Variable:
    """`TensorInv(ind)(a)`."""
    return TensorInv(ind)(a)


class TensorSolve(LinalgOp):
    """`numpy.linalg.tensorsolve(a, b, axes)`: `x` with `tensordot(a, x, x.ndim) == b`,
    of shape `a.shape[b.ndim:]` (after moving `axes` of `a` to the end)."""

    __props__ = ("axes",)

    def __init__(self, axes: Sequence[int] | None = None):
        self.axes = None if axes is None else tuple(axes)

    def __call__(self, a: Any, b: Any) -> Variable:
        av, bv = T.as_tensor_variable(a), T.as_tensor_variable(b)
        if av.dtype in _FLOAT_OF_INT:
            av = T.cast(av, _FLOAT_OF_INT[av.dtype])
        if self.axes is not None:
            axes = [x % av.ndim for x in self.axes]
            order = [i for i in range(av.ndim) if i not in axes] + axes
            av = T.transpose(av, order)
        if av.ndim <= bv.ndim:
            raise ValueError(f"tensorsolve: a has {av.ndim} dimensions, b {bv.ndim}")
        dims = [av.shape[i] for i in range(av.ndim)]
        x_dims = dims[bv.ndim :]
        matrix = S.reshape(av, (_product(dims[: bv.ndim]), _product(x_dims)))
        rhs = S.flatten(bv) if bv.ndim != 1 else bv
        from arignote.tensor.slinalg import solve

        x = solve(matrix, T.cast(rhs, av.dtype) if rhs.dtype != av.dtype else rhs)
        return S.reshape(x, x_dims, ndim=len(x_dims))


def tensorsolve(a: Any, b: Any, axes: Sequence[int] | None = None) -> Variable:
    """`TensorSolve(axes)(a, b)`."""
    return TensorSolve(axes)(a, b)


# --- gradient rules ---------------------------------------------------------------------


def _inverse_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], grads: list[Variable]
) -> list[Any]:
    (xi,), (gz,) = outputs, grads
    return [-matrix_dot(xi, gz.T, xi).T]


def _det_rule(
    op: Operation, inputs: list[Variable], outputs: list[Variable], grads: list[Variable]
) -> list[Any]:
    (x,), (d,), (gz,) = inputs, outputs, grads
    return [gz * d * matrix_inverse(x).T]


# linear algebra (issue 13 item 5)
RULES.update(
    {
        ag.MatrixInverseOp: _inverse_rule,
        ag.DetOp: _det_rule,
        ag.EighOp: _eigh_rule,
        ag.SvdOp: _svd_rule,
    }
)
