"""Ops that `ag-to-loops` lowers to a view of an operand's memory instead of a copy.

A basic `ag.subtensor` (slices and integer indices, Theano's `Subtensor`, whose
`view_map` is `{0: [0]}`) selects `first + i * step` along each sliced axis and one row
along each indexed one: that is a strided view of its input, a `memref.subview` with
the slice's first index as offset, its length as size and its step as stride (a
negative step included: `x[::-1]` starts at the last row with stride `-1`). Integer
indices are the dropped (rank-reducing) leading axes of the subview:

```mlir
// %r = ag.subtensor %x[] {kinds = [0, 0], steps = [-1, none], ...}   (x[::-1])
%r = memref.subview %x[%n_minus_1, 0] [%n, %m] [-1, 1]
    : memref<?x?xf32, strided<[?, ?], offset: ?>> to memref<?x?xf32, strided<[?, ?], offset: ?>>
```

`VIEWS` maps an op class to its rule: `rule(builder, op, operands)` returns the view
`Buffer`, or None when the op's selection is no view that `memref.subview` lowers
(`convert-memref-to-llvm` drops leading axes only, so an integer index after a slice,
`x[:, 0]`, is copied). `ag-to-loops` (`_ComputeState.view`) decides when a view may be
used at all: never for a returned value (outputs are fresh arrays: never aliased to an
argument or to another output, as Theano copies a view at the function's boundary) nor
for a region's result; it keeps the viewed buffer alive while any view of it is, and
never lets an op overwrite it (`ag.destroy_map`) while a view of it is live or is another
operand of that op. The reference interpreter copies (numpy's indexing, then `.copy()`):
no one can tell, since views are never written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr
from xdsl.ir import Operation

from arignote.dialects import ag
from arignote.lowering.loops import ag_indexing
from arignote.lowering.loops.ag_indexing import _read_dynamic, subtensor_geometry
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.loop_utils import Buffer

ViewRule = Callable[[Builder, Operation, Sequence[Buffer]], Buffer | None]


def view_type(op: Operation, source: MemRefType) -> MemRefType:
    """The memref type of a view computing `op`'s result: its static shape, any strides
    and offset."""
    t = ag.tensor_type(op.results[0])
    layout = StridedLayoutAttr([None] * t.get_num_dims(), None)
    return MemRefType(source.get_element_type(), t.get_shape(), layout)


def _leading_indices(op: ag.SubtensorOp) -> int | None:
    """How many leading axes `op` indexes with an integer; None when an integer index
    follows a slice."""
    kinds = [kind for kind, *_ in op.entries()]
    leading = 0
    while leading < len(kinds) and kinds[leading] == ag.INDEX:
        leading += 1
    return None if ag.INDEX in kinds[leading:] else leading


def subtensor_view(b: Builder, op: Operation, ins: Sequence[Buffer]) -> Buffer | None:
    """`x[first + i * step, ...]` as a `memref.subview` of `x` (see the module doc)."""
    assert isinstance(op, ag.SubtensorOp)
    if _leading_indices(op) is None:
        return None
    x = ins[0]
    accesses, _ = subtensor_geometry(b, op, x.dims, _read_dynamic(b, ins, 1))
    view = memref.SubviewOp.get(
        x.memref,
        [a.first for a in accesses],
        [1 if a.length is None else a.length for a in accesses],
        [1 if a.length is None else a.step for a in accesses],
        view_type(op, x.type),
    )
    b.insert(view)
    dims = tuple(a.length for a in accesses if a.length is not None)
    return Buffer(view.result, dims)


def emit_subtensor(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """The kernel of `ag.subtensor` where it is computed (a returned value, a scan body):
    a copy of the view, whose loop nest takes the flat fast path when the view is
    contiguous at run time (`x[1:]`, `h[-1]`); else `ag_indexing`'s gather loop."""
    view = subtensor_view(b, op, ins)
    if view is None:
        ag_indexing.emit_subtensor(b, op, out, ins)
    else:
        copy(b, view, out)


VIEWS: dict[type[Operation], ViewRule] = {ag.SubtensorOp: subtensor_view}
"""`ag` op class → its view rule (see the module doc)."""

KERNELS[ag.SubtensorOp] = emit_subtensor
