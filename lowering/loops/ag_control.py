"""`ag-to-loops` for the control-flow ops: `ag.if` → `scf.if` (and `cf` branches in the
shape function).

`CONTROL_FLOW` maps a region-carrying `ag` op class to its lowering, which
`ag-to-loops` calls instead of a kernel: `shape(walker, op)` while it builds
`@f__shape` (the `ShapeWalker` of `ag_to_loops`: `walk(ops)`, `new_block`, `builder`,
`env`, `context`) and `compute(state, op)` while it builds `@f` (its `_ComputeState`:
`region_state`, `compute(ops)`, `builder`, `env`, `outputs`, `first_output`, `owned`).

**`@f__shape`.** Only the taken branch's checks may run: a branch that is not taken may
well fail them (that is what laziness is for). When both branches are free of checks
and give the same result dimensions for sure (static lengths, or the very same
dimension values), nothing depends on the condition and no IR is emitted. Otherwise the
condition is computed in the shape function (its operations are computed again there,
into temporaries, as for any value a shape rule reads), and the shape function
branches on it with `cf.cond_br`; each branch runs its own rules and checks and passes
its result dimensions to a merge block as block arguments. A condition that cannot be
computed there (it depends on the result of another control-flow op) with branches
that need it is a `NotImplementedError` at compile time.

**`@f`.** The condition is loaded and tested (nonzero, NaN included, is true) and
`scf.if` runs one region, whose kernels compute each yielded value directly into its
destination: the caller's output buffer when the `ag.if` result is returned, else a
buffer allocated in the region and yielded (with the dynamic dimensions, as `index`)
out of the `scf.if`; the enclosing function frees it after its last use. A yielded value
computed outside the region, yielded twice, or of a type with more static dimensions
than the result's is copied into the destination.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from xdsl.builder import Builder
from xdsl.dialects import arith, cf, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerType, MemRefType, TensorType
from xdsl.ir import Attribute, Block, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.loops.ag_kernels import KERNELS, copy
from arignote.lowering.loops.ag_scalar import constant
from arignote.lowering.loops.ag_shapes import (
    MULTI_VALUE_SHAPE_RULES,
    VALUE_SHAPE_RULES,
    op_label,
    result_dims,
)
from arignote.lowering.loops.loop_utils import Buffer, Dim, as_index, dynamic_sizes, load


class ControlFlowLowering(Protocol):
    """How `ag-to-loops` lowers one region-carrying op class."""

    def shape(self, walker: Any, op: Operation) -> None: ...

    def compute(self, state: Any, op: Operation) -> None: ...


def _buffer_type(t: Attribute) -> MemRefType:
    assert isinstance(t, TensorType)
    return MemRefType(t.element_type, t.get_shape())


def _static_shape(value: SSAValue) -> tuple[int, ...]:
    return ag.tensor_type(value).get_shape()


def _region_ops(region: Region) -> list[Operation]:
    """The ops of a single-block region, without its terminator."""
    return list(region.block.ops)[:-1]


def _yielded(region: Region) -> Sequence[SSAValue]:
    terminator = region.block.last_op
    assert isinstance(terminator, ag.YieldOp)
    return terminator.values


def truth(b: Builder, scalar: SSAValue) -> SSAValue:
    """An `i1` that is true when `scalar` is nonzero (NaN is nonzero, as in NumPy)."""
    t = scalar.type
    if isinstance(t, IntegerType) and t.width.data == 1:
        return scalar
    zero = constant(b, 0, t)
    if isinstance(t, IntegerType):
        return b.insert(arith.CmpiOp(scalar, zero, "ne")).result
    return b.insert(arith.CmpfOp(scalar, zero, "une")).result


def _same(a: Dim, b: Dim) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return a == b
    return a is b


# --- @f__shape -------------------------------------------------------------------------


def _static_dims(ops: Sequence[Operation], region: Region, env: dict) -> list | None:
    """The dimensions of a region's results when its ops have rules that only select
    operand dimensions and no checks (then they emit no IR); None otherwise."""
    local: dict[SSAValue, Sequence[Dim]] = {}
    for op in ops:
        if type(op) in CONTROL_FLOW or type(op) in VALUE_SHAPE_RULES | MULTI_VALUE_SHAPE_RULES:
            return None
        dims, checks = result_dims(op, [local[o] if o in local else env[o] for o in op.operands])
        if checks:
            return None
        local[op.results[0]] = dims
    return [local[v] if v in local else env[v] for v in _yielded(region)]


def _computable(value: SSAValue, context: Any) -> bool:
    """Whether the shape function can compute `value` (with the body's kernels)."""
    stack, seen = [value], set[SSAValue]()
    while stack:
        v = stack.pop()
        if v in seen or v in context.arguments:
            continue
        seen.add(v)
        if not isinstance(v, OpResult) or type(v.op) not in KERNELS:
            return False
        stack.extend(v.op.operands)
    return True


def _merged(op: ag.IfOp, branches: Sequence[list]) -> tuple[list[list[Dim | None]], list]:
    """The result dimensions both branches agree on (None elsewhere) and the (result,
    axis) positions that need a merge-block argument."""
    dims: list[list[Dim | None]] = []
    positions: list[tuple[int, int]] = []
    for j, result in enumerate(op.results):
        row: list[Dim | None] = []
        for k, static in enumerate(_static_shape(result)):
            candidates = [branch[j][k] for branch in branches]
            if static != ag.DYNAMIC:
                row.append(static)
            elif all(_same(candidates[0], c) for c in candidates[1:]):
                row.append(candidates[0])
            else:
                row.append(None)
                positions.append((j, k))
        dims.append(row)
    return dims, positions


def _shape_if(walker: Any, op: Operation) -> None:
    assert isinstance(op, ag.IfOp)
    regions = (op.then_region, op.else_region)
    static = [_static_dims(_region_ops(r), r, walker.env) for r in regions]
    if static[0] is not None and static[1] is not None:
        dims, positions = _merged(op, static)
        if not positions:  # same shapes, no checks: the condition is not needed
            for region in regions:
                walker.walk(_region_ops(region))
            for result, row in zip(op.results, dims, strict=True):
                walker.env[result] = row
            return
    if not _computable(op.condition, walker.context):
        raise NotImplementedError(
            f"ag-to-loops: cannot lower {op_label(op)}: its branches need different "
            "shape checks or result shapes, and its condition cannot be computed in the "
            "shape function (it depends on the result of a control-flow op)"
        )
    _branch_on_condition(walker, op)


def _branch_on_condition(walker: Any, op: ag.IfOp) -> None:
    """`cf.cond_br` on the condition to each branch's rules and checks, then a merge
    block taking the result dimensions that differ."""
    context = walker.context
    context.op = op
    condition = truth(walker.builder, context.scalar(0))
    context.release()
    blocks = [walker.new_block(), walker.new_block()]
    walker.builder.insert(cf.ConditionalBranchOp(condition, blocks[0], [], blocks[1], []))
    saved = dict(context.scalars)
    ends: list[tuple[Builder, list]] = []
    for block, region in zip(blocks, (op.then_region, op.else_region), strict=True):
        walker.builder = Builder(InsertPoint.at_end(block))
        walker.walk(_region_ops(region))
        ends.append((walker.builder, [walker.env[v] for v in _yielded(region)]))
        context.scalars = dict(saved)  # values loaded in a branch do not dominate
    dims, positions = _merged(op, [d for _, d in ends])
    merge = walker.new_block([IndexType()] * len(positions))
    for b, branch_dims in ends:
        args = [as_index(b, branch_dims[j][k]) for j, k in positions]
        b.insert(cf.BranchOp(merge, *args))
    for (j, k), arg in zip(positions, merge.args, strict=True):
        dims[j][k] = arg
    for result, row in zip(op.results, dims, strict=True):
        walker.env[result] = row
    walker.builder = Builder(InsertPoint.at_end(merge))


# --- @f ----------------------------------------------------------------------------------


def _compute_if(state: Any, op: Operation) -> None:
    assert isinstance(op, ag.IfOp)
    b = state.builder
    condition = truth(b, load(b, state.env[op.condition], []))
    outputs = {
        r: state.outputs[state.first_output[r]] for r in op.results if r in state.first_output
    }
    carried = [r for r in op.results if r not in outputs]
    dynamic = [
        (j, k)
        for j, r in enumerate(op.results)
        for k, s in enumerate(_static_shape(r))
        if s == ag.DYNAMIC
    ]
    regions = [
        _compute_region(state, op, region, outputs, carried, dynamic)
        for region in (op.then_region, op.else_region)
    ]
    types = [_buffer_type(r.type) for r in carried] + [IndexType()] * len(dynamic)
    if_op = b.insert(scf.IfOp(condition, types, *regions))
    memrefs = dict(zip(carried, if_op.results[: len(carried)], strict=True))
    lengths = dict(zip(dynamic, if_op.results[len(carried) :], strict=True))
    for j, result in enumerate(op.results):
        dims = tuple(
            lengths[(j, k)] if s == ag.DYNAMIC else s for k, s in enumerate(_static_shape(result))
        )
        state.env[result] = Buffer(outputs.get(result) or memrefs[result], dims)
        if result not in outputs:
            state.owned.add(result)


def _compute_region(
    state: Any,
    op: ag.IfOp,
    region: Region,
    outputs: dict[SSAValue, SSAValue],
    carried: Sequence[SSAValue],
    dynamic: Sequence[tuple[int, int]],
) -> Region:
    """One `scf.if` region: the branch's kernels, results in their destinations."""
    block = Block()
    rb = Builder(InsertPoint.at_end(block))
    ops = _region_ops(region)
    yielded = list(_yielded(region))
    defined = {r for o in ops for r in o.results}
    first: dict[SSAValue, int] = {}
    destinations: dict[SSAValue, SSAValue] = {}
    for j, (value, result) in enumerate(zip(yielded, op.results, strict=True)):
        if value in defined and value not in first and value.type == result.type:
            first[value] = j
            if result in outputs:
                destinations[value] = outputs[result]
    # computed here but only copied out (a type with more static dimensions than the
    # result's): kept alive past the ops' last use, freed after the copies
    copied = {v for v in yielded if v in defined and v not in first}
    escaping = {v for v in first if v not in destinations} | copied
    inner = state.region_state(rb, destinations, escaping)
    inner.compute(ops)
    buffers = [
        inner.env[value]
        if first.get(value) == j
        else _copied(rb, inner.env[value], result, outputs)
        for j, (value, result) in enumerate(zip(yielded, op.results, strict=True))
    ]
    for value in copied:
        rb.insert(memref.DeallocOp.get(inner.env[value].memref))
    by_result = dict(zip(op.results, buffers, strict=True))
    values = [by_result[r].memref for r in carried]
    values += [as_index(rb, buffers[j].dims[k]) for j, k in dynamic]
    rb.insert(scf.YieldOp(*values))
    return Region(block)


def _copied(
    b: Builder, source: Buffer, result: SSAValue, outputs: dict[SSAValue, SSAValue]
) -> Buffer:
    """`source` copied into the destination of `result` (its output, or a new buffer)."""
    if result in outputs:
        dest = Buffer(outputs[result], source.dims)
    else:
        t = _buffer_type(result.type)
        sizes = dynamic_sizes(b, t.get_shape(), source.dims)
        dest = Buffer(b.insert(memref.AllocOp(sizes, [], t)).memref, source.dims)
    copy(b, source, dest)
    return dest


class IfLowering:
    """`ag.if`: branches in `@f__shape`, `scf.if` in `@f` (see the module doc)."""

    def shape(self, walker: Any, op: Operation) -> None:
        _shape_if(walker, op)

    def compute(self, state: Any, op: Operation) -> None:
        _compute_if(state, op)


CONTROL_FLOW: dict[type[Operation], ControlFlowLowering] = {ag.IfOp: IfLowering()}
"""Region-carrying `ag` op class → its lowering in `ag-to-loops`."""
