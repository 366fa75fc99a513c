"""`gpu-kernels`: the loops of a compute function as GPU kernels, the rest as host code.

Runs after `ag-to-loops{parallel_min_work=1}` (every loop the kernels can split is an
`ag.parallel_for`) in place of `parallelize`. For each compute function `@f` (every
`func.func` with a body except the `<f>__shape` functions, which stay on the host and
read only shapes):

1. **Scalar forwarding.** A load of a rank-0 `memref.alloca` right after a store to it in
   the same block (nothing between them touching the slot) is the stored value: the
   scalars `ag-to-loops` passes through slots (a gemv's `alpha`, a length) stay on the
   host without a round trip through device memory.
2. **Device memory.** Every remaining `memref.alloca` outside a kernel becomes a
   `memref.alloc` freed before the end of its block: a kernel may write it, and a kernel
   cannot reach the host's stack. (Allocas inside a loop body are per-thread scratch and
   stay.)
3. **Serial kernels.** The host code may not touch device memory, so each run of
   consecutive host ops that does (a `memref.load`/`store`/`copy`, a loop nest of them: a
   reduction, a copy) together with the pure ops computed from them is wrapped in an
   `ag.parallel_for` over the single iteration `[0, 1)`: a kernel of one thread. A value
   such a run computes and the host needs afterwards (a loop bound, an `scf.if`
   condition, a BLAS scalar) is stored by the kernel into a one-element device buffer and
   copied back with `arignote_gpu_read(host, device, bytes)`.
4. **Outlining.** Every `ag.parallel_for` is outlined as `parallelize` does (its captured
   values travel in one context struct), but never inlined: the host calls
   `arignote_parallel_for(@f__par<k>, ctx, lower, upper, ...)`, which the GPU split
   (`arignote.lowering.gpu.split`) turns into a kernel launch.

Device allocations are not tracked by the host code (`arignote.alloc_status` is dropped:
its list of live buffers lives in their first bytes): the runtime reports a failed one.

Host ops that stay: shape arithmetic and memref metadata (`memref.dim`, strided
metadata, views), `memref.alloc`/`dealloc` (device allocations, see the split), control
flow whose regions launch kernels (a scan's loop, an `ifelse`), and the BLAS calls (run by
cuBLAS). Anything else the host would have to run on device memory (a Python callback,
`Print`, LAPACK, MPI) raises `GpuLoweringError` naming the op: the frontend then runs the
function on the CPU and says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.dialects import ag
from arignote.lowering.llvm.checked_alloc import ALLOC_STATUS
from arignote.lowering.llvm.llvm_utils import PTR, declare_external, element_byte_size
from arignote.lowering.llvm.parallelize import PARALLEL_FOR, PARALLEL_FOR_INPUTS, _Outliner
from arignote.lowering.loops.ag_scalar import LIBM_FUNCTIONS
from arignote.lowering.loops.parallel_loops import SOURCE_ATTRIBUTE

GPU_READ = "arignote_gpu_read"
"""`arignote_gpu_read(host: ptr, device: ptr, bytes: i64)`: a copy from device memory."""

STRIDED_KERNELS = "arignote.gpu_strided_kernels"
"""On the module after `gpu-kernels`: the tasks whose loop steps by their `part` argument
(`_stride_by_part`): their entry calls them once per thread."""

KERNEL_SOURCES = "arignote.gpu_kernel_sources"
"""On the module after `gpu-kernels`: each kernel's task → where it came from (the op whose
loop it is, `parallel_loops.SOURCE_ATTRIBUTE`, or the ops of a one-thread kernel)."""

HOST_CALL_PREFIXES = ("scipy_cblas_",)
"""Calls the host may make with device pointers: BLAS, which the GPU runtime serves with
cuBLAS."""

KERNEL_CALLS = frozenset(LIBM_FUNCTIONS)
"""Calls a kernel may make (math functions the device library provides)."""

SHAPE_SUFFIX = "__shape"

_VIEW_OPS = (
    memref.DimOp,
    memref.ExtractStridedMetaDataOp,
    memref.ExtractAlignedPointerAsIndexOp,
    memref.SubviewOp,
    memref.ReinterpretCastOp,
    memref.CastOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
)
"""Ops on a memref's descriptor only (they never read or write its elements)."""

_MEMORY_OPS = (memref.LoadOp, memref.StoreOp, memref.CopyOp, memref.AtomicRMWOp)


class GpuLoweringError(NotImplementedError):
    """The function uses something the GPU target cannot run (named in the message)."""


def _callee(op: Operation) -> str | None:
    if isinstance(op, func.CallOp):
        return op.callee.root_reference.data
    if isinstance(op, llvm.CallOp):
        return op.callee.root_reference.data if op.callee is not None else "<indirect>"
    return None


def _describe(op: Operation) -> str:
    callee = _callee(op)
    return f"{op.name} @{callee}" if callee else op.name


def _is_host_call(op: Operation) -> bool:
    callee = _callee(op)
    return callee is not None and callee.startswith(HOST_CALL_PREFIXES)


def _device_region(op: Operation) -> bool:
    """Whether `op` (with regions) can run as a whole inside one kernel."""
    for inner in op.walk():
        if inner is op:
            continue
        if isinstance(inner, ag.ParallelForOp | ag.ParallelWidthOp):
            return False
        if isinstance(inner, memref.AllocOp | memref.DeallocOp):
            return False
        callee = _callee(inner)
        if callee is not None and callee not in KERNEL_CALLS:
            return False
    return True


def _touches_memory(op: Operation) -> bool:
    return isinstance(op, _MEMORY_OPS)


def _pure(op: Operation) -> bool:
    """An op the host may run: no regions, no memory access, no call."""
    if op.regions or _touches_memory(op) or _callee(op) is not None:
        return False
    if isinstance(op, memref.AllocOp | memref.AllocaOp | memref.DeallocOp):
        return False
    return op.dialect_name() in ("arith", "math", "index", "llvm") or isinstance(op, _VIEW_OPS)


# --- 1. scalar forwarding ---------------------------------------------------------------


def _forward_scalars(block: Block) -> None:
    """Loads of rank-0 allocas that follow a store to the same slot in `block` take the
    stored value (see the module doc); recursively in nested blocks."""
    stored: dict[SSAValue, SSAValue] = {}
    for op in list(block.ops):
        if isinstance(op, memref.StoreOp) and _rank0_alloca(op.memref):
            stored[op.memref] = op.value
            continue
        if isinstance(op, memref.LoadOp) and op.memref in stored:
            op.res.replace_all_uses_with(stored[op.memref])
            Rewriter.erase_op(op)
            continue
        for region in op.regions:
            for inner in region.blocks:
                _forward_scalars(inner)
        # anything else that uses a slot (or may write through it) ends what we know
        for operand in op.operands:
            stored.pop(operand, None)
        if op.regions:
            for inner in op.walk():
                for operand in inner.operands:
                    stored.pop(operand, None)


def _rank0_alloca(value: SSAValue) -> bool:
    t = value.type
    return (
        isinstance(value.owner, memref.AllocaOp) and isinstance(t, MemRefType) and not t.shape.data
    )


# --- 2. device memory -------------------------------------------------------------------


def _allocas_to_device(block: Block) -> None:
    """The host-level allocas of `block` (and of nested host blocks) as allocations
    freed before the block's terminator."""
    for op in list(block.ops):
        if isinstance(op, ag.ParallelForOp):
            continue  # a kernel's own scratch
        if isinstance(op, memref.AllocaOp):
            if not op.memref.uses:
                Rewriter.erase_op(op)
                continue
            alloc = memref.AllocOp(list(op.dynamic_sizes), [], op.memref.type)
            Rewriter.replace_op(op, alloc)
            terminator = block.last_op
            assert terminator is not None
            Rewriter.insert_op(memref.DeallocOp.get(alloc.memref), InsertPoint.before(terminator))
            continue
        if op.regions and not _device_region(op):
            for region in op.regions:
                for inner in region.blocks:
                    _allocas_to_device(inner)


# --- 3. serial kernels ------------------------------------------------------------------


def _group_host_block(block: Block, f: func.FuncOp) -> None:
    """Wrap the runs of device work in `block` as one-thread kernels (see the module
    doc); recurse into the regions of host control flow. Host ops that meet a run without
    taking its values do not end it: pure ones move in front of the kernel, frees after
    it."""
    group: list[Operation] = []
    produced: set[SSAValue] = set()
    before: list[Operation] = []
    after: list[Operation] = []

    def close() -> None:
        nonlocal group, produced, before, after
        if group:
            _wrap(group, before, after, f)
        group, produced, before, after = [], set(), [], []

    for op in list(block.ops):
        if _joins(op, produced):
            group.append(op)
            produced.update(op.results)
        elif group and _pure(op):
            before.append(op)
        elif group and isinstance(op, memref.DeallocOp):
            after.append(op)
        else:
            close()
            _host_op(op, f)
    close()


def _joins(op: Operation, produced: set[SSAValue]) -> bool:
    """Whether `op` runs in the current serial kernel (`produced`: its values)."""
    if isinstance(op, ag.ParallelForOp):
        return False
    if _touches_memory(op) or (op.regions and _device_region(op)):
        return True
    return _pure(op) and any(v in produced for v in op.operands)


def _host_op(op: Operation, f: func.FuncOp) -> None:
    """Check that the host may run `op`; group the blocks of host control flow."""
    if isinstance(op, ag.ParallelWidthOp):
        raise GpuLoweringError(
            f"{op.name}: a loop with per-part scratch (the CPU's row kernels) has no GPU form"
        )
    if isinstance(op, ag.ParallelForOp):
        return
    if op.regions:
        for region in op.regions:
            for inner in region.blocks:
                _group_host_block(inner, f)
        return
    if _pure(op) or isinstance(op, memref.AllocOp | memref.DeallocOp) or _is_host_call(op):
        return
    if isinstance(op, func.ReturnOp | scf.YieldOp | scf.ConditionOp | ag.YieldOp):
        return
    raise GpuLoweringError(f"{_describe(op)} would run on the host with device memory")


def _constant(value: int, before: Operation) -> SSAValue:
    op = arith.ConstantOp.from_int_and_width(value, IndexType())
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op.result


def _pointer(value: SSAValue, ops: list[Operation]) -> SSAValue:
    """The aligned data pointer of the memref `value`, as `!llvm.ptr`."""
    index = memref.ExtractAlignedPointerAsIndexOp.get(value)
    as_i64 = arith.IndexCastOp(index.aligned_pointer, i64)
    ptr = llvm.IntToPtrOp(as_i64.result)
    ops += [index, as_i64, ptr]
    return ptr.results[0]


def _escaping(group: Sequence[Operation]) -> list[tuple[SSAValue, list[tuple[Operation, int]]]]:
    """The values `group` computes that ops outside it use, with those uses."""
    inside = set()
    for op in group:
        inside.update(id(inner) for inner in op.walk())
    escaping = []
    for op in group:
        for result in op.results:
            uses = [(u.operation, u.index) for u in result.uses if id(u.operation) not in inside]
            if uses:
                escaping.append((result, uses))
    return escaping


def _read_back(
    value: SSAValue, slot: SSAValue, uses: list[tuple[Operation, int]], after: Operation
) -> Operation:
    """After `after`: copy the device `slot` (holding `value`) to a host slot, load it
    for `uses`, free `slot`; the last op inserted."""
    ops: list[Operation] = []
    stored_type = _stored_type(value.type)
    host = memref.AllocaOp.get(stored_type, shape=[])
    ops.append(host)
    try:
        bytes_ = element_byte_size(stored_type)
    except NotImplementedError as e:
        raise GpuLoweringError(f"the host needs a {value.type} the device computes: {e}") from e
    size = arith.ConstantOp.from_int_and_width(bytes_, i64)
    ops.append(size)
    call = func.CallOp(GPU_READ, [_pointer(host.memref, ops), _pointer(slot, ops), size.result], [])
    load = memref.LoadOp.get(host.memref, [])
    ops += [call, load]
    result = load.res
    if stored_type != value.type:
        cast = arith.IndexCastOp(result, value.type)
        ops.append(cast)
        result = cast.result
    free = memref.DeallocOp.get(slot)
    ops.append(free)
    Rewriter.insert_op(ops, InsertPoint.after(after))
    for user, index in uses:
        user.operands[index] = result
    return free


def _stored_type(t: Attribute) -> Attribute:
    """How a value of type `t` is kept in memory between a kernel and the host."""
    return i64 if isinstance(t, IndexType) else t


def _wrap(
    group: Sequence[Operation],
    before: Sequence[Operation],
    after_group: Sequence[Operation],
    f: func.FuncOp,
) -> None:
    """`group` (ops of one block, in order) as a one-thread `ag.parallel_for`; the
    values it computes that later ops use come back through device buffers. The host
    ops `before` (pure, interleaved with the group) move in front of it, the frees
    `after_group` behind it."""
    escaping = _escaping(group)
    first = group[0]
    for op in before:
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(first))
    zero, one = _constant(0, first), _constant(1, first)
    slots: list[SSAValue] = []
    for value, _ in escaping:
        slot = memref.AllocOp([], [], MemRefType(_stored_type(value.type), []))
        Rewriter.insert_op(slot, InsertPoint.before(first))
        slots.append(slot.memref)
    body = ag.ParallelForOp.body_block()
    loop = ag.ParallelForOp(zero, one, one, 1, Region(body))
    names = ", ".join(dict.fromkeys(op.name for op in group))
    loop.attributes[SOURCE_ATTRIBUTE] = StringAttr(f"one thread: {names}")
    Rewriter.insert_op(loop, InsertPoint.before(first))
    for op in group:
        op.detach()
        body.add_op(op)
    for (value, _), slot in zip(escaping, slots, strict=True):
        stored = value
        if _stored_type(value.type) != value.type:  # memrefs of index have no LLVM form here
            cast = arith.IndexCastOp(value, _stored_type(value.type))
            body.add_op(cast)
            stored = cast.result
        body.add_op(memref.StoreOp.get(stored, slot, []))
    body.add_op(ag.YieldOp())
    after: Operation = loop
    for slot, (value, uses) in zip(slots, escaping, strict=True):
        after = _read_back(value, slot, uses, after)
    for op in after_group:
        op.detach()
        Rewriter.insert_op(op, InsertPoint.after(after))
        after = op
    if escaping:
        _declare_read(f)


def _declare_read(f: func.FuncOp) -> None:
    module = f.parent_op()
    assert isinstance(module, ModuleOp)
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == GPU_READ:
            return
    decl = func.FuncOp.external(GPU_READ, [PTR, PTR, i64], [])
    module.body.block.add_op(decl)


# --- the pass ----------------------------------------------------------------------------


def compute_functions(module: ModuleOp) -> Iterable[func.FuncOp]:
    """The functions the GPU target splits: every defined function but shape functions."""
    for op in list(module.ops):
        if isinstance(op, func.FuncOp) and op.body.blocks:
            if not op.sym_name.data.endswith(SHAPE_SUFFIX):
                yield op


def gpu_kernels(module: ModuleOp) -> None:
    """The `gpu-kernels` pass on `module` (see the module doc)."""
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    defined = {
        op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks
    }
    used = False
    labels: dict[str, Attribute] = {}
    strided: list[StringAttr] = []
    for f in compute_functions(module):
        for op in f.walk():
            if isinstance(op, func.CallOp) and _callee(op) in defined:
                raise GpuLoweringError(f"{_describe(op)}: a call of a compiled function")
        if len(f.body.blocks) != 1:
            raise GpuLoweringError(f"@{f.sym_name.data} has several blocks")
        # Device allocations are not tracked in a list inside the blocks (the host cannot
        # write device memory): a failed one is reported by the runtime, which launches
        # nothing more in the call and raises MemoryError when it returns.
        f.attributes.pop(ALLOC_STATUS, None)
        block = f.body.block
        _forward_scalars(block)
        _allocas_to_device(block)
        _group_host_block(block, f)
        used = _outline(f, module, taken, labels, strided) or used
    if used:
        declare_external(module, PARALLEL_FOR, PARALLEL_FOR_INPUTS, i64)
    if labels:
        module.attributes[KERNEL_SOURCES] = DictionaryAttr(labels)
    if strided:
        module.attributes[STRIDED_KERNELS] = ArrayAttr(strided)


def _outline(
    f: func.FuncOp,
    module: ModuleOp,
    taken: set[str],
    labels: dict[str, Attribute],
    strided: list[StringAttr],
) -> bool:
    """Outline every `ag.parallel_for` of `f` (never inlined: each is a kernel), noting
    each task's source and whether it strides; whether there was any."""
    outliner = _Outliner(f, module, taken)
    found = False
    for inner in list(f.walk()):
        if isinstance(inner, ag.ParallelForOp) and inner.parent is not None:
            source = inner.attributes.get(SOURCE_ATTRIBUTE)
            is_strided = _stride_by_part(inner)
            task = outliner.outline(inner)
            labels[task] = StringAttr(source.data if isinstance(source, StringAttr) else "?")
            if is_strided:
                strided.append(StringAttr(task))
            found = True
    return found


def _stride_by_part(loop: ag.ParallelForOp) -> bool:
    """When `loop`'s body is one `scf.for %i = %begin to %end step 1` (what the kernels
    emit) and does not use `%part`: that loop's step becomes `%part`, so that the GPU
    entry can run the whole task once per thread, from its first index with the grid's
    stride (one call: the loop's iterations see the body's `noalias` pointers, and LLVM
    can overlap their loads); returns whether it did (`STRIDED_KERNELS`)."""
    block = loop.body.block
    begin, end, part = block.args
    if part.uses:
        return False
    body = [op for op in block.ops if not isinstance(op, arith.ConstantOp | ag.YieldOp)]
    if len(body) != 1 or not isinstance(body[0], scf.ForOp):
        return False
    nest = body[0]
    step = nest.step.owner
    if nest.lb is not begin or nest.ub is not end or nest.iter_args:
        return False
    if not (isinstance(step, arith.ConstantOp) and isinstance(step.value, IntegerAttr)):
        return False
    if step.value.value.data != 1:
        return False
    nest.operands[2] = part
    return True


def shape_reads(module: ModuleOp) -> dict[str, tuple[int, ...]]:
    """For each shape function (loops over memrefs), the arguments whose elements it
    loads (a shape computed from a tensor's values): the GPU runtime passes it host
    copies of those, and device arrays (whose data the host cannot read) for the rest."""
    reads: dict[str, tuple[int, ...]] = {}
    for f in module.ops:
        if not (isinstance(f, func.FuncOp) and f.sym_name.data.endswith(SHAPE_SUFFIX)):
            continue
        if not f.body.blocks:
            continue
        args = f.body.blocks[0].args
        found: set[int] = set()
        for op in f.walk():
            if isinstance(op, memref.LoadOp | memref.CopyOp):
                source = op.memref if isinstance(op, memref.LoadOp) else op.source
                for root in _roots(source):
                    if root in args:
                        found.add(args.index(root))
        reads[f.sym_name.data] = tuple(sorted(found))
    return reads


def _roots(value: SSAValue) -> list[SSAValue]:
    """The values `value` is a view of (through view ops), itself included."""
    seen, stack = [], [value]
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.append(v)
        owner = v.owner
        if isinstance(owner, Operation) and isinstance(owner, _VIEW_OPS + (arith.SelectOp,)):
            stack.extend(o for o in owner.operands if isinstance(o.type, MemRefType))
    return seen


class GpuKernelsPass(ModulePass):
    """The GPU target's loops: kernels (outlined tasks) and host code around them."""

    name = "gpu-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        gpu_kernels(op)
