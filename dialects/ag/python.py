"""`ag.python_op`: an op computed by Python code (Theano's custom `Op.perform`).

The op's operands are the inputs of a user's `Op` node and its results the node's
outputs; `callback` is the id under which the frontend registered the Python code that
computes them (`arignote.runtime.pyops.register`). The interpreter calls that code; native
code calls back into Python for this op alone (see `arignote.lowering.loops.ag_python`). It
may have side effects and its result shapes are known only once it has run, so it is
not `Pure`: `cse` never merges two of them and `dce` never drops one.

```mlir
%y, %z = ag.python_op %x, %w {callback = 0 : i64, label = "DoubleOp"}
    : (tensor<?xf64>, tensor<?x?xf32>) -> (tensor<?xf64>, tensor<?xf64>)
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, StringAttr, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    base,
    irdl_op_definition,
    prop_def,
    var_operand_def,
    var_result_def,
)

from arignote.dialects.ag.base import AgOperation


@irdl_op_definition
class PythonOp(AgOperation):
    """Results computed from the operands by the registered Python code `callback`."""

    name = "ag.python_op"

    inputs = var_operand_def(base(TensorType))
    outputs = var_result_def(base(TensorType))

    callback = prop_def(IntegerAttr[I64])
    """The id of the Python code computing the results (`arignote.runtime.pyops`)."""
    label = prop_def(StringAttr)
    """What the op is called in messages (the user's op, e.g. `DoubleOp`)."""

    assembly_format = "$inputs attr-dict `:` `(` type($inputs) `)` `->` `(` type($outputs) `)`"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        callback: int,
        label: str,
    ):
        super().__init__(
            operands=[list(inputs)],
            result_types=[list(result_types)],
            properties={"callback": IntegerAttr(callback, i64), "label": StringAttr(label)},
        )

    @property
    def callback_id(self) -> int:
        return self.callback.value.data


PYTHON_OPS = (PythonOp,)
