"""Row-wise softmax and its gradient (Theano's `Softmax` and `SoftmaxGrad`, issue 14):
`ag.softmax` and `ag.softmax_grad`.

Both work along the last axis of a float tensor of rank 1 or more. Having softmax as one
op (instead of `exp(x - max) / sum`) keeps its gradient a single, stable op, and gives
the `softmax-xent` rewrite (`lowering/softmax_xent.py`) a fixed pattern to recognise in
a cross-entropy and in its gradient.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import (
    DYNAMIC,
    _check_tensor,
    _expect_result,
    tensor_type,
)


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """`exp(x - max) / sum(exp(x - max))` along the last axis (each row sums to 1; the
    row maximum is subtracted first, so nothing overflows).

    ```mlir
    %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
    ```
    """

    name = "ag.softmax"

    input = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue | Operation):
        value = SSAValue.get(input)
        super().__init__(operands=[value], result_types=[tensor_type(value)])

    def verify_(self) -> None:
        t = _check_tensor(self, "operand", self.input.type, "float")
        if t.get_num_dims() == 0:
            raise VerifyException(f"'{self.name}' op expects a tensor of rank 1 or more, got {t}")
        _expect_result(self, t, self.result.type)


@irdl_op_definition
class SoftmaxGradOp(IRDLOperation):
    """The gradient of a softmax along the last axis: `(dy - sum(dy * sm)) * sm`, row by
    row, from the gradient `dy` of its output `sm` (same shape).

    ```mlir
    %dx = ag.softmax_grad %dy, %sm : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    ```
    """

    name = "ag.softmax_grad"

    dy = operand_def(TensorType)
    sm = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$dy `,` $sm attr-dict `:` type($dy) `,` type($sm) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, dy: SSAValue | Operation, sm: SSAValue | Operation):
        d, s = SSAValue.get(dy), SSAValue.get(sm)
        super().__init__(operands=[d, s], result_types=[tensor_type(s)])

    def verify_(self) -> None:
        dt = _check_tensor(self, "dy", self.dy.type, "float")
        st = _check_tensor(self, "sm", self.sm.type, "float")
        if st.get_num_dims() == 0:
            raise VerifyException(f"'{self.name}' op expects a tensor of rank 1 or more, got {st}")
        agree = all(DYNAMIC in (a, b) or a == b for a, b in zip(dt.get_shape(), st.get_shape()))
        if dt.element_type != st.element_type or dt.get_num_dims() != st.get_num_dims() or not (
            agree
        ):
            raise VerifyException(
                f"'{self.name}' op dy and sm must have the same element type and shape, "
                f"got {dt} and {st}"
            )
        _expect_result(self, st, self.result.type)


SOFTMAX_OPS: tuple[type[IRDLOperation], ...] = (SoftmaxOp, SoftmaxGradOp)
"""The row-wise softmax ops."""
