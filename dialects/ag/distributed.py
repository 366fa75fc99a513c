"""Collective ops across the processes of an MPI job (`arignote.distributed`).

`ag.allreduce` combines its operand over every process of the communicator (the world
of the MPI job) and returns the combined value on each: the `sum`, or the `mean` (the
sum divided by the number of processes). Every process must reach its allreduces in the
same order with the same shapes, as MPI requires: they run one compiled program each
(`arignote.distributed` checks that at a function's first call).

It communicates, so it is not `Pure`: `cse` never merges two and `dce` never drops one
(on one process but not another, which would deadlock the job). Without an MPI job (one
process) it returns its operand.

```mlir
%g = ag.allreduce %x {reduction = "mean", timeout_ms = 60000 : i64} : tensor<?x?xf64>
```

`timeout_ms` bounds the wait for the other processes (0: wait forever): native code
polls the non-blocking collective until it completes or the deadline passes, then
raises `arignote.distributed.DistributedError` instead of hanging when a process died
(see `arignote.lowering.loops.ag_mpi`).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import AgOperation, _check_tensor

REDUCTIONS = ("sum", "mean")
"""The `reduction` values of `ag.allreduce`."""


@irdl_op_definition
class AllreduceOp(AgOperation):
    """The `reduction` (`sum` or `mean`) of the operand over every process of the MPI
    job, on every process (MPI's `Allreduce`).

    ```mlir
    %g = ag.allreduce %x {reduction = "sum", timeout_ms = 0 : i64} : tensor<3xf32>
    ```
    """

    name = "ag.allreduce"

    _T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(_T)
    result = result_def(_T)

    reduction = prop_def(StringAttr)
    """`sum`, or `mean` (float operands only)."""
    timeout_ms = prop_def(IntegerAttr[I64])
    """How long native code waits for the other processes, in milliseconds (0: no
    limit)."""

    assembly_format = "$input attr-dict `:` type($input)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, input: SSAValue | Operation, reduction: str = "sum", timeout_ms: int = 0):
        x = SSAValue.get(input)
        super().__init__(
            operands=[x],
            properties={
                "reduction": StringAttr(reduction),
                "timeout_ms": IntegerAttr(timeout_ms, i64),
            },
            result_types=[x.type],
        )

    def verify_(self) -> None:
        reduction = self.reduction.data
        if reduction not in REDUCTIONS:
            raise VerifyException(
                f"'{self.name}' op reduction must be one of {', '.join(REDUCTIONS)}, "
                f"got {reduction!r}"
            )
        category = "float" if reduction == "mean" else "numeric"
        _check_tensor(self, "operand", self.input.type, category)
        if self.timeout_ms.value.data < 0:
            raise VerifyException(
                f"'{self.name}' op timeout_ms must not be negative, got "
                f"{self.timeout_ms.value.data}"
            )


DISTRIBUTED_OPS: tuple[type[IRDLOperation], ...] = (AllreduceOp,)
