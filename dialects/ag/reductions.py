"""Reductions over axes."""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DenseArrayBase,
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
    Shape,
    _check_tensor,
    _expect_result,
    i64_array,
    ssa_value,
    tensor_of,
    tensor_type,
)

# --- reductions ------------------------------------------------------------------------


def reduce_shape(shape: Sequence[int], axes: Sequence[int]) -> Shape:
    """The shape left after reducing `axes` away (ValueError if the axes are invalid)."""
    if any(a < 0 or a >= len(shape) for a in axes):
        raise ValueError(f"axes {list(axes)} out of range for rank {len(shape)}")
    if len(set(axes)) != len(axes) or list(axes) != sorted(axes):
        raise ValueError(f"axes {list(axes)} must be strictly increasing")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


class ReduceOp(AgOperation, abc.ABC):
    """A reduction over the given axes, which disappear from the result."""

    CATEGORY: ClassVar[str] = "numeric"

    input = operand_def(TensorType)
    axes = prop_def(DenseArrayBase)
    """The reduced axes, strictly increasing."""

    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, axes: Sequence[int]):
        value = ssa_value(input)
        t = tensor_type(value)
        shape = reduce_shape(t.get_shape(), axes)
        super().__init__(
            operands=[value],
            properties={"axes": i64_array(axes)},
            result_types=[tensor_of(t.element_type, shape)],
        )

    @property
    def axes_list(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.axes.get_values())

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, self.CATEGORY)
        if self.axes.elt_type != i64:
            raise VerifyException(f"'{self.name}' op axes must be an i64 array")
        try:
            shape = reduce_shape(it.get_shape(), self.axes_list)
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {e}") from e
        _expect_result(self, tensor_of(it.element_type, shape), self.result.type)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over `axes` (0 for an empty axis).

    ```mlir
    %s = ag.reduce_sum %x {axes = array<i64: 1>} : tensor<?x?xf64> -> tensor<?xf64>
    ```
    """

    name = "ag.reduce_sum"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class ReduceProdOp(ReduceOp):
    """Product over `axes` (1 for an empty axis)."""

    name = "ag.reduce_prod"
    CATEGORY: ClassVar[str] = "arith"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over `axes`; NaN wins; an empty axis is a run-time error."""

    name = "ag.reduce_max"
    CATEGORY: ClassVar[str] = "real"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over `axes`; NaN wins; an empty axis is a run-time error."""

    name = "ag.reduce_min"
    CATEGORY: ClassVar[str] = "real"
