"""`ag.python_op` in `ag-to-loops`: calls back into Python for this op alone.

Importing this module registers the shape rule and the kernel of `ag.python_op`;
`declare_pyop_functions` adds the declarations of the callbacks a module calls
(`ag-to-loops` runs it at the end). The callbacks are described in
`arignote.runtime.pyops`; every memref travels cast to a fully dynamic strided type
(after `convert-func-to-llvm`, as a pointer to its descriptor).

The result shapes are known only once the Python code has run, so the code runs in
`@f__shape`, where the shape rule computes the operands (as for any rule reading
values), calls `@arignote_pyop_run_*`, which keeps the outputs, and loads the result
dimensions it wrote. In `@f` the rule reads the dimensions of the kept outputs again
(`@arignote_pyop_dims`) and the kernel copies them into the result buffers
(`@arignote_pyop_fetch_*`). Within an `ag.if`, the rule runs only in the branch taken
(an `ag.python_op` makes the branches' shapes depend on values). In the body of an
`ag.scan`, whose shapes are computed once before the loop, the op cannot be lowered:
`NoNativeScanError` sends the function to the interpreter.

```mlir
%y = ag.python_op %x {callback = 3 : i64, label = "DoubleOp"} : (tensor<?xf64>) -> (tensor<?xf64>)
// in @f__shape:
%d = memref.alloc() : memref<1xi64>
func.call @arignote_pyop_run_2_f64x1(%id, %x_dyn, %d_dyn)
%n = memref.load %d[%c0] : memref<1xi64>
// in @f:
func.call @arignote_pyop_dims(%id, %d_dyn)
...
func.call @arignote_pyop_fetch_1_f64x1(%id, %out_dyn)
```
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from arignote.dialects import ag
from arignote.lowering.loops.ag_kernels import MULTI_KERNELS
from arignote.lowering.loops.ag_shapes import (
    MULTI_RESULT_VALUE_SHAPE_RULES,
    Check,
    ShapeContext,
)
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Calls,
    Dim,
    declare_called_functions,
    index_constant,
)

CALLBACK_PREFIX = "arignote_pyop_"
"""Every custom-op callback symbol starts with this prefix (the runtime registers them)."""

_DIMS_TYPE = MemRefType(i64, [DYNAMIC_INDEX])


def _dynamic(t: Attribute) -> MemRefType:
    """`t` with every length, stride and the offset dynamic (any memref casts to it)."""
    assert isinstance(t, MemRefType)
    rank = t.get_num_dims()
    layout = StridedLayoutAttr([None] * rank, None)
    return MemRefType(t.get_element_type(), [DYNAMIC_INDEX] * rank, layout)


def _signature(types: Sequence[Attribute]) -> str:
    parts = []
    for t in types:
        assert isinstance(t, MemRefType)
        parts.append(f"{t.get_element_type()}x{t.get_num_dims()}")
    return "_".join(parts)


def callback_name(kind: str, types: Sequence[Attribute]) -> str:
    """`arignote_pyop_run_2_f64x1_i64x1`: the `kind` callback taking memrefs of `types`."""
    sig = _signature(types)
    return f"{CALLBACK_PREFIX}{kind}_{len(types)}" + (f"_{sig}" if sig else "")


def _cast(b: Builder, value: SSAValue) -> SSAValue:
    return b.insert(memref.CastOp.get(value, _dynamic(value.type))).dest


def _ident(b: Builder, op: ag.PythonOp) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(op.callback_id, i64))).result


def _check_not_in_scan(op: ag.PythonOp) -> None:
    """A scan computes its body's shapes once, before the loop: see the module doc."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, ag.ScanOp):
            from arignote.lowering.loops.ag_scan import NoNativeScanError

            raise NoNativeScanError(
                f"ag-to-loops: the custom op {op.label.data} in the body of ag.scan has "
                "result shapes known only once it has run; such a scan runs with the "
                "reference interpreter",
                parent,
            )
        parent = parent.parent_op()


def python_op_rule(
    op: Operation, dims: Sequence[Sequence[Dim]], context: ShapeContext
) -> tuple[list[list[Dim]], list[Check]]:
    """Runs the op (`@f__shape`) or reads the shapes of its kept outputs (`@f`), then
    loads the result dimensions."""
    assert isinstance(op, ag.PythonOp)
    _check_not_in_scan(op)
    b = context.builder
    ranks = [ag.tensor_type(r).get_num_dims() for r in op.results]
    total = sum(ranks)
    buffer = b.insert(memref.AllocOp([], [], MemRefType(i64, [max(total, 1)]))).memref
    cast = b.insert(memref.CastOp.get(buffer, _DIMS_TYPE)).dest
    if context.emit_checks:
        ins = [_cast(b, context.buffer(k).memref) for k in range(len(op.operands))]
        name = callback_name("run", [*(v.type for v in ins), _DIMS_TYPE])
        b.insert(func.CallOp(name, [_ident(b, op), *ins, cast], []))
    else:
        b.insert(func.CallOp(f"{CALLBACK_PREFIX}dims", [_ident(b, op), cast], []))
    values: list[Dim] = []
    for k in range(total):
        word = b.insert(memref.LoadOp.get(buffer, [index_constant(b, k)])).res
        values.append(b.insert(arith.IndexCastOp(word, IndexType())).result)
    b.insert(memref.DeallocOp.get(buffer))
    result: list[list[Dim]] = []
    for rank in ranks:
        result.append(values[:rank])
        values = values[rank:]
    return result, []


def emit_python_op(
    b: Builder, op: Operation, outs: Sequence[Buffer], ins: Sequence[Buffer]
) -> None:
    """Copies the kept outputs into the result buffers `outs`."""
    assert isinstance(op, ag.PythonOp)
    values = [_cast(b, out.memref) for out in outs]
    name = callback_name("fetch", [v.type for v in values])
    b.insert(func.CallOp(name, [_ident(b, op), *values], []))


def declare_pyop_functions(module: ModuleOp, calls: Calls | None = None) -> None:
    """Adds `func.func private @arignote_pyop_...` for each callback called but not
    declared."""
    declare_called_functions(module, lambda name: name.startswith(CALLBACK_PREFIX), calls)


MULTI_RESULT_VALUE_SHAPE_RULES[ag.PythonOp] = python_op_rule
MULTI_KERNELS[ag.PythonOp] = emit_python_op
