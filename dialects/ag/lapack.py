"""LAPACK-backed linear algebra (Theano's `nlinalg`/`slinalg` ops): inverse, determinant,
Cholesky factor, linear solves, symmetric and general eigensystems, SVD and QR.

Every op takes f32 or f64 matrices and computes in that precision; its results have
the operand's element type. A matrix the op needs square (`ag.matrix_inverse`, `ag.det`,
`ag.cholesky`, `ag.solve`'s `a`, `ag.eigh`, `ag.eig`) is checked statically where its
type says, at run time otherwise. Numerical failures (a singular matrix, one that is not
positive definite, an iteration that did not converge, complex eigenvalues for
`ag.eig`) are run-time errors: `numpy.linalg.LinAlgError` naming the op, in the
interpreter and in native code alike (`LAPACK_ERRORS` lists the reasons).

```mlir
%inv = ag.matrix_inverse %a : tensor<?x?xf64> -> tensor<?x?xf64>
%l = ag.cholesky %s {lower} : tensor<3x3xf32> -> tensor<3x3xf32>
%x = ag.solve %a, %b {structure = "lower_triangular"} : tensor<?x?xf64>, tensor<?xf64>
       -> tensor<?xf64>
%w, %v = ag.eigh %s : tensor<?x?xf64> -> tensor<?xf64>, tensor<?x?xf64>
```
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import StringAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    DYNAMIC,
    AgOperation,
    Shape,
    _check_tensor,
    shape_str,
    tensor_of,
    tensor_type,
)

LAPACK_ERRORS: tuple[str, ...] = (
    "",
    "Singular matrix",
    "Matrix is not positive definite",
    "Eigenvalues did not converge",
    "SVD did not converge",
    "complex eigenvalues (arignote has no complex dtype)",
    "LAPACK rejected an argument",
)
"""The reasons a LAPACK-backed op fails at run time, by code (native code passes the code
to the runtime's error callback; 0 is no error)."""

SINGULAR, NOT_POSITIVE_DEFINITE, EIG_NOT_CONVERGED, SVD_NOT_CONVERGED, COMPLEX, BAD_ARGUMENT = (
    range(1, 7)
)

SOLVE_STRUCTURES = ("general", "symmetric", "lower_triangular", "upper_triangular")
"""The `structure` values of `ag.solve` (Theano's `Solve.A_structure` that it computes)."""

QR_MODES = ("reduced", "complete", "r", "raw")
"""The `mode` values of `ag.qr` (NumPy's `linalg.qr` modes)."""


def _merge(name: str, what: str, a: int, b: int) -> int:
    if DYNAMIC not in (a, b) and a != b:
        raise ValueError(f"{name}: {what}")
    return b if a == DYNAMIC else a


def square_length(name: str, shape: Sequence[int]) -> int:
    """The order of a square matrix of `shape` (`DYNAMIC` if unknown); ValueError naming
    `name` unless it is a matrix that may be square."""
    if len(shape) != 2:
        raise ValueError(f"{name}: expected a matrix, got shape {shape_str(shape)}")
    return _merge(name, f"expected a square matrix, got shape {shape_str(shape)}", *shape)


def square_shape(name: str, shape: Sequence[int]) -> Shape:
    """The shape of a result like the square operand of `shape`."""
    n = square_length(name, shape)
    return (n, n)


def det_shape(name: str, shape: Sequence[int]) -> Shape:
    """A 0-d result of a square operand of `shape`."""
    square_length(name, shape)
    return ()


def eig_shapes(name: str, shape: Sequence[int]) -> list[Shape]:
    """Eigenvalues `(n,)` and eigenvectors `(n, n)` of a square operand of `shape`."""
    n = square_length(name, shape)
    return [(n,), (n, n)]


def _min_dim(m: int, n: int) -> int:
    return DYNAMIC if DYNAMIC in (m, n) else min(m, n)


def _matrix_dims(name: str, shape: Sequence[int]) -> tuple[int, int]:
    if len(shape) != 2:
        raise ValueError(f"{name}: expected a matrix, got shape {shape_str(shape)}")
    return shape[0], shape[1]


def svd_shapes(name: str, shape: Sequence[int], full: bool, compute_uv: bool) -> list[Shape]:
    """`[u, s, vt]` (or `[s]`) shapes of NumPy's `svd` of a matrix of `shape`."""
    m, n = _matrix_dims(name, shape)
    k = _min_dim(m, n)
    if not compute_uv:
        return [(k,)]
    return [(m, m if full else k), (k,), (n if full else k, n)]


def qr_shapes(name: str, shape: Sequence[int], mode: str) -> list[Shape]:
    """The result shapes of NumPy's `qr` of a matrix of `shape` in `mode`."""
    m, n = _matrix_dims(name, shape)
    k = _min_dim(m, n)
    if mode == "reduced":
        return [(m, k), (k, n)]
    if mode == "complete":
        return [(m, m), (m, n)]
    if mode == "r":
        return [(k, n)]
    return [(n, m), (k,)]


def solve_shape(name: str, a: Sequence[int], b: Sequence[int]) -> Shape:
    """The shape of `x` in `a x = b`: `b`'s, its rows merged with `a`'s order."""
    n = square_length(name, a)
    if len(b) not in (1, 2):
        raise ValueError(f"{name}: b must be a vector or a matrix, got shape {shape_str(b)}")
    rows = _merge(
        name, f"a of shape {shape_str(a)} and b of shape {shape_str(b)} do not match", n, b[0]
    )
    return (rows, *b[1:])


class LapackOp(AgOperation, abc.ABC):
    """An op computed by LAPACK: f32/f64 operands of one element type; subclasses give
    their result shapes (`result_shapes`, ValueError `"<name>: <reason>"` if invalid)."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    @abc.abstractmethod
    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]: ...

    def verify_(self) -> None:
        types = [
            _check_tensor(self, f"operand #{i}", o.type, "float")
            for i, o in enumerate(self.operands)
        ]
        element = types[0].element_type
        if any(t.element_type != element for t in types):
            raise VerifyException(
                f"'{self.name}' op operands must have one element type, got "
                + ", ".join(str(t) for t in types)
            )
        try:
            shapes = self.result_shapes([tuple(t.get_shape()) for t in types])
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {str(e).split(': ', 1)[1]}") from e
        expected = [tensor_of(element, s) for s in shapes]
        got = [r.type for r in self.results]
        if expected != got:
            raise VerifyException(
                f"'{self.name}' op result types {', '.join(map(str, got))} do not match the "
                f"inferred types {', '.join(map(str, expected))}"
            )


class _UnaryLapackOp(LapackOp):
    a = operand_def(TensorType)

    def _init(
        self,
        a: SSAValue | Operation,
        properties: dict[str, Attribute],
        shapes_of: Callable[[Shape], list[Shape]],
    ) -> None:
        value = SSAValue.get(a)
        t = tensor_type(value)
        shapes = shapes_of(tuple(t.get_shape()))
        super().__init__(
            operands=[value],
            properties=properties,
            result_types=[[tensor_of(t.element_type, s) for s in shapes]],
        )


def _flag(name: str, value: bool) -> dict[str, Attribute]:
    return {name: UnitAttr()} if value else {}


@irdl_op_definition
class MatrixInverseOp(_UnaryLapackOp):
    """The inverse of a square matrix (Theano's `MatrixInverse`; LAPACK `getrf`+`getri`).

    ```mlir
    %inv = ag.matrix_inverse %a : tensor<?x?xf64> -> tensor<?x?xf64>
    ```
    """

    name = "ag.matrix_inverse"
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(self, a: SSAValue | Operation):
        self._init(a, {}, lambda s: [square_shape(self.name, s)])

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        return [square_shape(self.name, shapes[0])]


@irdl_op_definition
class DetOp(_UnaryLapackOp):
    """The determinant of a square matrix, 0-d (Theano's `Det`; LAPACK `getrf`).

    ```mlir
    %d = ag.det %a : tensor<?x?xf32> -> tensor<f32>
    ```
    """

    name = "ag.det"
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(self, a: SSAValue | Operation):
        self._init(a, {}, lambda s: [det_shape(self.name, s)])

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        return [det_shape(self.name, shapes[0])]


@irdl_op_definition
class CholeskyOp(_UnaryLapackOp):
    """The Cholesky factor of a symmetric positive definite matrix, lower triangular
    (`lower`) or upper (Theano's `Cholesky`; LAPACK `potrf`); the other triangle is
    zero. Only the factor's own triangle of the operand is read. With `nan_on_error`, a
    matrix that is not positive definite gives a matrix of NaNs instead of an error
    (Theano's `on_error='nan'`).

    ```mlir
    %l = ag.cholesky %a {lower} : tensor<?x?xf64> -> tensor<?x?xf64>
    ```
    """

    name = "ag.cholesky"
    lower = opt_prop_def(UnitAttr)
    nan_on_error = opt_prop_def(UnitAttr)
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(self, a: SSAValue | Operation, lower: bool = True, nan_on_error: bool = False):
        properties = _flag("lower", lower) | _flag("nan_on_error", nan_on_error)
        self._init(a, properties, lambda s: [square_shape(self.name, s)])

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        return [square_shape(self.name, shapes[0])]


@irdl_op_definition
class EighOp(_UnaryLapackOp):
    """Eigenvalues (ascending) and orthonormal eigenvectors (columns) of a symmetric
    matrix, reading its lower triangle, or its upper one with `upper` (Theano's
    `Eigh`; LAPACK `syevd`).

    ```mlir
    %w, %v = ag.eigh %a : tensor<?x?xf64> -> tensor<?xf64>, tensor<?x?xf64>
    ```
    """

    name = "ag.eigh"
    upper = opt_prop_def(UnitAttr)
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(self, a: SSAValue | Operation, upper: bool = False):
        self._init(a, _flag("upper", upper), lambda s: eig_shapes(self.name, s))

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        return eig_shapes(self.name, shapes[0])


@irdl_op_definition
class EigOp(_UnaryLapackOp):
    """Eigenvalues and right eigenvectors (columns of unit norm) of a general square
    matrix whose eigenvalues are real (Theano's `Eig`; LAPACK `geev`), in LAPACK's
    order, as `numpy.linalg.eig`; complex eigenvalues are a run-time error.

    ```mlir
    %w, %v = ag.eig %a : tensor<?x?xf64> -> tensor<?xf64>, tensor<?x?xf64>
    ```
    """

    name = "ag.eig"
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(self, a: SSAValue | Operation):
        self._init(a, {}, lambda s: eig_shapes(self.name, s))

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        return eig_shapes(self.name, shapes[0])


@irdl_op_definition
class SvdOp(_UnaryLapackOp):
    """The singular value decomposition `a = u diag(s) vt` (Theano's `SVD`; LAPACK
    `gesdd`): `u, s, vt` as `numpy.linalg.svd` (square `u`, `vt` with `full_matrices`),
    or only `s` without `compute_uv`; singular values descending.

    ```mlir
    %u, %s, %vt = ag.svd %a {compute_uv} : tensor<?x?xf64>
                    -> tensor<?x?xf64>, tensor<?xf64>, tensor<?x?xf64>
    ```
    """

    name = "ag.svd"
    full_matrices = opt_prop_def(UnitAttr)
    compute_uv = opt_prop_def(UnitAttr)
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(
        self, a: SSAValue | Operation, full_matrices: bool = True, compute_uv: bool = True
    ):
        properties = _flag("full_matrices", full_matrices) | _flag("compute_uv", compute_uv)
        self._init(a, properties, lambda s: svd_shapes(self.name, s, full_matrices, compute_uv))

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        full, uv = self.full_matrices is not None, self.compute_uv is not None
        return svd_shapes(self.name, shapes[0], full, uv)


@irdl_op_definition
class QrOp(_UnaryLapackOp):
    """The QR decomposition as `numpy.linalg.qr(a, mode)` (Theano's `QRFull` /
    `QRIncomplete`; LAPACK `geqrf`+`orgqr`): `q, r` for "reduced" and "complete", `r`
    for "r", and LAPACK's `h` (transposed) and `tau` for "raw".

    ```mlir
    %q, %r = ag.qr %a {mode = "reduced"} : tensor<?x?xf64> -> tensor<?x?xf64>, tensor<?x?xf64>
    ```
    """

    name = "ag.qr"
    mode = prop_def(StringAttr)
    outs = var_result_def(TensorType)
    assembly_format = "$a attr-dict `:` type($a) `->` type($outs)"

    def __init__(self, a: SSAValue | Operation, mode: str = "reduced"):
        if mode not in QR_MODES:
            raise ValueError(f"{self.name}: mode must be one of {QR_MODES}, got {mode!r}")
        self._init(a, {"mode": StringAttr(mode)}, lambda s: qr_shapes(self.name, s, mode))

    @property
    def mode_value(self) -> str:
        return self.mode.data

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        if self.mode_value not in QR_MODES:
            raise ValueError(
                f"{self.name}: mode must be one of {QR_MODES}, got {self.mode_value!r}"
            )
        return qr_shapes(self.name, shapes[0], self.mode_value)


@irdl_op_definition
class SolveOp(LapackOp):
    """`x` with `a x = b` for a square `a` and a vector or matrix `b` (Theano's `Solve`):
    LAPACK `gesv` for a "general" or "symmetric" `a`, `trtrs` for a "lower_triangular"
    or "upper_triangular" one (reading only that triangle). `x` has `b`'s shape.

    ```mlir
    %x = ag.solve %a, %b {structure = "general"} : tensor<?x?xf64>, tensor<?x?xf64>
           -> tensor<?x?xf64>
    ```
    """

    name = "ag.solve"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    structure = prop_def(StringAttr)
    result = result_def(TensorType)
    assembly_format = "$a `,` $b attr-dict `:` type($a) `,` type($b) `->` type($result)"

    def __init__(
        self, a: SSAValue | Operation, b: SSAValue | Operation, structure: str = "general"
    ):
        av, bv = SSAValue.get(a), SSAValue.get(b)
        at, bt = tensor_type(av), tensor_type(bv)
        shape = solve_shape(self.name, at.get_shape(), bt.get_shape())
        super().__init__(
            operands=[av, bv],
            properties={"structure": StringAttr(structure)},
            result_types=[tensor_of(at.element_type, shape)],
        )

    @property
    def structure_value(self) -> str:
        return self.structure.data

    def result_shapes(self, shapes: Sequence[Shape]) -> list[Shape]:
        if self.structure_value not in SOLVE_STRUCTURES:
            raise ValueError(
                f"{self.name}: structure must be one of {SOLVE_STRUCTURES}, got "
                f"{self.structure_value!r}"
            )
        return [solve_shape(self.name, shapes[0], shapes[1])]


LAPACK_OPS: tuple[type[LapackOp], ...] = (
    MatrixInverseOp,
    DetOp,
    CholeskyOp,
    EighOp,
    EigOp,
    SvdOp,
    QrOp,
    SolveOp,
)
"""The LAPACK-backed ops (Theano's `nlinalg`/`slinalg`)."""
