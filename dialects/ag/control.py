"""Control flow: region-carrying ops (`ag.if`) and their shared terminator `ag.yield`.

A region of a control-flow op computes on tensors like a function body and ends with
`ag.yield`, whose operands are the region's results:

```mlir
ag.yield %a, %b : tensor<?xf32>, tensor<f64>
```

Regions see the values defined above them (no block arguments): a value used only by
one branch of an `ag.if` is computed inside that branch, so it is computed only when
the branch is taken.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import DYNAMIC, AgOperation, _check_tensor, tensor_of
from arignote.dialects.ag.dominance import verify_region_uses


@irdl_op_definition
class YieldOp(AgOperation):
    """Ends a region of an `ag` control-flow op; its operands are the region's results.

    The parent op checks that the yielded types match what it declares.
    """

    name = "ag.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), Pure())

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])


@irdl_op_definition
class IfOp(AgOperation):
    """Runs one of two regions, chosen by a scalar condition (Theano's lazy `IfElse`).

    The condition is a rank-0 tensor of any element type; a nonzero value selects the
    `then` region. Each region is one block ending with `ag.yield` of values whose types
    are the op's result types. Only the selected region is executed.

    ```mlir
    %r = ag.if %c : tensor<i1> -> (tensor<f64>) {
      %m = ag.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<?x?xf64> -> tensor<f64>
      ag.yield %m : tensor<f64>
    } else {
      ag.yield %y : tensor<f64>
    }
    ```
    """

    name = "ag.if"

    condition = operand_def(TensorType)
    """The rank-0 condition: nonzero selects the `then` region."""

    outputs = var_result_def(TensorType)
    """The values yielded by the region that ran."""

    then_region = region_def("single_block")
    """Runs when the condition is nonzero."""

    else_region = region_def("single_block")
    """Runs when the condition is zero."""

    traits = traits_def(RecursiveMemoryEffect())

    assembly_format = (
        "$condition `:` type($condition) `->` `(` type($outputs) `)` "
        "$then_region `else` $else_region attr-dict"
    )

    def __init__(
        self,
        condition: SSAValue,
        result_types: Sequence[Attribute],
        then_region: Region,
        else_region: Region,
    ):
        super().__init__(
            operands=[condition],
            result_types=[result_types],
            regions=[then_region, else_region],
        )

    @staticmethod
    def with_yields(
        condition: SSAValue, then_values: Sequence[SSAValue], else_values: Sequence[SSAValue]
    ) -> IfOp:
        """An `ag.if` whose regions only yield the given values; each result type is the
        join of the two yielded types (see `join_types`)."""
        regions = [Region(Block([YieldOp(vs)])) for vs in (then_values, else_values)]
        types = [join_types(t.type, e.type) for t, e in zip(then_values, else_values, strict=True)]
        return IfOp(condition, types, *regions)

    @property
    def then_yield(self) -> YieldOp:
        return _terminator(self, self.then_region, "then")

    @property
    def else_yield(self) -> YieldOp:
        return _terminator(self, self.else_region, "else")

    def verify_(self) -> None:
        t = _check_tensor(self, "condition", self.condition.type, "any")
        if t.get_shape():
            raise VerifyException(f"'{self.name}' op condition must be a rank-0 tensor, got {t}")
        if not self.outputs:
            raise VerifyException(f"'{self.name}' op must have at least one result")
        expected = list(self.outputs.types)
        for which, region in (("then", self.then_region), ("else", self.else_region)):
            got = list(_terminator(self, region, which).values.types)
            if len(got) != len(expected) or not all(map(fits, got, expected)):
                raise VerifyException(
                    f"'{self.name}' op the {which} region yields "
                    f"({', '.join(map(str, got))}), which does not fit the result types "
                    f"({', '.join(map(str, expected))})"
                )
        verify_region_uses(self)


def fits(value: Attribute, result: Attribute) -> bool:
    """Whether a yielded type fits a result type: the same element type and rank, and
    each static result dimension equal to the yielded one (a dynamic result dimension
    takes any length)."""
    if not isinstance(value, TensorType) or not isinstance(result, TensorType):
        return False
    if value.element_type != result.element_type:
        return False
    shapes = (value.get_shape(), result.get_shape())
    return len(shapes[0]) == len(shapes[1]) and all(
        r in (DYNAMIC, v) for v, r in zip(*shapes, strict=True)
    )


def join_types(a: Attribute, b: Attribute) -> Attribute:
    """The tensor type both `a` and `b` fit: their shared static dimensions, dynamic
    where they differ (`a` itself when the element types or ranks differ: the verifier
    then names both)."""
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return a
    sa, sb = a.get_shape(), b.get_shape()
    if a.element_type != b.element_type or len(sa) != len(sb):
        return a
    joined = [x if x == y else DYNAMIC for x, y in zip(sa, sb, strict=True)]
    return tensor_of(a.element_type, joined)


def _terminator(op: IfOp, region: Region, which: str) -> YieldOp:
    block = region.blocks.first
    last = block.last_op if block is not None else None
    if not isinstance(last, YieldOp):
        raise VerifyException(f"'{op.name}' op the {which} region must end with ag.yield")
    return last
