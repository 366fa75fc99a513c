"""Per-node timers for profiled functions: the `profile-timers` pass and the lowering of
`ag.profile_begin` / `ag.profile_end` in `ag-to-loops`.

`profile-timers` (run only when a function is profiled, after the graph pipeline)
numbers the nodes of each tensor function — its top-level ops but `ag.constant`, in
order, as `f.maker.fgraph.toposort()` lists them — and brackets node `k`:

```mlir
// before                                    // after
%s = ag.add %x, %y : ...                    ag.profile_begin {node = 0 : i64}
                                            %s = ag.add %x, %y : ...
                                            ag.profile_end %s {node = 0 : i64} : tensor<?xf64>
```

`ag-to-loops` then lowers the pair (see `lowering.statements`) into reads of the
monotonic clock (`clock_gettime(CLOCK_MONOTONIC)` from libc, on a stack `timespec`)
around the node's loops, accumulating into the function's counters, the global
`@f__profile : !llvm.array<3N x i64>` that `declare_profile_counters` adds: for node
`k`, `[3k]` += the nanoseconds it ran, `[3k+1]` += 1, `[3k+2]` = max(itself, the bytes
of the node's results). The runtime reads the global through the JIT's global address
(`arignote.runtime.profiler`). A function without timer ops gets no global, no clock
declaration and the same code as before.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from arignote.dialects import ag
from arignote.lowering.loops.loop_utils import as_index
from arignote.lowering.loops.statements import STATEMENTS, StatementState

COUNTERS_SUFFIX = "__profile"
"""The counters of `@f` are the global `@f__profile`."""

COUNTERS_PER_NODE = 3
"""Nanoseconds, runs and bytes of results, per node."""

CLOCK_FUNCTION = "clock_gettime"
CLOCK_MONOTONIC = 1
"""Linux's `CLOCK_MONOTONIC` clock id."""

PTR = llvm.LLVMPointerType()


# --- the pass ------------------------------------------------------------------------------


def profiled_nodes(f: func.FuncOp) -> list[Operation]:
    """The nodes of `f` that `profile-timers` brackets, in order: its top-level ops
    but constants, the terminator and timer ops."""
    skipped = (ag.ConstantOp, ag.ProfileBeginOp, ag.ProfileEndOp, func.ReturnOp)
    return [op for op in f.body.ops if not isinstance(op, skipped)]


def _is_tensor_function(f: func.FuncOp) -> bool:
    ft = f.function_type
    return not f.is_declaration and any(
        isinstance(t, TensorType) for t in (*ft.inputs, *ft.outputs)
    )


def insert_timers(f: func.FuncOp) -> int:
    """Brackets each node of `f` with timer ops; returns the number of nodes."""
    if any(isinstance(op, ag.ProfileBeginOp) for op in f.body.ops):
        raise PassFailedException(f"profile-timers: @{f.sym_name.data} already has timers")
    nodes = profiled_nodes(f)
    for index, op in enumerate(nodes):
        Rewriter.insert_op(ag.ProfileBeginOp(index), InsertPoint.before(op))
        Rewriter.insert_op(ag.ProfileEndOp(index, list(op.results)), InsertPoint.after(op))
    return len(nodes)


@dataclass(frozen=True)
class ProfileTimersPass(ModulePass):
    """Brackets every node of each tensor function with `ag.profile_begin/end`."""

    name = "profile-timers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for f in op.ops:
            if isinstance(f, func.FuncOp) and _is_tensor_function(f):
                insert_timers(f)


# --- declarations ----------------------------------------------------------------------------


def _node_count(f: func.FuncOp) -> int:
    nodes = [op.node_index for op in f.walk() if isinstance(op, ag.ProfileBeginOp)]
    return max(nodes) + 1 if nodes else 0


def counters_global(name: str, n_nodes: int) -> llvm.GlobalOp:
    """`@<name>__profile`: zero-initialised `3 * n_nodes` i64 counters with `common`
    linkage (visible outside the module), so the JIT keeps every update and gives its
    address."""
    size = COUNTERS_PER_NODE * n_nodes
    zeros = DenseIntOrFPElementsAttr.from_list(TensorType(i64, [size]), [0] * size)
    array = llvm.LLVMArrayType(size, i64)
    return llvm.GlobalOp(array, name + COUNTERS_SUFFIX, "common", value=zeros, alignment=8)


def declare_profile_counters(module: ModuleOp) -> None:
    """Adds the counters global of each tensor function with timer ops (before
    `ag-to-loops` replaces it), and the `clock_gettime` declaration if any."""
    added = False
    for f in list(module.ops):
        if not isinstance(f, func.FuncOp) or f.is_declaration:
            continue
        n_nodes = _node_count(f)
        if n_nodes:
            module.body.block.add_op(counters_global(f.sym_name.data, n_nodes))
            added = True
    declared = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    if added and CLOCK_FUNCTION not in declared:
        module.body.block.add_op(func.FuncOp.external(CLOCK_FUNCTION, [i32, PTR], [i32]))


# --- lowering the timer ops --------------------------------------------------------------------


def _i64(b: Builder, value: int) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, i64))).result


def _timespec(b: Builder, state: StatementState) -> SSAValue:
    """One stack `timespec` (two i64) per function, allocated at its first use."""
    key = (CLOCK_FUNCTION, "timespec")
    if key not in state.values:
        one = _i64(b, 1)
        struct = llvm.LLVMArrayType(2, i64)
        state.values[key] = b.insert(llvm.AllocaOp(one, struct, 8)).res
    return state.values[key]


def _slot(b: Builder, pointer: SSAValue, index: int) -> SSAValue:
    return b.insert(llvm.GEPOp(pointer, [index], i64)).result


def read_clock(b: Builder, state: StatementState) -> SSAValue:
    """The monotonic clock in nanoseconds (i64)."""
    spec = _timespec(b, state)
    clock = b.insert(arith.ConstantOp(IntegerAttr(CLOCK_MONOTONIC, i32))).result
    b.insert(func.CallOp(CLOCK_FUNCTION, [clock, spec], [i32]))
    seconds = b.insert(llvm.LoadOp(_slot(b, spec, 0), i64)).dereferenced_value
    nanoseconds = b.insert(llvm.LoadOp(_slot(b, spec, 1), i64)).dereferenced_value
    scaled = b.insert(arith.MuliOp(seconds, _i64(b, 1_000_000_000))).result
    return b.insert(arith.AddiOp(scaled, nanoseconds)).result


def _counter(b: Builder, state: StatementState, node: int, field: int) -> SSAValue:
    base = b.insert(llvm.AddressOfOp(state.function + COUNTERS_SUFFIX, PTR)).result
    return _slot(b, base, COUNTERS_PER_NODE * node + field)


def _update(b: Builder, pointer: SSAValue, combine: type[Operation], value: SSAValue) -> None:
    old = b.insert(llvm.LoadOp(pointer, i64)).dereferenced_value
    new = b.insert(combine(old, value)).results[0]
    b.insert(llvm.StoreOp(new, pointer))


def _bytes(b: Builder, state: StatementState, values: tuple[SSAValue, ...]) -> SSAValue:
    """The total size in bytes of the buffers of `values` (i64)."""
    total = _i64(b, 0)
    for value in values:
        buffer = state.env[value]
        itemsize = max(1, buffer.element_type.bitwidth // 8)  # i1 is stored as i8
        size = _i64(b, itemsize)
        for dim in buffer.dims:
            length = b.insert(arith.IndexCastOp(as_index(b, dim), i64)).result
            size = b.insert(arith.MuliOp(size, length)).result
        total = b.insert(arith.AddiOp(total, size)).result
    return total


def emit_begin(b: Builder, op: Operation, state: StatementState) -> None:
    """`ag.profile_begin`: read the clock; `ag.profile_end` uses the reading."""
    assert isinstance(op, ag.ProfileBeginOp)
    state.values[("start", op.node_index)] = read_clock(b, state)


def emit_end(b: Builder, op: Operation, state: StatementState) -> None:
    """`ag.profile_end`: add the elapsed time and one run, and keep the largest size of
    the node's results."""
    assert isinstance(op, ag.ProfileEndOp)
    node = op.node_index
    start = state.values.pop(("start", node), None)
    if start is None:
        raise PassFailedException(
            f"ag-to-loops: ag.profile_end of node {node} without a profile_begin"
        )
    elapsed = b.insert(arith.SubiOp(read_clock(b, state), start)).result
    _update(b, _counter(b, state, node, 0), arith.AddiOp, elapsed)
    _update(b, _counter(b, state, node, 1), arith.AddiOp, _i64(b, 1))
    size = _bytes(b, state, tuple(op.values))
    _update(b, _counter(b, state, node, 2), arith.MaxSIOp, size)


STATEMENTS.update({ag.ProfileBeginOp: emit_begin, ag.ProfileEndOp: emit_end})
