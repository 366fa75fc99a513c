"""The GPU split: an `llvm`-dialect module after `gpu-kernels` as host code and kernels.

`split(module, symbol)` takes the module `to-gpu` produced (the shared LLVM lowering of
the output of `gpu-kernels`) and returns

* the **host module**: the shape functions as they are, and the compute functions with
  - each `llvm.call @arignote_parallel_for(@f__par<k>, %ctx, %lower, %upper, ...)`
    replaced by `llvm.call @<symbol>__gpu_launch(k, %ctx, <bytes of the context>,
    %lower, %upper)`; that launcher (`GpuModules.launcher_ir()`, linked into the host
    module) takes kernel k's handle from the table `@<symbol>__gpu_kernels` (filled by
    the runtime when it loads the PTX) and calls the runtime's `arignote_gpu_launch`,
    which launches `[lower, upper)` with `lower`, `upper` and the context struct (the
    fields of the captured values) as the kernel's parameters;
  - `malloc`/`free` replaced by `arignote_gpu_malloc`/`arignote_gpu_free` (device
    memory);
  - the BLAS calls `scipy_cblas_<x>` replaced by `arignote_gpu_cblas_<x>` (same
    arguments, served by cuBLAS: the `GpuGemm`/`GpuGemv` of the profile);
  and verified never to load or store through a pointer into device memory
  (`verify_host_memory`);
* the **device module**: the outlined tasks `@f__par<k>` and the functions they call,
  with `fmod`/`fmodf` as libdevice's `__nv_fmod`/`__nv_fmodf`;
* the **kernels**: per launch index, its task and the size of its context.

`entry_ir(kernel)` is the LLVM IR of a kernel's entry point: `@<task>__kernel(i64 lower,
i64 upper, ptr byval([n x i8]) ctx)`, a grid-stride loop over `[lower, upper)` that runs
the task on one iteration at a time (`@task(i, i + 1, 0, ctx)`), with the thread index
from NVVM's special registers (n: the context's bytes, at least 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from arignote.lowering.gpu.kernels import (
    GPU_READ,
    KERNEL_SOURCES,
    SHAPE_SUFFIX,
    STRIDED_KERNELS,
    GpuLoweringError,
)
from arignote.lowering.llvm.checked_alloc import GLUE_HELPERS
from arignote.lowering.llvm.llvm_utils import PTR, constant, declare_external
from arignote.lowering.llvm.parallelize import OUTLINED_SUFFIX, PARALLEL_FOR, context_bytes

GPU_LAUNCH = "arignote_gpu_launch"
GPU_MALLOC = "arignote_gpu_malloc"
GPU_FREE = "arignote_gpu_free"
GPU_BLAS_PREFIX = "arignote_gpu_cblas_"
KERNEL_SUFFIX = "__kernel"
TABLE_SUFFIX = "__gpu_kernels"
LAUNCH_SUFFIX = "__gpu_launch"

UNROLL = 4
"""The grid-stride loop of a kernel entry is unrolled this many times: each thread has that
many independent iterations (loads) in flight, which memory-bound kernels need to
approach the device's bandwidth."""

DEVICE_FUNCTIONS = {"fmodf": "__nv_fmodf", "fmod": "__nv_fmod"}
"""C functions a kernel may call → their libdevice names."""


@dataclass(frozen=True)
class Kernel:
    """One launch site's kernel: `task(begin, end, part, ctx)` and its context size."""

    task: str
    context_bytes: int
    source: str = "?"
    """What it computes: the op whose loop it is, with its node label (for profiles)."""
    strided: bool = False
    """Whether the task's loop steps by its `part` argument (`gpu-kernels`): the entry
    calls it once per thread, `task(lower + thread, upper, grid threads, ctx)`."""

    @property
    def entry(self) -> str:
        return self.task + KERNEL_SUFFIX


@dataclass
class GpuModules:
    host: ModuleOp
    device: ModuleOp
    kernels: list[Kernel]
    """By launch index (the first operand of `<symbol>__gpu_launch`)."""
    symbol: str
    uses_blas: bool

    @property
    def table(self) -> str:
        """The host's kernel table: a `CUfunction` per launch index, filled at load."""
        return self.symbol + TABLE_SUFFIX

    def launcher_ir(self) -> str:
        """The LLVM IR linked into the host module: the kernel table and
        `@<symbol>__gpu_launch(k, ctx, bytes, lower, upper)`, which launches entry k
        through the runtime's `arignote_gpu_launch(kernel, ctx, bytes, lower, upper)`."""
        n = max(1, len(self.kernels))
        return f"""
@{self.table} = global [{n} x ptr] zeroinitializer
declare i64 @{GPU_LAUNCH}(ptr, ptr, i64, i64, i64)
define i64 @{self.symbol}{LAUNCH_SUFFIX}(i64 %k, ptr %ctx, i64 %bytes, i64 %lower, i64 %upper) {{
  %slot = getelementptr [{n} x ptr], ptr @{self.table}, i64 0, i64 %k
  %kernel = load ptr, ptr %slot
  %r = call i64 @{GPU_LAUNCH}(ptr %kernel, ptr %ctx, i64 %bytes, i64 %lower, i64 %upper)
  ret i64 %r
}}
"""


def _callee(op: Operation) -> str | None:
    if isinstance(op, llvm.CallOp) and op.callee is not None:
        return op.callee.root_reference.data
    return None


def _rename(call: llvm.CallOp, name: str) -> None:
    call.properties["callee"] = SymbolRefAttr(name)


def split(module: ModuleOp, symbol: str = "module") -> GpuModules:
    """Host module, device module and kernels of `module` (see the module doc); `module`
    itself becomes the host module. `symbol` names the host's kernel table and launcher
    (`<symbol>__gpu_kernels`, `<symbol>__gpu_launch`)."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)}
    kernels: list[Kernel] = []
    blas: dict[str, llvm.FuncOp] = {}
    launch = _Launcher(module, symbol + LAUNCH_SUFFIX)
    for name, f in functions.items():
        # the shape functions and the allocation helpers they call (`GLUE_HELPERS`: the
        # compute functions' allocations are not tracked) work in host memory
        host_memory = name.endswith(SHAPE_SUFFIX) or name in GLUE_HELPERS
        if f.body.blocks and OUTLINED_SUFFIX not in name and not host_memory:
            _rewrite_host(f, functions, kernels, blas, launch)
            verify_host_memory(f)
    device = ModuleOp([])
    for name in sorted(_device_functions([k.task for k in kernels], functions, device)):
        f = functions[name]
        f.detach()
        device.body.block.add_op(f)
    _finish_host(module, blas, launch.name)
    return GpuModules(module, device, kernels, symbol, bool(blas))


_POINTER_FIELDS = (0, 1)
"""The allocated and aligned data pointers of a memref descriptor struct."""

_CARRIERS = (
    llvm.GEPOp,
    llvm.PtrToIntOp,
    llvm.IntToPtrOp,
    llvm.SelectOp,
    llvm.AddOp,
    llvm.SubOp,
    llvm.AndOp,
    llvm.OrOp,
    llvm.InsertValueOp,
)
"""Ops whose result addresses device memory when an operand does."""


def verify_host_memory(f: llvm.FuncOp) -> None:
    """Raise `GpuLoweringError` when the host function `f` loads or stores through a
    pointer into device memory (its memref data pointers, device allocations and what
    is computed from them): the host cannot touch device memory, so such code would
    fault on a GPU (the CPU emulation would not notice)."""
    device: set[SSAValue] = set()
    changed = True
    while changed:
        changed = False
        for op in f.walk():
            new = _device_results(op, device)
            if new - device:
                device |= new
                changed = True
    for op in f.walk():
        address = op.ptr if isinstance(op, llvm.LoadOp | llvm.StoreOp) else None
        if address is not None and address in device:
            verb = "reads" if isinstance(op, llvm.LoadOp) else "writes"
            raise GpuLoweringError(
                f"@{f.sym_name.data}: the host code {verb} device memory ({op.name}); "
                "only kernels may touch it"
            )


def _device_results(op: Operation, device: set[SSAValue]) -> set[SSAValue]:
    """The values `op` defines that address (or carry an address of) device memory."""
    if _callee(op) == GPU_MALLOC:
        return set(op.results)
    if isinstance(op, llvm.LoadOp) and isinstance(op.dereferenced_value.type, llvm.LLVMStructType):
        return {op.dereferenced_value}  # a memref descriptor (the host's own memory)
    if isinstance(op, llvm.ExtractValueOp):
        position = op.position.get_values()
        if op.container in device and (len(position) == 1 and position[0] in _POINTER_FIELDS):
            return {op.res}
        return set()
    if isinstance(op, _CARRIERS) and any(v in device for v in op.operands):
        return set(op.results)
    found: set[SSAValue] = set()
    for k, successor in enumerate(op.successors):  # branch operands → block arguments
        for value, arg in zip(_branch_operands(op, k), successor.args, strict=False):
            if value in device:
                found.add(arg)
    return found


def _branch_operands(op: Operation, k: int) -> Sequence[SSAValue]:
    if isinstance(op, llvm.BrOp):
        return op.arguments
    if isinstance(op, llvm.CondBrOp):
        return op.then_arguments if k == 0 else op.else_arguments
    return ()


def _rewrite_host(
    f: llvm.FuncOp,
    functions: dict[str, llvm.FuncOp],
    kernels: list[Kernel],
    blas: dict[str, llvm.FuncOp],
    launch: _Launcher,
) -> None:
    """Launches, device allocations and cuBLAS calls in the host function `f`."""
    for op in list(f.walk()):
        callee = _callee(op)
        if callee is None:
            continue
        assert isinstance(op, llvm.CallOp)
        if callee == PARALLEL_FOR:
            kernels.append(launch(op, len(kernels)))
        elif callee in ("malloc", "free"):
            _rename(op, GPU_MALLOC if callee == "malloc" else GPU_FREE)
        elif callee in GLUE_HELPERS:  # a buffer it allocates would be device memory
            raise GpuLoweringError(
                f"@{f.sym_name.data}: the host code writes device memory (@{callee} keeps "
                "the tracked buffers on a list in their first bytes); only kernels may touch it"
            )
        elif callee.startswith("scipy_cblas_"):
            new = GPU_BLAS_PREFIX + callee.removeprefix("scipy_cblas_")
            blas[new] = functions[callee]
            _rename(op, new)
        elif not (callee in functions and functions[callee].body.blocks) and callee != GPU_READ:
            raise GpuLoweringError(f"the host code calls @{callee}, which has no GPU form")


def _device_functions(
    tasks: list[str], functions: dict[str, llvm.FuncOp], device: ModuleOp
) -> set[str]:
    """The tasks and the functions they call (libdevice's declared in `device`)."""
    moved: set[str] = set()
    pending = list(tasks)
    while pending:
        name = pending.pop()
        if name in moved:
            continue
        moved.add(name)
        for op in functions[name].walk():
            callee = _callee(op)
            if callee is None:
                continue
            assert isinstance(op, llvm.CallOp)
            if callee in DEVICE_FUNCTIONS:
                _rename(op, DEVICE_FUNCTIONS[callee])
                _declare_like(device, DEVICE_FUNCTIONS[callee], functions[callee])
            elif callee in functions and functions[callee].body.blocks:
                pending.append(callee)
            else:
                raise GpuLoweringError(f"a kernel calls @{callee}, which the GPU does not have")
    return moved


def _declare_like(module: ModuleOp, name: str, like: llvm.FuncOp) -> None:
    function_type = like.function_type
    declare_external(module, name, list(function_type.inputs.data), function_type.output)


class _Launcher:
    """Replaces the pool calls of a module by launches through `name`, the host's
    launcher; knows each task's source and striding from `gpu-kernels`' attributes."""

    def __init__(self, module: ModuleOp, name: str):
        self.name = name
        sources = module.attributes.get(KERNEL_SOURCES)
        self.sources = sources.data if isinstance(sources, DictionaryAttr) else {}
        marked = module.attributes.get(STRIDED_KERNELS)
        self.strided = {s.data for s in marked.data} if isinstance(marked, ArrayAttr) else set()

    def __call__(self, call: llvm.CallOp, index: int) -> Kernel:
        """Replace the pool call `call` by launch `index`; its kernel."""
        function, ctx, lower, upper = call.args[:4]
        address = function.owner
        if not isinstance(address, llvm.AddressOfOp):
            raise GpuLoweringError("a parallel loop's task is not a known function")
        task = address.global_name.root_reference.data
        slot = ctx.owner
        if not isinstance(slot, llvm.AllocaOp) or not isinstance(
            slot.elem_type, llvm.LLVMStructType
        ):
            raise GpuLoweringError(f"the context of @{task} is not a stack slot")
        size = context_bytes(slot.elem_type)
        ops: list[Operation] = []
        k, n = constant(index, i64, ops), constant(size, i64, ops)
        ops.append(llvm.CallOp(self.name, k, ctx, n, lower, upper, return_type=i64))
        Rewriter.insert_op(ops, InsertPoint.before(call))
        Rewriter.erase_op(call)
        if not address.results[0].uses:
            Rewriter.erase_op(address)
        source = self.sources.get(task)
        label = source.data if isinstance(source, StringAttr) else "?"
        return Kernel(task, size, label, task in self.strided)


def _finish_host(module: ModuleOp, blas: dict[str, llvm.FuncOp], launcher: str) -> None:
    for op in list(module.ops):
        if isinstance(op, llvm.FuncOp) and op.sym_name.data in (PARALLEL_FOR,):
            Rewriter.erase_op(op)
    declare_external(module, launcher, [i64, PTR, i64, i64, i64], i64)
    declare_external(module, GPU_MALLOC, [i64], PTR)
    declare_external(module, GPU_FREE, [PTR])
    for name, like in blas.items():
        _declare_like(module, name, like)


def _entry_head(kernel: Kernel) -> str:
    """An entry point's signature and its first block up to `%start` (this thread's
    first index) and `%stride` (the grid's thread count)."""
    size = max(1, kernel.context_bytes)
    sreg = "call i32 @llvm.nvvm.read.ptx.sreg"
    return f"""
define ptx_kernel void @{kernel.entry}(i64 %lower, i64 %upper,
                                  ptr byval([{size} x i8]) align 8 %ctx) {{
entry:
  %tid = {sreg}.tid.x()
  %ntid = {sreg}.ntid.x()
  %ctaid = {sreg}.ctaid.x()
  %nctaid = {sreg}.nctaid.x()
  %first = mul i32 %ctaid, %ntid
  %thread = add i32 %first, %tid
  %thread64 = zext i32 %thread to i64
  %ntid64 = zext i32 %ntid to i64
  %nctaid64 = zext i32 %nctaid to i64
  %stride = mul i64 %ntid64, %nctaid64
  %start = add i64 %lower, %thread64"""


def entry_ir(kernel: Kernel) -> str:
    """The LLVM IR of `kernel`'s entry point (see the module doc). The grid-stride loop
    runs `UNROLL` iterations a trip while they all fit (each thread has that many
    independent loads in flight), then the rest one by one; a strided task is called
    once per thread and strides itself."""
    head = _entry_head(kernel)
    if kernel.strided:
        return f"""{head}
  call void @{kernel.task}(i64 %start, i64 %upper, i64 %stride, ptr %ctx)
  ret void
}}
"""
    task = f"call void @{kernel.task}"
    offsets = "\n".join(f"  %i{k} = add nuw nsw i64 %i, %stride{k}" for k in range(1, UNROLL))
    calls = "\n".join(
        f"  %e{k} = add nuw nsw i64 %i{k}, 1\n  {task}(i64 %i{k}, i64 %e{k}, i64 0, ptr %ctx)"
        for k in range(1, UNROLL)
    )
    multiples = "\n".join(f"  %stride{k} = mul i64 %stride, {k}" for k in range(1, UNROLL + 1))
    return f"""{head}
{multiples}
  br label %check
check:
  %i = phi i64 [ %start, %entry ], [ %next, %body ]
  %last = add i64 %i, %stride{UNROLL - 1}
  %whole = icmp slt i64 %last, %upper
  br i1 %whole, label %body, label %rest
body:
{offsets}
  %e0 = add nuw nsw i64 %i, 1
  {task}(i64 %i, i64 %e0, i64 0, ptr %ctx)
{calls}
  %next = add i64 %i, %stride{UNROLL}
  br label %check
rest:
  %j = phi i64 [ %i, %check ], [ %j1, %one ]
  %more = icmp slt i64 %j, %upper
  br i1 %more, label %one, label %done
one:
  %f = add nuw nsw i64 %j, 1
  {task}(i64 %j, i64 %f, i64 0, ptr %ctx)
  %j1 = add i64 %j, %stride
  br label %rest
done:
  ret void
}}
"""


SPECIAL_REGISTERS = """
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
"""
