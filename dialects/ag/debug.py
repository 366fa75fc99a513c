"""Debugging ops: `ag.print` (Theano's `Print`) and the profiling timers.

`ag.print` returns its operand and, each time it is computed, shows it: the interpreter
prints it, native code calls back into Python with the buffer (see
`arignote.lowering.loops.ag_print`). It has a side effect, so it is not `Pure`: `cse` never
merges two prints and `dce` never drops one.

```mlir
%y = ag.print %x {message = "x", attrs = ["__str__"]} : tensor<?xf64>
```

`ag.profile_begin` / `ag.profile_end` bracket one node of a profiled function (the
`profile-timers` pass inserts them); `ag-to-loops` lowers them into clock reads that
accumulate the node's time, its number of runs and the bytes of its results into the
function's counters (see `arignote.lowering.loops.profile_timers`).

```mlir
ag.profile_begin {node = 0 : i64}
%s = ag.add %x, %y : tensor<?xf64>, tensor<?xf64> -> tensor<?xf64>
ag.profile_end %s {node = 0 : i64} : tensor<?xf64>
```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from arignote.dialects.ag.base import AgOperation


@irdl_op_definition
class PrintOp(AgOperation):
    """Returns its operand unchanged and shows it each time it is computed: one line
    `<message> <attr> = <value>` per attribute of `attrs` (Theano's `Print`).

    ```mlir
    %y = ag.print %x {message = "x", attrs = ["__str__", "shape"]} : tensor<?xf64>
    ```
    """

    name = "ag.print"

    _T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(_T)
    result = result_def(_T)

    message = prop_def(StringAttr)
    """The text shown before each attribute."""
    attrs = prop_def(ArrayAttr[StringAttr])
    """The attributes shown, in order: names of attributes or no-argument methods of a
    NumPy array (`__str__`, `shape`, `sum`, ...)."""
    callback = opt_prop_def(IntegerAttr[I64])
    """The id the native code passes to the print callback (set by the runtime when it
    registers the message; absent in a graph that was not compiled)."""
    hook = opt_prop_def(IntegerAttr[I64])
    """The id of a Python function called with the value instead of printing `attrs`
    (Theano's `Print(global_fn=...)`; see `arignote.runtime.printing.register_hook`);
    absent for a print that prints."""

    assembly_format = "$input attr-dict `:` type($input)"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        input: SSAValue | Operation,
        message: str,
        attrs: Sequence[str] = ("__str__",),
        hook: int | None = None,
    ):
        value = SSAValue.get(input)
        properties: dict[str, Attribute] = {
            "message": StringAttr(message),
            "attrs": ArrayAttr([StringAttr(a) for a in attrs]),
        }
        if hook is not None:
            properties["hook"] = IntegerAttr(hook, i64)
        super().__init__(operands=[value], result_types=[value.type], properties=properties)

    @property
    def hook_id(self) -> int:
        """The `hook` property's id; -1 when absent."""
        return -1 if self.hook is None else self.hook.value.data

    @property
    def attrs_list(self) -> tuple[str, ...]:
        return tuple(a.data for a in self.attrs.data)

    def verify_(self) -> None:
        for attr in self.attrs_list:
            if not attr.isidentifier():
                raise VerifyException(
                    f"'{self.name}' op attrs: {attr!r} is not an attribute name, expected "
                    'identifiers such as "__str__" or "shape"'
                )


@irdl_op_definition
class ProfileBeginOp(AgOperation):
    """Starts the timer of profiled node `node`.

    ```mlir
    ag.profile_begin {node = 0 : i64}
    ```
    """

    name = "ag.profile_begin"

    node = prop_def(IntegerAttr[I64])
    """The node's index in the function's profile."""

    assembly_format = "attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, node: int):
        super().__init__(properties={"node": IntegerAttr(node, i64)})

    @property
    def node_index(self) -> int:
        return self.node.value.data

    def verify_(self) -> None:
        if self.node_index < 0:
            raise VerifyException(f"'{self.name}' op node must be >= 0, got {self.node_index}")


@irdl_op_definition
class ProfileEndOp(AgOperation):
    """Stops the timer of profiled node `node`; its operands are the node's results,
    whose sizes the memory profile records.

    ```mlir
    ag.profile_end %s {node = 0 : i64} : tensor<?xf64>
    ```
    """

    name = "ag.profile_end"

    values = var_operand_def(TensorType)
    node = prop_def(IntegerAttr[I64])

    assembly_format = "$values attr-dict (`:` type($values)^)?"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, node: int, values: Sequence[SSAValue] = ()):
        super().__init__(operands=[values], properties={"node": IntegerAttr(node, i64)})

    @property
    def node_index(self) -> int:
        return self.node.value.data

    def verify_(self) -> None:
        if self.node_index < 0:
            raise VerifyException(f"'{self.name}' op node must be >= 0, got {self.node_index}")


DEBUG_OPS = (PrintOp, ProfileBeginOp, ProfileEndOp)
