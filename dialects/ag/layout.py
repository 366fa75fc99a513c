"""`ag.dimshuffle`."""

from __future__ import annotations

from collections.abc import Sequence

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
    NEWAXIS,
    AgOperation,
    Shape,
    _check_tensor,
    _expect_result,
    i64_array,
    shape_str,
    ssa_value,
    tensor_of,
    tensor_type,
)

# --- layout ----------------------------------------------------------------------------


def dimshuffle_shape(shape: Sequence[int], pattern: Sequence[int]) -> Shape:
    """The result shape of `dimshuffle(pattern)` on `shape` (ValueError if invalid)."""
    used = [p for p in pattern if p != NEWAXIS]
    if any(p < 0 or p >= len(shape) for p in used):
        raise ValueError(
            f"ag.dimshuffle: pattern {list(pattern)} names an axis outside 0..{len(shape) - 1}"
        )
    if len(set(used)) != len(used):
        raise ValueError(f"ag.dimshuffle: pattern {list(pattern)} repeats an axis")
    dropped = [axis for axis in range(len(shape)) if axis not in used]
    if any(shape[axis] != 1 for axis in dropped):
        raise ValueError(
            f"ag.dimshuffle: pattern {list(pattern)} drops axes {dropped} of "
            f"shape {shape_str(shape)}; only length-1 axes can be dropped"
        )
    return tuple(1 if p == NEWAXIS else shape[p] for p in pattern)


@irdl_op_definition
class DimShuffleOp(AgOperation):
    """Permutes axes, inserts length-1 axes (-1) and drops length-1 axes (Theano's
    `dimshuffle`; a transpose is the pattern `[1, 0]`).

    ```mlir
    %t = ag.dimshuffle %x {pattern = array<i64: 1, -1, 0>} : tensor<?x3xf32> -> tensor<3x1x?xf32>
    ```
    """

    name = "ag.dimshuffle"

    input = operand_def(TensorType)
    pattern = prop_def(DenseArrayBase)
    """For each result axis, the input axis it reads, or -1 for a new length-1 axis."""

    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation, pattern: Sequence[int]):
        value = ssa_value(input)
        t = tensor_type(value)
        shape = dimshuffle_shape(t.get_shape(), pattern)
        super().__init__(
            operands=[value],
            properties={"pattern": i64_array(pattern)},
            result_types=[tensor_of(t.element_type, shape)],
        )

    @property
    def pattern_list(self) -> tuple[int, ...]:
        return tuple(int(v) for v in self.pattern.get_values())

    def verify_(self) -> None:
        it = _check_tensor(self, "operand", self.input.type, "any")
        if self.pattern.elt_type != i64:
            raise VerifyException(f"'{self.name}' op pattern must be an i64 array")
        try:
            shape = dimshuffle_shape(it.get_shape(), self.pattern_list)
        except ValueError as e:
            raise VerifyException(f"'{self.name}' op {str(e).split(': ', 1)[1]}") from e
        _expect_result(self, tensor_of(it.element_type, shape), self.result.type)
