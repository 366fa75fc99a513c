"""Row-wise softmax, its log, its gradient and the fused softmax cross-entropy (Theano's
`Softmax`, `LogSoftmax`, `SoftmaxGrad`, `CrossentropySoftmaxArgmax1HotWithBias` and
`CrossentropySoftmax1HotWithBiasDx`, issue 14): `ag.softmax`, `ag.logsoftmax`,
`ag.softmax_grad`, `ag.softmax_xent` and `ag.softmax_xent_grad`.

Both work along the last axis of a float tensor of rank 1 or more. Having softmax as one
op (instead of `exp(x - max) / sum`) keeps its gradient a single, stable op, and gives
the `softmax-xent` rewrite (`lowering/graph/softmax_xent.py`) a fixed pattern to recognise in
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
    AgOperation,
    _check_tensor,
    _expect_result,
    is_bool,
    tensor_of,
    tensor_type,
)


class _RowOp(AgOperation):
    """A float tensor of rank 1 or more, mapped row by row (along its last axis) to a
    tensor of its type: the common form of `ag.softmax` and `ag.logsoftmax`."""

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
class SoftmaxOp(_RowOp):
    """`exp(x - max) / sum(exp(x - max))` along the last axis (each row sums to 1; the
    row maximum is subtracted first, so nothing overflows).

    ```mlir
    %sm = ag.softmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
    ```
    """

    name = "ag.softmax"


@irdl_op_definition
class LogSoftmaxOp(_RowOp):
    """`x - max - log(sum(exp(x - max)))` along the last axis: `log(softmax(x))` without
    underflow to `log(0)`.

    ```mlir
    %ls = ag.logsoftmax %x : tensor<?x?xf32> -> tensor<?x?xf32>
    ```
    """

    name = "ag.logsoftmax"


@irdl_op_definition
class SoftmaxGradOp(AgOperation):
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
        pairs = zip(dt.get_shape(), st.get_shape(), strict=False)
        agree = all(DYNAMIC in (a, b) or a == b for a, b in pairs)
        if (
            dt.element_type != st.element_type
            or dt.get_num_dims() != st.get_num_dims()
            or not (agree)
        ):
            raise VerifyException(
                f"'{self.name}' op dy and sm must have the same element type and shape, "
                f"got {dt} and {st}"
            )
        _expect_result(self, st, self.result.type)


SOFTMAX_OPS: tuple[type[IRDLOperation], ...] = (SoftmaxOp, LogSoftmaxOp, SoftmaxGradOp)
"""The row-wise softmax ops."""


def _check_logits_and_labels(op: IRDLOperation, x: SSAValue, y: SSAValue) -> TensorType:
    xt = _check_tensor(op, "x", x.type, "float")
    yt = _check_tensor(op, "y", y.type, "integer")
    if is_bool(yt.element_type):
        raise VerifyException(f"'{op.name}' op y must have an integer element type, got {yt}")
    if xt.get_num_dims() != 2 or yt.get_num_dims() != 1:
        raise VerifyException(
            f"'{op.name}' op expects a matrix x and a vector y, got {xt} and {yt}"
        )
    rows, labels = xt.get_shape()[0], yt.get_shape()[0]
    if DYNAMIC not in (rows, labels) and rows != labels:
        raise VerifyException(f"'{op.name}' op x has {rows} rows but y has {labels} labels")
    return xt


def _check_dnll(op: IRDLOperation, dnll: SSAValue, xt: TensorType) -> None:
    dt = _check_tensor(op, "dnll", dnll.type, "float")
    rows = xt.get_shape()[0]
    length = dt.get_shape()[0] if dt.get_num_dims() == 1 else None
    if (
        dt.element_type != xt.element_type
        or length is None
        or not (length in (1, DYNAMIC) or rows in (DYNAMIC, length))
    ):
        raise VerifyException(
            f"'{op.name}' op dnll must be a vector of x's element type and row count "
            f"(or of length 1), got {dt} for {xt}"
        )


@irdl_op_definition
class SoftmaxXentOp(AgOperation):
    """The cross-entropy of `softmax(x)` with integer labels `y`, row by row:
    `nll[i] = -log(softmax(x[i])[y[i]]) = max + log(sum(exp(x[i] - max))) - x[i, y[i]]`,
    finite for any finite logits. A negative label counts from the end (as an index).

    ```mlir
    %nll = ag.softmax_xent %x, %y : tensor<?x?xf32>, tensor<?xi64> -> tensor<?xf32>
    ```
    """

    name = "ag.softmax_xent"

    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = "$x `,` $y attr-dict `:` type($x) `,` type($y) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, x: SSAValue | Operation, y: SSAValue | Operation):
        xv, yv = SSAValue.get(x), SSAValue.get(y)
        xt = tensor_type(xv)
        result = tensor_of(xt.element_type, [xt.get_shape()[0]])
        super().__init__(operands=[xv, yv], result_types=[result])

    def verify_(self) -> None:
        xt = _check_logits_and_labels(self, self.x, self.y)
        _expect_result(self, tensor_of(xt.element_type, [xt.get_shape()[0]]), self.result.type)


@irdl_op_definition
class SoftmaxXentGradOp(AgOperation):
    """The gradient of `ag.softmax_xent` with respect to `x`: `dx[i] = dnll[i] *
    (softmax(x[i]) - onehot(y[i]))`, from the gradient `dnll` of the cross-entropy (a
    vector of `x`'s row count, or of static length 1 for every row).

    ```mlir
    %dx = ag.softmax_xent_grad %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>, tensor<?xi64>
            -> tensor<?x?xf32>
    ```
    """

    name = "ag.softmax_xent_grad"

    dnll = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = (
        "$dnll `,` $x `,` $y attr-dict `:` type($dnll) `,` type($x) `,` type($y) `->` type($result)"
    )
    traits = traits_def(Pure())

    def __init__(
        self, dnll: SSAValue | Operation, x: SSAValue | Operation, y: SSAValue | Operation
    ):
        dv, xv, yv = SSAValue.get(dnll), SSAValue.get(x), SSAValue.get(y)
        super().__init__(operands=[dv, xv, yv], result_types=[tensor_type(xv)])

    def verify_(self) -> None:
        xt = _check_logits_and_labels(self, self.x, self.y)
        _check_dnll(self, self.dnll, xt)
        _expect_result(self, xt, self.result.type)


XENT_OPS: tuple[type[IRDLOperation], ...] = (SoftmaxXentOp, SoftmaxXentGradOp)
"""The fused softmax cross-entropy ops."""
SOFTMAX_OPS = (*SOFTMAX_OPS, *XENT_OPS)


@irdl_op_definition
class SoftmaxXentPairOp(AgOperation):
    """`ag.softmax_xent` and `ag.softmax_xent_grad` of the same `x` and `y` in one pass
    over each row (made by the `softmax-xent-pair` pass): `nll` and `dx = dnll[i] *
    (softmax(x[i]) - onehot(y[i]))`, the exponentials computed once.

    ```mlir
    %nll, %dx = ag.softmax_xent_pair %g, %x, %y : tensor<?xf32>, tensor<?x?xf32>,
        tensor<?xi64> -> (tensor<?xf32>, tensor<?x?xf32>)
    ```
    """

    name = "ag.softmax_xent_pair"

    dnll = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    nll = result_def(TensorType)
    dx = result_def(TensorType)

    assembly_format = (
        "$dnll `,` $x `,` $y attr-dict `:` type($dnll) `,` type($x) `,` type($y) `->` "
        "`(` type($nll) `,` type($dx) `)`"
    )
    traits = traits_def(Pure())

    def __init__(
        self, dnll: SSAValue | Operation, x: SSAValue | Operation, y: SSAValue | Operation
    ):
        dv, xv, yv = SSAValue.get(dnll), SSAValue.get(x), SSAValue.get(y)
        xt = tensor_type(xv)
        nll = tensor_of(xt.element_type, [xt.get_shape()[0]])
        super().__init__(operands=[dv, xv, yv], result_types=[nll, xt])

    def verify_(self) -> None:
        xt = _check_logits_and_labels(self, self.x, self.y)
        _check_dnll(self, self.dnll, xt)
        _expect_result(self, tensor_of(xt.element_type, [xt.get_shape()[0]]), self.nll.type)
        _expect_result(self, xt, self.dx.type)


SOFTMAX_OPS = (*SOFTMAX_OPS, SoftmaxXentPairOp)
XENT_OPS = (*XENT_OPS, SoftmaxXentPairOp)


def softmax_shape_source(op: Operation) -> SSAValue:
    """The operand whose leading axes a softmax op's result has (`x`, or `sm`)."""
    if isinstance(op, SoftmaxGradOp):
        return op.sm
    if isinstance(op, SoftmaxOp | LogSoftmaxOp):
        return op.input
    assert isinstance(op, SoftmaxXentOp | SoftmaxXentGradOp | SoftmaxXentPairOp)
    return op.x
