"""Control flow: the terminator shared by the region-carrying ops (`ag.if`, `ag.scan`).

A region of a control-flow op computes on tensors like a function body and ends with
`ag.yield`, whose operands are the region's results:

```mlir
ag.yield %a, %b : tensor<?xf32>, tensor<f64>
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue
from xdsl.irdl import IRDLOperation, irdl_op_definition, traits_def, var_operand_def
from xdsl.traits import IsTerminator, Pure


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Ends a region of an `ag` control-flow op; its operands are the region's results.

    The parent op checks that the yielded types match what it declares.
    """

    name = "ag.yield"

    values = var_operand_def()

    traits = traits_def(IsTerminator(), Pure())

    assembly_format = "($values^ `:` type($values))? attr-dict"

    def __init__(self, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values])
