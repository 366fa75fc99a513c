"""More elementwise math (rounding, sigmoid, softplus), argmax/argmin and `ag.dim`.

`log1p`, `expm1`, `floor` and `ceil` are entries of `ag.TABLE` (`elementwise_table`).
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    AgOperation,
    _check_tensor,
    _expect_result,
    i64_array,
    tensor_of,
    tensor_type,
)
from arignote.dialects.ag.elementwise import (
    UnaryElementwiseOp,
)
from arignote.dialects.ag.reductions import (
    reduce_shape,
)

# --- op library A: more elementwise math, argmax/argmin, dim ---------------------------


@irdl_op_definition
class RoundOp(UnaryElementwiseOp):
    """Elementwise rounding to the nearest integer, halves away from zero (C's `round`)."""

    name = "ag.round"


@irdl_op_definition
class RoundEvenOp(UnaryElementwiseOp):
    """Elementwise rounding to the nearest integer, halves to even (`numpy.round`)."""

    name = "ag.roundeven"


@irdl_op_definition
class SigmoidOp(UnaryElementwiseOp):
    """Elementwise logistic function `1 / (1 + exp(-x))`, computed without overflow:
    with `e = exp(-|x|)`, `1 / (1 + e)` for `x >= 0` and `e / (1 + e)` otherwise."""

    name = "ag.sigmoid"


@irdl_op_definition
class SoftplusOp(UnaryElementwiseOp):
    """Elementwise `log(1 + exp(x))`, computed as `log1p(exp(-|x|)) + max(x, 0)`."""

    name = "ag.softplus"


class ArgReduceOp(AgOperation, abc.ABC):
    """The position of the extremum over `axes`, as an `i64` index into the row-major
    flattening of the reduced axes (so all axes give NumPy's `argmax(axis=None)`). The
    first occurrence wins; a NaN counts as the extremum (the first NaN wins, as NumPy).
    An empty reduced axis is a run-time error."""

    input = operand_def(TensorType)
    axes = prop_def(DenseArrayBase)
    """The reduced axes, strictly increasing, at least one."""

    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, axes: Sequence[int]):
        value = SSAValue.get(input)
        t = tensor_type(value)
        if not axes:
            raise ValueError(f"{self.name}: at least one axis must be reduced")
        shape = reduce_shape(t.get_shape(), axes)
        super().__init__(
            operands=[value],
            properties={"axes": i64_array(axes)},
            result_types=[tensor_of(i64, shape)],
        )

    @property
    def axes_list(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.axes.get_values())

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        if self.axes.elt_type != i64:
            raise VerifyException(f"'{self.name}' op axes must be an i64 array")
        if not self.axes_list:
            raise VerifyException(f"'{self.name}' op needs at least one axis")
        try:
            shape = reduce_shape(it.get_shape(), self.axes_list)
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {e}") from e
        _expect_result(self, tensor_of(i64, shape), self.result.type)


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """Index of the first maximum over `axes` (`numpy.argmax`).

    ```mlir
    %i = ag.argmax %x {axes = array<i64: 1>} : tensor<?x?xf32> -> tensor<?xi64>
    ```
    """

    name = "ag.argmax"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """Index of the first minimum over `axes` (`numpy.argmin`)."""

    name = "ag.argmin"


@irdl_op_definition
class DimOp(AgOperation):
    """The run-time length of axis `axis` of the operand, as a 0-d `i64` tensor
    (Theano's `Shape_i`).

    ```mlir
    %n = ag.dim %x {axis = 1 : i64} : tensor<?x?xf32> -> tensor<i64>
    ```
    """

    name = "ag.dim"

    input = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    """The axis whose length is taken, in `0..rank-1`."""

    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, axis: int):
        value = SSAValue.get(input)
        rank = tensor_type(value).get_num_dims()
        if not 0 <= axis < rank:
            raise ValueError(f"ag.dim: axis {axis} out of range for rank {rank}")
        super().__init__(
            operands=[value],
            properties={"axis": IntegerAttr(axis, i64)},
            result_types=[tensor_of(i64, [])],
        )

    @property
    def axis_value(self) -> int:
        return self.axis.value.data

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        if not 0 <= self.axis_value < it.get_num_dims():
            raise VerifyException(
                f"'{self.name}' op axis {self.axis_value} out of range for rank {it.get_num_dims()}"
            )
        _expect_result(self, tensor_of(i64, []), self.result.type)


MATH_UNARY_OPS: tuple[type[UnaryElementwiseOp], ...] = (
    RoundOp,
    RoundEvenOp,
    SigmoidOp,
    SoftplusOp,
)
"""Op library A's unary ops (also in `UNARY_OPS`)."""
ARG_REDUCE_OPS: tuple[type[ArgReduceOp], ...] = (ArgMaxOp, ArgMinOp)
