"""`ag.dot` and the BLAS-shaped `ag.gemv`/`ag.gemm` the `specialize` pass makes."""

from __future__ import annotations

import abc
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    TensorType,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    DYNAMIC,
    AgOperation,
    Shape,
    _check_tensor,
    _expect_result,
    _verify_with_value_error,
    shape_str,
    ssa_value,
    tensor_of,
    tensor_type,
)

# --- linear algebra --------------------------------------------------------------------


def dot_shape(lhs: Sequence[int], rhs: Sequence[int]) -> Shape:
    """The result shape of `dot` for vectors and matrices (ValueError if invalid)."""
    if not (1 <= len(lhs) <= 2 and 1 <= len(rhs) <= 2):
        raise ValueError(
            f"ag.dot: operands must be vectors or matrices, got shapes "
            f"{shape_str(lhs)} and {shape_str(rhs)}"
        )
    k_lhs, k_rhs = lhs[-1], rhs[0]
    if DYNAMIC not in (k_lhs, k_rhs) and k_lhs != k_rhs:
        raise ValueError(
            f"ag.dot: contracted dimensions differ: {shape_str(lhs)} and {shape_str(rhs)}"
        )
    return tuple(lhs[:-1]) + tuple(rhs[1:])


@irdl_op_definition
class DotOp(AgOperation):
    """The dot product of vectors and matrices: vector·vector (a 0-d result),
    matrix·vector, vector·matrix and matrix·matrix.

    ```mlir
    %y = ag.dot %a, %x : tensor<?x?xf32>, tensor<?xf32> -> tensor<?xf32>
    ```
    """

    name = "ag.dot"

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, lhs: SSAValue | Operation, rhs: SSAValue | Operation):
        a, b = ssa_value(lhs), ssa_value(rhs)
        at, bt = tensor_type(a), tensor_type(b)
        shape = dot_shape(at.get_shape(), bt.get_shape())
        super().__init__(operands=[a, b], result_types=[tensor_of(at.element_type, shape)])

    def verify_(self) -> None:
        at = _check_tensor(self, "lhs", self.lhs.type, "arith")
        bt = _check_tensor(self, "rhs", self.rhs.type, "arith")
        if at.element_type != bt.element_type:
            raise VerifyException(
                f"'{self.name}' op operands must have one element type, got {at} and {bt}"
            )
        try:
            shape = dot_shape(at.get_shape(), bt.get_shape())
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {str(e).split(': ', 1)[1]}") from e
        _expect_result(self, tensor_of(at.element_type, shape), self.result.type)


# --- BLAS-shaped linear algebra (made by the `specialize` pass) -------------------------


def _blas_dims(shape: Sequence[int], transpose: bool) -> tuple[int, int]:
    """(rows, columns) of a matrix operand as used, after the optional transposition."""
    return (shape[1], shape[0]) if transpose else (shape[0], shape[1])


def _merge_dims(name: str, what: str, a: int, b: int) -> int:
    """Two lengths that must be equal: the static one; ValueError if both static differ."""
    if DYNAMIC not in (a, b) and a != b:
        raise ValueError(f"{name}: {what} differ: {a} vs {b}")
    return b if a == DYNAMIC else a


def gemv_shape(
    name: str,
    a: Sequence[int],
    x: Sequence[int],
    y0: Sequence[int] | None,
    transpose_a: bool = False,
) -> Shape:
    """The result shape of `ag.gemv` (ValueError naming `name` if invalid)."""
    if len(a) != 2 or len(x) != 1 or (y0 is not None and len(y0) != 1):
        raise ValueError(
            f"{name}: expected a matrix and vectors, got shapes {shape_str(a)}, "
            f"{shape_str(x)}" + ("" if y0 is None else f" and {shape_str(y0)}")
        )
    rows, cols = _blas_dims(a, transpose_a)
    _merge_dims(name, "contracted dimensions", cols, x[0])
    if y0 is not None:
        rows = _merge_dims(name, "lengths of the product and the accumulated vector", rows, y0[0])
    return (rows,)


def gemm_shape(
    name: str,
    a: Sequence[int],
    b: Sequence[int],
    z0: Sequence[int] | None,
    transpose_a: bool = False,
    transpose_b: bool = False,
) -> Shape:
    """The result shape of `ag.gemm` (ValueError naming `name` if invalid)."""
    if len(a) != 2 or len(b) != 2 or (z0 is not None and len(z0) != 2):
        raise ValueError(
            f"{name}: expected matrices, got shapes {shape_str(a)}, {shape_str(b)}"
            + ("" if z0 is None else f" and {shape_str(z0)}")
        )
    m, k = _blas_dims(a, transpose_a)
    k2, n = _blas_dims(b, transpose_b)
    _merge_dims(name, "contracted dimensions", k, k2)
    if z0 is not None:
        m = _merge_dims(name, "row counts of the product and the accumulated matrix", m, z0[0])
        n = _merge_dims(name, "column counts of the product and the accumulated matrix", n, z0[1])
    return (m, n)


INITIAL_OPERAND = 4
"""The operand index of the accumulated tensor of a BLAS op that accumulates:
`alpha, a, b, beta, initial` for `ag.gemm`/`ag.gemv`, `a, x, alpha, beta, r0` for
`ag.gemv_pair` (an `ag.destroy_map` computing a result over it names this index)."""


class _BlasOp(AgOperation, abc.ABC):
    """`alpha * op(A)·op(B) [+ beta * C0]` with 0-d `alpha`/`beta` (the shape of BLAS's
    gemv/gemm). `acc` holds either nothing or `[beta, C0]`; without it the product is
    not accumulated (BLAS's `beta = 0`). f32 or f64 only."""

    alpha = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    acc = var_operand_def(TensorType)
    transpose_a = opt_prop_def(UnitAttr)
    result = result_def(TensorType)

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    assembly_format = (
        "$alpha `,` $a `,` $b (`,` $acc^)? attr-dict `:` type($alpha) `,` type($a) `,` "
        "type($b) (`,` type($acc)^)? `->` type($result)"
    )

    @property
    def beta(self) -> SSAValue | None:
        return self.acc[0] if self.acc else None

    @property
    def initial(self) -> SSAValue | None:
        """The accumulated tensor (`y0` / `Z0`), if any."""
        return self.acc[1] if self.acc else None

    @abc.abstractmethod
    def infer_shape(self, types: Sequence[TensorType]) -> Shape: ...

    def verify_(self) -> None:
        if len(self.acc) not in (0, 2):
            raise VerifyException(
                f"'{self.name}' op takes either no accumulation or `beta, initial`, got "
                f"{len(self.acc)} extra operands"
            )
        names = ("alpha", "a", "b", "beta", "initial")[: 3 + len(self.acc)]
        values = [self.alpha, self.a, self.b, *self.acc]
        types = [
            _check_tensor(self, n, v.type, "float") for n, v in zip(names, values, strict=True)
        ]
        element = types[1].element_type
        for n, t in zip(names, types, strict=True):
            if t.element_type != element:
                raise VerifyException(
                    f"'{self.name}' op operands must have one element type, got {n} {t} "
                    f"and a {types[1]}"
                )
        for n, t in zip(names, types, strict=True):
            if n in ("alpha", "beta") and t.get_num_dims() != 0:
                raise VerifyException(f"'{self.name}' op {n} must be a 0-d tensor, got {t}")
        shape = _verify_with_value_error(self, lambda: self.infer_shape(types))
        _expect_result(self, tensor_of(element, shape), self.result.type)


def _blas_operands(
    alpha: SSAValue | Operation,
    a: SSAValue | Operation,
    b: SSAValue | Operation,
    beta: SSAValue | Operation | None,
    initial: SSAValue | Operation | None,
) -> tuple[list[SSAValue], list[SSAValue]]:
    if (beta is None) != (initial is None):
        raise ValueError("beta and the accumulated tensor go together")
    main = [ssa_value(v) for v in (alpha, a, b)]
    acc = [] if beta is None or initial is None else [ssa_value(beta), ssa_value(initial)]
    return main, acc


@irdl_op_definition
class GemvOp(_BlasOp):
    """`alpha * A·x + beta * y0` (Theano's `Gemv`; BLAS's `?gemv`), `A` a matrix, `x` and
    `y0` vectors, `alpha`/`beta` 0-d; with `transpose_a`, `A`ᵀ replaces `A`. Without
    `beta, y0` it is `alpha * A·x` (`ag.dot` of a matrix and a vector when alpha is 1).

    ```mlir
    %y = ag.gemv %alpha, %a, %x, %beta, %y0 : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>,
           tensor<f32>, tensor<?xf32> -> tensor<?xf32>
    %z = ag.gemv %alpha, %a, %v {transpose_a} : tensor<f32>, tensor<?x?xf32>, tensor<?xf32>
           -> tensor<?xf32>
    ```
    """

    name = "ag.gemv"

    @property
    def x(self) -> SSAValue:
        return self.b

    def __init__(
        self,
        alpha: SSAValue | Operation,
        a: SSAValue | Operation,
        x: SSAValue | Operation,
        beta: SSAValue | Operation | None = None,
        y0: SSAValue | Operation | None = None,
        transpose_a: bool = False,
    ):
        main, acc = _blas_operands(alpha, a, x, beta, y0)
        shape = gemv_shape(
            self.name,
            tensor_type(main[1]).get_shape(),
            tensor_type(main[2]).get_shape(),
            tensor_type(acc[1]).get_shape() if acc else None,
            transpose_a,
        )
        super().__init__(
            operands=[*main, acc],
            properties={"transpose_a": UnitAttr()} if transpose_a else {},
            result_types=[tensor_of(tensor_type(main[1]).element_type, shape)],
        )

    def infer_shape(self, types: Sequence[TensorType]) -> Shape:
        shapes = [t.get_shape() for t in types]
        return gemv_shape(
            self.name,
            shapes[1],
            shapes[2],
            shapes[4] if len(shapes) == 5 else None,
            self.transpose_a is not None,
        )


@irdl_op_definition
class GemmOp(_BlasOp):
    """`alpha * A·B + beta * Z0` (Theano's `Gemm`; BLAS's `?gemm`) of matrices, with
    `alpha`/`beta` 0-d; `transpose_a`/`transpose_b` use `A`ᵀ/`B`ᵀ. Without `beta, Z0` it
    is `alpha * A·B`.

    ```mlir
    %z = ag.gemm %alpha, %a, %b : tensor<f64>, tensor<?x?xf64>, tensor<?x?xf64>
           -> tensor<?x?xf64>
    ```
    """

    name = "ag.gemm"

    transpose_b = opt_prop_def(UnitAttr)

    def __init__(
        self,
        alpha: SSAValue | Operation,
        a: SSAValue | Operation,
        b: SSAValue | Operation,
        beta: SSAValue | Operation | None = None,
        z0: SSAValue | Operation | None = None,
        transpose_a: bool = False,
        transpose_b: bool = False,
    ):
        main, acc = _blas_operands(alpha, a, b, beta, z0)
        shape = gemm_shape(
            self.name,
            tensor_type(main[1]).get_shape(),
            tensor_type(main[2]).get_shape(),
            tensor_type(acc[1]).get_shape() if acc else None,
            transpose_a,
            transpose_b,
        )
        properties: dict[str, Attribute] = {}
        if transpose_a:
            properties["transpose_a"] = UnitAttr()
        if transpose_b:
            properties["transpose_b"] = UnitAttr()
        super().__init__(
            operands=[*main, acc],
            properties=properties,
            result_types=[tensor_of(tensor_type(main[1]).element_type, shape)],
        )

    def infer_shape(self, types: Sequence[TensorType]) -> Shape:
        shapes = [t.get_shape() for t in types]
        return gemm_shape(
            self.name,
            shapes[1],
            shapes[2],
            shapes[4] if len(shapes) == 5 else None,
            self.transpose_a is not None,
            self.transpose_b is not None,
        )


BLAS_OPS: tuple[type[_BlasOp], ...] = (GemvOp, GemmOp)
"""The BLAS-shaped ops (`specialize` makes them from `ag.dot`)."""
