"""`ag.gemv_pair`: a forward and a backward matrix-vector product over one matrix, fused
into one pass over its rows (made by the `row-fusion` pass).

A gradient step of a linear model reads its data matrix `A` twice: `u = A·x` forward and
`r = Aᵀ·g` backward, where `g` is computed row by row from `u`. `ag.gemv_pair` holds
both products and the elementwise chain between them, so that each row of `A` is read
from memory once: its dot product with `x` gives `d_i`, the region turns `d_i` (and row
`i` of the other operands) into `u_i` and `g_i`, and `g_i` times the row, still in the
cache, is added to `r`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    DYNAMIC,
    AgOperation,
    _check_tensor,
    _expect_result,
    shape_str,
    tensor_of,
    tensor_type,
)
from arignote.dialects.ag.control import YieldOp
from arignote.dialects.ag.dominance import verify_region_uses
from arignote.dialects.ag.elementwise import (
    BinaryElementwiseOp,
    CastOp,
    ConstantOp,
    SelectOp,
    UnaryElementwiseOp,
)

ROW_OPS: tuple[type[Operation], ...] = (
    BinaryElementwiseOp,
    UnaryElementwiseOp,
    SelectOp,
    CastOp,
    ConstantOp,
)
"""The op families a row region may hold: elementwise ops (and constants) on 0-d tensors."""


def _row_length(a: TensorType) -> int:
    return a.get_shape()[0]


def _lengths_agree(a: int, b: int) -> bool:
    return DYNAMIC in (a, b) or a == b


@irdl_op_definition
class GemvPairOp(AgOperation):
    """`u = A·x`, `g` and `r = alpha * Aᵀ·g [+ beta * r0]` in one pass over the rows of
    `A`, with `u` and `g` computed row by row by the region.

    For each row `i` of the matrix `A`, the region's block receives `d_i = A[i]·x` and
    row `i` of each of `rows` (0-d operands are the same for every row, a vector of
    static length 1 broadcasts), all as 0-d tensors, and yields `u_i` and `g_i`. The
    region holds only elementwise ops (and constants) on 0-d tensors. `alpha`/`beta`
    are 0-d; without `acc`, `r` is `alpha * Aᵀ·g`. f32 or f64.

    ```mlir
    %u, %g, %r = ag.gemv_pair %a, %x, %alpha acc(%beta, %r0) rows(%y) : tensor<?x?xf32>,
        tensor<?xf32>, tensor<f32> acc(tensor<f32>, tensor<?xf32>) rows(tensor<?xf32>)
        -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
    ^bb0(%d: tensor<f32>, %yi: tensor<f32>):
      %gi = ag.sub %d, %yi : tensor<f32>, tensor<f32> -> tensor<f32>
      ag.yield %d, %gi : tensor<f32>, tensor<f32>
    }
    ```
    """

    name = "ag.gemv_pair"

    a = operand_def(TensorType)
    """The matrix read once, row by row."""
    x = operand_def(TensorType)
    """The vector of the forward product `A·x`."""
    alpha = operand_def(TensorType)
    """The 0-d scale of the backward product."""
    acc = var_operand_def(TensorType)
    """Nothing, or `beta, r0`: the backward product is accumulated onto `beta * r0`."""
    rows = var_operand_def(TensorType)
    """The region's other inputs: vectors of `A`'s row count (read at row `i`), vectors
    of static length 1 and 0-d tensors."""

    u = result_def(TensorType)
    g = result_def(TensorType)
    r = result_def(TensorType)

    body = region_def("single_block")

    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(Pure())

    assembly_format = (
        "$a `,` $x `,` $alpha (`acc` `(` $acc^ `)`)? `rows` `(` $rows `)` attr-dict `:` "
        "type($a) `,` type($x) `,` type($alpha) (`acc` `(` type($acc)^ `)`)? "
        "`rows` `(` type($rows) `)` `->` `(` type($u) `,` type($g) `,` type($r) `)` $body"
    )

    def __init__(
        self,
        a: SSAValue | Operation,
        x: SSAValue | Operation,
        alpha: SSAValue | Operation,
        rows: Sequence[SSAValue],
        body: Region,
        beta: SSAValue | Operation | None = None,
        r0: SSAValue | Operation | None = None,
    ):
        if (beta is None) != (r0 is None):
            raise ValueError("ag.gemv_pair: beta and r0 go together")
        at = tensor_type(SSAValue.get(a))
        element = at.element_type
        shape = at.get_shape()
        vector_u = tensor_of(element, [shape[0]])
        vector_r = tensor_of(element, [shape[1]])
        acc = [] if beta is None or r0 is None else [SSAValue.get(beta), SSAValue.get(r0)]
        super().__init__(
            operands=[SSAValue.get(a), SSAValue.get(x), SSAValue.get(alpha), acc, list(rows)],
            result_types=[vector_u, vector_u, vector_r],
            regions=[body],
        )

    @property
    def beta(self) -> SSAValue | None:
        return self.acc[0] if self.acc else None

    @property
    def initial(self) -> SSAValue | None:
        """`r0`, the accumulated vector, if any."""
        return self.acc[1] if self.acc else None

    # --- verification --------------------------------------------------------------

    def _fail(self, message: str) -> VerifyException:
        return VerifyException(f"'{self.name}' op {message}")

    def _verify_products(self) -> TensorType:
        at = _check_tensor(self, "a", self.a.type, "float")
        xt = _check_tensor(self, "x", self.x.type, "float")
        if at.get_num_dims() != 2 or xt.get_num_dims() != 1:
            raise self._fail(f"expects a matrix and a vector, got {at} and {xt}")
        element = at.element_type
        scalars = [("alpha", self.alpha), *zip(("beta",), self.acc[:1], strict=False)]
        for what, value in [("x", self.x), *scalars, *zip(("r0",), self.acc[1:], strict=False)]:
            t = _check_tensor(self, what, value.type, "float")
            if t.element_type != element:
                raise self._fail(f"{what} must have element type {element}, got {t}")
        for what, value in scalars:
            if tensor_type(value).get_num_dims() != 0:
                raise self._fail(f"{what} must be a 0-d tensor, got {value.type}")
        rows, cols = at.get_shape()
        if not _lengths_agree(cols, xt.get_shape()[0]):
            raise self._fail(f"contracted dimensions differ: {at} and {xt}")
        if len(self.acc) not in (0, 2):
            raise self._fail(f"takes either no accumulation or `beta, r0`, got {len(self.acc)}")
        if self.acc:
            r0 = tensor_type(self.acc[1])
            if r0.get_num_dims() != 1 or not _lengths_agree(cols, r0.get_shape()[0]):
                raise self._fail(f"r0 must be a vector of {at}'s column count, got {r0}")
        return at

    def _verify_rows(self, at: TensorType) -> None:
        for k, value in enumerate(self.rows):
            t = _check_tensor(self, f"row operand #{k}", value.type, "any")
            shape = t.get_shape()
            row_count = at.get_shape()[0]
            if len(shape) > 1 or (
                len(shape) == 1 and shape[0] != 1 and not _lengths_agree(shape[0], row_count)
            ):
                raise self._fail(
                    f"row operand #{k} must be 0-d, of static length 1 or of {at}'s row "
                    f"count {shape_str(at.get_shape()[:1])}, got {t}"
                )

    def _verify_region(self, at: TensorType) -> None:
        block = self.body.block
        expected = [tensor_of(at.element_type, [])] + [
            tensor_of(tensor_type(v).element_type, []) for v in self.rows
        ]
        got = [arg.type for arg in block.args]
        if got != expected:
            raise self._fail(
                f"region arguments must be {_types_text(expected)} (d_i and one element of "
                f"each row operand), got {_types_text(got)}"
            )
        for op in block.ops:
            if isinstance(op, YieldOp):
                continue
            if not isinstance(op, ROW_OPS):
                raise self._fail(f"region may hold only elementwise ops, got {op.name}")
            for result in op.results:
                if not isinstance(result.type, TensorType) or result.type.get_num_dims() != 0:
                    raise self._fail(f"region values must be 0-d tensors, got {result.type}")
        last = block.last_op
        if not isinstance(last, YieldOp):
            raise self._fail("region must end with ag.yield")
        yielded = [v.type for v in last.values]
        scalar = tensor_of(at.element_type, [])
        if yielded != [scalar, scalar]:
            raise self._fail(
                f"region must yield u_i and g_i of type {scalar}, got {_types_text(yielded)}"
            )

    def verify_(self) -> None:
        at = self._verify_products()
        self._verify_rows(at)
        self._verify_region(at)
        rows, cols = at.get_shape()
        _expect_result(self, tensor_of(at.element_type, [rows]), self.u.type)
        _expect_result(self, tensor_of(at.element_type, [rows]), self.g.type)
        _expect_result(self, tensor_of(at.element_type, [cols]), self.r.type)
        verify_region_uses(self)


def _types_text(types: Sequence[Attribute]) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")"
