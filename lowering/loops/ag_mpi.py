"""`ag.allreduce` in `ag-to-loops`: a call of the MPI library from native code.

Importing this module registers the shape rule (the operand's shape) and the kernel of
`ag.allreduce`; `declare_mpi_functions` adds what a module calls (`ag-to-loops` runs it
at the end): the declarations of the MPI functions, of `clock_gettime` and of the error
callback, and the definition of `@arignote_mpi_allreduce`.

The kernel copies the operand into the result buffer (unless `inplace` made the
operand's buffer the result's: a dead intermediate, as the concatenated gradients of
`distributed.average_gradients`) and calls
`@arignote_mpi_allreduce(%buffer : !llvm.ptr, %count : i32, %datatype : i32, %timeout_ns :
i64) -> i32` on it; a non-zero status goes to `@arignote_mpi_error(%status : i64,
%timeout_ms : i64)` (the runtime turns it into a `DistributedError`, see
`arignote.runtime.mpi`). For `mean`, the sum is then divided by `MPI_Comm_size`.

`@arignote_mpi_allreduce` starts `MPI_Iallreduce` in place (`MPI_IN_PLACE`, `MPI_SUM`,
`MPI_COMM_WORLD`) and polls `MPI_Test` (after `SPIN_NS` of spinning, with a
`sched_yield` between tests, so that processes outnumbering the cores still progress)
until the collective completes (status 0), MPI
fails (its error code) or `timeout_ns` passes (status -1; 0 waits forever): a process
that died or hangs then fails the others with a message instead of deadlocking them. It
is a `func.func` of `cf` blocks (a polling loop with three exits; `scf.while` has no
lowering to `cf` here).

The MPI handles and datatypes are MPICH's `mpi.h` constants, from xDSL's
`MpiLibraryInfo` and its type translation (`xdsl.transforms.lower_mpi`, whose `lower-mpi`
pass lowers the `mpi` dialect with them but only for static shapes and blocking calls);
the runtime checks them against the library mpi4py loaded.

```mlir
%y = ag.allreduce %x {reduction = "sum", timeout_ms = 1000 : i64} : tensor<?xf64>
// becomes, after the copy loop into %out0 (%p its data pointer, %n its length):
%dt = arith.constant 1275070475 : i32
%t = arith.constant 1000000000 : i64
%status = func.call @arignote_mpi_allreduce(%p, %n, %dt, %t) : (!llvm.ptr, i32, i32, i64) -> i32
scf.if %failed { func.call @arignote_mpi_error(%status64, %ms) : (i64, i64) -> () }
```
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, cf, func, llvm, memref, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from arignote.dialects import ag
from arignote.lowering.loops.ag_kernels import KERNELS, copy, elementwise
from arignote.lowering.loops.ag_shapes import SHAPE_RULES, same_rule
from arignote.lowering.loops.loop_utils import (
    Buffer,
    Calls,
    as_index,
    declare_called_functions,
    first_calls,
)

if TYPE_CHECKING:
    from xdsl.transforms.lower_mpi import MpiLibraryInfo


@cache
def info() -> MpiLibraryInfo:
    """MPICH's handles (xDSL's table of them; its module, with xDSL's `mpi` dialect, is
    imported at the first function that communicates, not at every first compile)."""
    from xdsl.transforms.lower_mpi import MpiLibraryInfo

    return MpiLibraryInfo()


ALLREDUCE = "arignote_mpi_allreduce"
"""The helper the kernel calls (defined in the module by `declare_mpi_functions`)."""

ERROR_CALLBACK = "arignote_mpi_error"
"""The runtime's error callback (`arignote.runtime.mpi.SYMBOL`)."""

CLOCK = "clock_gettime"
YIELD = "sched_yield"
SPIN_NS = 50_000
"""How long the polling loop spins before it yields the core at each test (ns)."""
CLOCK_MONOTONIC = 1
PTR = llvm.LLVMPointerType()
_MPI_FUNCTIONS = ("MPI_Iallreduce", "MPI_Test", "MPI_Comm_size")


def _constant(b: Builder, value: int, t: Attribute) -> SSAValue:
    return b.insert(arith.ConstantOp(IntegerAttr(value, t))).result


def _int_pointer(b: Builder, value: int) -> SSAValue:
    """A magic pointer value (`MPI_IN_PLACE`, `MPI_STATUS_IGNORE`)."""
    return b.insert(llvm.IntToPtrOp(_constant(b, value, i64))).results[0]


def datatype(element: Attribute) -> int:
    """The MPI datatype handle of an element type (xDSL's translation)."""
    from xdsl.transforms.lower_mpi import LowerMpiAllreduce

    return LowerMpiAllreduce(info())._translate_to_mpi_type(element)  # pyright: ignore


def _data_pointer(b: Builder, out: Buffer) -> SSAValue:
    """The address of the first element of the dense result buffer (a view's offset
    included) as `!llvm.ptr`."""
    base = b.insert(memref.ExtractAlignedPointerAsIndexOp.get(out.memref)).aligned_pointer
    offset = b.insert(memref.ExtractStridedMetaDataOp(out.memref)).offset
    size = b.insert(arith.ConstantOp.from_int_and_width(out.element_type.bitwidth // 8, 64))
    size_index = b.insert(arith.IndexCastOp(size, base.type)).result
    delta = b.insert(arith.MuliOp(offset, size_index)).result
    address = b.insert(arith.AddiOp(base, delta)).result
    as_i64 = b.insert(arith.IndexCastOp(address, i64)).result
    return b.insert(llvm.IntToPtrOp(as_i64)).results[0]


def _count(b: Builder, out: Buffer) -> SSAValue:
    """The number of elements (i32, MPI's count)."""
    total = as_index(b, 1)
    for dim in out.dims:
        total = b.insert(arith.MuliOp(total, as_index(b, dim))).result
    return b.insert(arith.IndexCastOp(total, i32)).result


def _report(b: Builder, status: SSAValue, timeout_ms: int) -> None:
    """Calls the error callback when `status` is not 0."""
    failed = b.insert(arith.CmpiOp(status, _constant(b, 0, i32), "ne")).result
    block = Block()
    inner = Builder(InsertPoint.at_end(block))
    code = inner.insert(arith.ExtSIOp(status, i64)).result
    inner.insert(func.CallOp(ERROR_CALLBACK, [code, _constant(inner, timeout_ms, i64)], []))
    inner.insert(scf.YieldOp())
    b.insert(scf.IfOp(failed, [], Region(block)))


def _divide_by_size(b: Builder, out: Buffer) -> None:
    """`out /= MPI_Comm_size(MPI_COMM_WORLD)`."""
    slot = b.insert(llvm.AllocaOp(_constant(b, 1, i64), i32, 4)).res
    b.insert(func.CallOp("MPI_Comm_size", [_constant(b, info().MPI_COMM_WORLD, i32), slot], [i32]))
    size = b.insert(llvm.LoadOp(slot, i32)).dereferenced_value
    as_float = b.insert(arith.SIToFPOp(size, out.element_type)).result
    elementwise(b, out, [out], lambda inner, v: inner.insert(arith.DivfOp(v[0], as_float)).result)


def emit_allreduce(b: Builder, op: Operation, out: Buffer, ins: Sequence[Buffer]) -> None:
    """The operand copied into `out`, then reduced in place across the processes."""
    assert isinstance(op, ag.AllreduceOp)
    if out.memref is not ins[0].memref:  # (the `inplace` pass may give it the operand's)
        copy(b, ins[0], out)
    timeout_ms = op.timeout_ms.value.data
    arguments = [
        _data_pointer(b, out),
        _count(b, out),
        _constant(b, datatype(out.element_type), i32),
        _constant(b, timeout_ms * 1_000_000, i64),
    ]
    status = b.insert(func.CallOp(ALLREDUCE, arguments, [i32])).res[0]
    _report(b, status, timeout_ms)
    if op.reduction.data == "mean":
        _divide_by_size(b, out)


# --- the helper: start the collective, poll it with a deadline ----------------------------


def _clock_ns(b: Builder, spec: SSAValue) -> SSAValue:
    """The monotonic clock in nanoseconds, through the `timespec` at `spec`."""
    b.insert(func.CallOp(CLOCK, [_constant(b, CLOCK_MONOTONIC, i32), spec], [i32]))
    seconds_at = b.insert(llvm.GEPOp(spec, [0], i64)).result
    nanos_at = b.insert(llvm.GEPOp(spec, [1], i64)).result
    seconds = b.insert(llvm.LoadOp(seconds_at, i64)).dereferenced_value
    nanos = b.insert(llvm.LoadOp(nanos_at, i64)).dereferenced_value
    scaled = b.insert(arith.MuliOp(seconds, _constant(b, 1_000_000_000, i64))).result
    return b.insert(arith.AddiOp(scaled, nanos)).result


def _start(b: Builder, args: Sequence[SSAValue], request: SSAValue) -> SSAValue:
    """`MPI_Iallreduce(MPI_IN_PLACE, buffer, count, datatype, MPI_SUM, MPI_COMM_WORLD,
    request)`; its status."""
    buffer, count, dtype = args[0], args[1], args[2]
    operands = [
        _int_pointer(b, info().MPI_IN_PLACE),
        buffer,
        count,
        dtype,
        _constant(b, info().MPI_SUM, i32),
        _constant(b, info().MPI_COMM_WORLD, i32),
        request,
    ]
    return b.insert(func.CallOp("MPI_Iallreduce", operands, [i32])).res[0]


def _allreduce_helper() -> func.FuncOp:
    """`@arignote_mpi_allreduce` (module doc): entry → poll → check → timing →
    spinning (→ yielding) → poll ..., each test leaving for `leave` with the status."""
    entry, poll, check, timing = Block(arg_types=[PTR, i32, i32, i64]), Block(), Block(), Block()
    spinning, yielding = Block(), Block()
    leave = Block(arg_types=[i32])
    b = Builder(InsertPoint.at_end(entry))
    one = _constant(b, 1, i64)
    request = b.insert(llvm.AllocaOp(one, i32, 4)).res
    flag = b.insert(llvm.AllocaOp(one, i32, 4)).res
    spec = b.insert(llvm.AllocaOp(one, llvm.LLVMArrayType(2, i64), 8)).res
    start = _clock_ns(b, spec)
    status = _start(b, entry.args, request)
    zero = _constant(b, 0, i32)
    started = b.insert(arith.CmpiOp(status, zero, "eq")).result
    b.insert(cf.ConditionalBranchOp(started, poll, [], leave, [status]))

    b = Builder(InsertPoint.at_end(poll))
    ignore = _int_pointer(b, info().MPI_STATUS_IGNORE)
    tested = b.insert(func.CallOp("MPI_Test", [request, flag, ignore], [i32])).res[0]
    failed = b.insert(arith.CmpiOp(tested, zero, "ne")).result
    b.insert(cf.ConditionalBranchOp(failed, leave, [tested], check, []))

    b = Builder(InsertPoint.at_end(check))
    done = b.insert(arith.CmpiOp(b.insert(llvm.LoadOp(flag, i32)).dereferenced_value, zero, "ne"))
    b.insert(cf.ConditionalBranchOp(done.result, leave, [zero], timing, []))

    b = Builder(InsertPoint.at_end(timing))
    timeout = entry.args[3]
    elapsed = b.insert(arith.SubiOp(_clock_ns(b, spec), start)).result
    limited = b.insert(arith.CmpiOp(timeout, _constant(b, 0, i64), "sgt")).result
    late = b.insert(arith.CmpiOp(elapsed, timeout, "sgt")).result
    expired = b.insert(arith.AndIOp(limited, late)).result
    b.insert(cf.ConditionalBranchOp(expired, leave, [_constant(b, -1, i32)], spinning, []))

    # spin first (the others usually arrive within microseconds), then yield the core
    # at each test so that processes outnumbering the cores still progress
    b = Builder(InsertPoint.at_end(spinning))
    patient = b.insert(arith.CmpiOp(elapsed, _constant(b, SPIN_NS, i64), "sgt")).result
    b.insert(cf.ConditionalBranchOp(patient, yielding, [], poll, []))
    b = Builder(InsertPoint.at_end(yielding))
    b.insert(func.CallOp(YIELD, [], [i32]))
    b.insert(cf.BranchOp(poll))

    Builder(InsertPoint.at_end(leave)).insert(func.ReturnOp(leave.args[0]))
    body = Region([entry, poll, check, timing, spinning, yielding, leave])
    return func.FuncOp(ALLREDUCE, ((PTR, i32, i32, i64), (i32,)), body, visibility="private")


def declare_mpi_functions(module: ModuleOp, calls: Calls | None = None) -> None:
    """Adds `@arignote_mpi_allreduce` when the module calls it, and the declarations of
    the MPI functions, `clock_gettime` and the error callback it calls (`calls`: the
    module's `loop_utils.first_calls`, when the caller has them)."""
    defined = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    if calls is None:
        calls = first_calls(module)
    if ALLREDUCE not in defined and ALLREDUCE in calls:
        helper = _allreduce_helper()
        module.body.block.add_op(helper)
        calls = first_calls(helper, dict(calls))  # (the module's last op: its calls last)
    wanted = {*_MPI_FUNCTIONS, CLOCK, YIELD, ERROR_CALLBACK}
    declare_called_functions(module, lambda name: name in wanted, calls)


SHAPE_RULES[ag.AllreduceOp] = same_rule
KERNELS[ag.AllreduceOp] = emit_allreduce
