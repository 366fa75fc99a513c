"""Ops whose result is checked against, or whose shape is counted from, operand data at
run time: `ag.specify_shape` (Theano's `SpecifyShape`), `ag.assert` (Theano's `Assert`)
and `ag.flatnonzero` (the positions of the nonzero elements, a run-time number of them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseArrayBase, StringAttr, TensorType, i1, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
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
    shape_str,
    tensor_of,
)
from arignote.dialects.ag.indexing import DYNAMIC_VALUE, ShapedByOperandsOp


def specify_shape_shape(name: str, source: Sequence[int], entries: Sequence[int]) -> Shape:
    """The result shape of `ag.specify_shape` (ValueError naming `name` if the entries
    cannot hold): one entry per axis, each a length or `DYNAMIC_VALUE`; a static entry
    and a static operand length must agree."""
    if len(entries) != len(source):
        raise ValueError(
            f"{name}: the shape has {len(entries)} entries for an operand of rank {len(source)}"
        )
    result: list[int] = []
    for axis, (n, e) in enumerate(zip(source, entries, strict=True)):
        if e < 0 and e != DYNAMIC_VALUE:
            raise ValueError(f"{name}: shape {list(entries)} has a negative length")
        if e != DYNAMIC_VALUE and n not in (DYNAMIC, e):
            raise ValueError(
                f"{name}: the operand of shape {shape_str(source)} cannot have length {e} "
                f"at dimension {axis}"
            )
        result.append(n if e == DYNAMIC_VALUE else e)
    return tuple(result)


@irdl_op_definition
class SpecifyShapeOp(ShapedByOperandsOp):
    """`x` itself, after a run-time check that its shape is `shape` (static entries, and
    `DYNAMIC_VALUE` entries read from the dynamic operands); the result's type knows the
    static entries (Theano's `SpecifyShape`).

    ```mlir
    %r = ag.specify_shape %x[%n] {shape = array<i64: -9223372036854775808, 3>}
           : tensor<?x?xf32>, tensor<i64> -> tensor<?x3xf32>
    ```
    """

    name = "ag.specify_shape"

    input = operand_def(TensorType)
    dynamic = var_operand_def(TensorType)
    shape = prop_def(DenseArrayBase)
    result = result_def(TensorType)

    assembly_format = (
        "$input `[` $dynamic `]` attr-dict `:` type($input) (`,` type($dynamic)^)? "
        "`->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    SOURCE: ClassVar[str] = "operand"

    @classmethod
    def result_shape(cls, source: Sequence[int], entries: Sequence[int]) -> Shape:
        return specify_shape_shape(cls.name, source, entries)


@irdl_op_definition
class FlatNonzeroOp(AgOperation):
    """The int64 positions, in the row-major flattening of `x`, of its nonzero elements
    (NaN is nonzero), in increasing order (NumPy's `flatnonzero`); the length is known
    only at run time.

    ```mlir
    %r = ag.flatnonzero %x : tensor<?x?xi1> -> tensor<?xi64>
    ```
    """

    name = "ag.flatnonzero"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        super().__init__(operands=[SSAValue.get(input)], result_types=[tensor_of(i64, [DYNAMIC])])

    def verify_(self) -> None:
        _check_tensor(self, "operand", self.input.type, "any")
        _expect_result(self, tensor_of(i64, [DYNAMIC]), self.result.type)


@irdl_op_definition
class AssertOp(AgOperation):
    """`x` itself, after a run-time check that the 0-d bool `condition` holds; otherwise
    a `ValueError` with `message` (Theano's `Assert`, for argument checks that depend
    on run-time values).

    ```mlir
    %r = ag.assert %x, %ok {message = "split: the sizes must not be negative"}
           : tensor<?xf32>, tensor<i1> -> tensor<?xf32>
    ```
    """

    name = "ag.assert"

    input = operand_def(TensorType)
    condition = operand_def(TensorType)
    message = prop_def(StringAttr)
    result = result_def(TensorType)

    assembly_format = (
        "$input `,` $condition attr-dict `:` type($input) `,` type($condition) `->` type($result)"
    )
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, condition: SSAValue | Operation, message: str):
        x = SSAValue.get(input)
        super().__init__(
            operands=[x, SSAValue.get(condition)],
            properties={"message": StringAttr(message)},
            result_types=[x.type],
        )

    def verify_(self) -> None:
        t = _check_tensor(self, "operand", self.input.type, "any")
        c = self.condition.type
        if not (isinstance(c, TensorType) and c.get_num_dims() == 0 and c.element_type == i1):
            raise VerifyException(f"'{self.name}' op condition must be a 0-d tensor<i1>, got {c}")
        _expect_result(self, t, self.result.type)


DATA_SHAPE_OPS: tuple[type[IRDLOperation], ...] = (SpecifyShapeOp, AssertOp, FlatNonzeroOp)
"""The ops of this family."""

__all__ = [
    "AssertOp",
    "DATA_SHAPE_OPS",
    "FlatNonzeroOp",
    "SpecifyShapeOp",
    "specify_shape_shape",
]
