"""`ag.print` in `ag-to-loops`: copy the operand, then call back into the runtime.

Importing this module registers the shape rule (the operand's shape) and the kernel of
`ag.print`; `declare_print_functions` adds the declarations of the callbacks a module
calls (`ag-to-loops` runs it at the end).

The kernel copies the operand into the result buffer, then calls
`@arignote_print_<element>_<rank>(%id : i64, %value : memref<?x..x<element>>)` with the
op's `callback` id (-1 when it has none) and the result cast to a fully dynamic shape;
after `convert-func-to-llvm` the memref travels as a pointer to its descriptor. Every
such symbol is the one runtime callback (`arignote.runtime.printing`), which formats the
value with NumPy. The call sits where the node runs: in a branch, only when it runs.

```mlir
%y = ag.print %x {message = "x", attrs = ["__str__"], callback = 3 : i64} : tensor<?xf64>
// becomes, after the copy loop into %out0:
%id = arith.constant 3 : i64
%v = memref.cast %out0 : memref<?xf64> to memref<?xf64>
func.call @arignote_print_f64_1(%id, %v) : (i64, memref<?xf64>) -> ()
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.ir import Attribute, Operation

from arignote.dialects import ag
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.ag_shapes import SHAPE_RULES, same_rule
from arignote.lowering.loops.loop_utils import Buffer, Calls, declare_called_functions

CALLBACK_PREFIX = "arignote_print_"
"""Every print callback symbol starts with this prefix (the runtime registers them)."""


def callback_name(element: Attribute, rank: int) -> str:
    """`arignote_print_f64_2`: the callback symbol for a value of that element and rank."""
    return f"{CALLBACK_PREFIX}{element}_{rank}"


def _dynamic(t: MemRefType) -> MemRefType:
    return MemRefType(t.get_element_type(), [DYNAMIC_INDEX] * t.get_num_dims())


def emit_print(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """The operand copied into `out`, then shown through the callback."""
    assert isinstance(op, ag.PrintOp)
    copy(b, ins[0], out)
    ident = -1 if op.callback is None else op.callback.value.data
    code = b.insert(arith.ConstantOp(IntegerAttr(ident, i64))).result
    t = out.type
    value = b.insert(memref.CastOp.get(out.memref, _dynamic(t))).dest
    name = callback_name(t.get_element_type(), t.get_num_dims())
    b.insert(func.CallOp(name, [code, value], []))


def declare_print_functions(module: ModuleOp, calls: Calls | None = None) -> None:
    """Adds `func.func private @arignote_print_...` for each callback called but not
    declared."""
    declare_called_functions(module, lambda name: name.startswith(CALLBACK_PREFIX), calls)


SHAPE_RULES[ag.PrintOp] = same_rule
KERNELS[ag.PrintOp] = emit_print
