"""The reference interpreter's LAPACK-backed ops (`ag.matrix_inverse`, `ag.det`,
`ag.cholesky`, `ag.solve`, `ag.eigh`, `ag.eig`, `ag.svd`, `ag.qr`) with `numpy.linalg`.

A matrix that must be square and is not is a ValueError naming the op (as the native
shape check says); a numerical failure is `numpy.linalg.LinAlgError` naming the op and
one of `ag.LAPACK_ERRORS` (the native kernels raise the same). Triangular solves are
substitutions written here (NumPy has none): exact, like LAPACK's `trtrs`, up to
rounding, and singular where a diagonal element is zero, as `trtrs` says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.ir import Operation

from arignote.dialects import ag
from arignote.dialects.ag import lapack
from arignote.runtime.interpreter import Array, _label, _operands, check_value


def linalg_error(op: Operation, code: int) -> np.linalg.LinAlgError:
    """The error of `op` failing with `ag.LAPACK_ERRORS[code]`."""
    return np.linalg.LinAlgError(f"{_label(op)}: {ag.LAPACK_ERRORS[code]}")


def _square(op: Operation, a: Array) -> None:
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"{_label(op)}: expected a square matrix, got shape {a.shape}")


def _results(op: Operation, values: tuple[Any, ...]) -> PythonValues:
    return tuple(
        check_value(_label(op), f"result #{i}", v, r.type)
        for i, (v, r) in enumerate(zip(values, op.results, strict=True))
    )


def _run(op: Operation, code: int, fn: Callable[[], tuple[Any, ...]], dtype: Any) -> PythonValues:
    """`fn()`'s values as arrays of `dtype`; LinAlgError `code` if NumPy raises one."""
    try:
        with np.errstate(all="ignore"):
            values = fn()
    except np.linalg.LinAlgError as e:
        raise linalg_error(op, code) from e
    return _results(op, tuple(np.asarray(v, dtype=dtype) for v in values))


def triangular_solve(a: Array, b: Array, lower: bool) -> Array:
    """`x` with `tri(a) x = b` by substitution, reading only the triangle of `a`
    (LinAlgError when a diagonal element is zero)."""
    n = a.shape[0]
    if np.any(np.diagonal(a) == 0):
        raise np.linalg.LinAlgError("singular triangular matrix")
    x = np.array(b, dtype=np.result_type(a, b))
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        done = slice(0, i) if lower else slice(i + 1, n)
        x[i] = (x[i] - a[i, done] @ x[done]) / a[i, i]
    return x


def _cholesky(a: Array, lower: bool) -> Array:
    if lower:
        return np.linalg.cholesky(a)  # reads the lower triangle
    return np.linalg.cholesky(a.T).T  # a.T's lower triangle is a's upper one


def _eig(a: Array) -> tuple[Array, Array]:
    w, v = np.linalg.eig(a)
    if np.iscomplexobj(w):
        raise ValueError("complex")
    return w, v


@register_impls
class LapackFunctions(InterpreterFunctions):
    """NumPy implementations of the `ag` linear algebra ops."""

    @impl(ag.MatrixInverseOp)
    def run_inverse(
        self, interpreter: Interpreter, op: ag.MatrixInverseOp, args: PythonValues
    ) -> PythonValues:
        (a,) = _operands(op, args)
        _square(op, a)
        return _run(op, lapack.SINGULAR, lambda: (np.linalg.inv(a),), a.dtype)

    @impl(ag.DetOp)
    def run_det(self, interpreter: Interpreter, op: ag.DetOp, args: PythonValues) -> PythonValues:
        (a,) = _operands(op, args)
        _square(op, a)
        return _run(op, lapack.SINGULAR, lambda: (np.linalg.det(a),), a.dtype)

    @impl(ag.CholeskyOp)
    def run_cholesky(
        self, interpreter: Interpreter, op: ag.CholeskyOp, args: PythonValues
    ) -> PythonValues:
        (a,) = _operands(op, args)
        _square(op, a)
        lower = op.lower is not None
        if op.nan_on_error is None:
            return _run(op, lapack.NOT_POSITIVE_DEFINITE, lambda: (_cholesky(a, lower),), a.dtype)
        try:
            with np.errstate(all="ignore"):
                factor = _cholesky(a, lower)
        except np.linalg.LinAlgError:
            factor = np.full(a.shape, np.nan)
        return _results(op, (np.asarray(factor, dtype=a.dtype),))

    @impl(ag.SolveOp)
    def run_solve(
        self, interpreter: Interpreter, op: ag.SolveOp, args: PythonValues
    ) -> PythonValues:
        a, b = _operands(op, args)
        _square(op, a)
        if a.shape[0] != b.shape[0]:
            raise ValueError(
                f"{_label(op)}: a of shape {a.shape} and b of shape {b.shape} do not match"
            )
        structure = op.structure_value
        if structure.endswith("triangular"):
            lower = structure == "lower_triangular"
            return _run(op, lapack.SINGULAR, lambda: (triangular_solve(a, b, lower),), a.dtype)
        return _run(op, lapack.SINGULAR, lambda: (np.linalg.solve(a, b),), a.dtype)

    @impl(ag.EighOp)
    def run_eigh(self, interpreter: Interpreter, op: ag.EighOp, args: PythonValues) -> PythonValues:
        (a,) = _operands(op, args)
        _square(op, a)
        uplo = "U" if op.upper is not None else "L"
        return _run(op, lapack.EIG_NOT_CONVERGED, lambda: tuple(np.linalg.eigh(a, uplo)), a.dtype)

    @impl(ag.EigOp)
    def run_eig(self, interpreter: Interpreter, op: ag.EigOp, args: PythonValues) -> PythonValues:
        (a,) = _operands(op, args)
        _square(op, a)
        try:
            return _run(op, lapack.EIG_NOT_CONVERGED, lambda: _eig(a), a.dtype)
        except ValueError as e:
            raise linalg_error(op, lapack.COMPLEX) from e

    @impl(ag.SvdOp)
    def run_svd(self, interpreter: Interpreter, op: ag.SvdOp, args: PythonValues) -> PythonValues:
        (a,) = _operands(op, args)
        full, uv = op.full_matrices is not None, op.compute_uv is not None

        def svd() -> tuple[Any, ...]:
            if not uv:
                return (np.linalg.svd(a, full_matrices=full, compute_uv=False),)
            return tuple(np.linalg.svd(a, full_matrices=full))

        return _run(op, lapack.SVD_NOT_CONVERGED, svd, a.dtype)

    @impl(ag.QrOp)
    def run_qr(self, interpreter: Interpreter, op: ag.QrOp, args: PythonValues) -> PythonValues:
        (a,) = _operands(op, args)
        mode = op.mode_value

        def qr() -> tuple[Any, ...]:
            result = np.linalg.qr(a, mode=mode)  # pyright: ignore[reportCallIssue, reportArgumentType]
            return (result,) if mode == "r" else tuple(result)

        return _run(op, lapack.BAD_ARGUMENT, qr, a.dtype)
